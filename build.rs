//! What `bmhctl version` says of the build: the git commit of the source (`unknown` when it
//! is not a git checkout, e.g. a packaged source) and the build date (SOURCE_DATE_EPOCH's when
//! set, for a reproducible build; else now).

use std::path::Path;
use std::process::Command;

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!(
        "cargo:rustc-env=BMHCTL_GIT_COMMIT={}",
        commit(Path::new(&root))
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let date = build_date(std::env::var("SOURCE_DATE_EPOCH").ok().as_deref(), now);
    println!("cargo:rustc-env=BMHCTL_BUILD_DATE={date}");
}

/// The commit checked out at `root`, `unknown` when `root` is not the top of a git checkout.
pub fn commit(root: &Path) -> String {
    git(root, &["rev-parse", "--show-toplevel"])
        // Only this source's own checkout: a packaged source unpacked inside another repository
        // is not that repository's commit.
        .filter(|top| same_dir(Path::new(top), root))
        .and_then(|_| {
            // A new commit or checkout runs this again.
            let rerun = |p: &Path| println!("cargo:rerun-if-changed={}", root.join(p).display());
            if let Some(head) = git(root, &["rev-parse", "--git-path", "HEAD"]) {
                rerun(Path::new(&head));
            }
            // The branch checked out (not every ref: other branches' commits change nothing).
            if let Some(branch) = git(root, &["symbolic-ref", "-q", "HEAD"]) {
                for file in [branch.as_str(), "packed-refs"] {
                    if let Some(p) = git(root, &["rev-parse", "--git-path", file]) {
                        rerun(Path::new(&p));
                    }
                }
            }
            git(root, &["rev-parse", "HEAD"])
        })
        .unwrap_or_else(|| "unknown".into())
}

/// SOURCE_DATE_EPOCH's time when it is a number of seconds, else `now`'s.
pub fn build_date(source_date_epoch: Option<&str>, now: i64) -> String {
    let epoch = source_date_epoch
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or(now);
    rfc3339(epoch)
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (no date crate in a build script).
fn rfc3339(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

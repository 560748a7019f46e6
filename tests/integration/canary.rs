//! The BMC passwords of these tests are canaries: no output, log, bookkeeping file, event,
//! status or error of bmhctl may hold one, in clear or in base64. Every run through the
//! [`Lab`](crate::lab::Lab) is checked ([`assert_clean_run`]); `secrets_canary.rs` runs every
//! command at trace level.

use std::path::Path;

/// The password of [`crate::lab::secret`].
pub const PASSWORD: &str = "Pw-Canary-5309";
/// [`PASSWORD`] in base64, as a Secret's `data` holds it.
pub const PASSWORD_B64: &str = "UHctQ2FuYXJ5LTUzMDk=";
/// Another canary, for Secrets written with `stringData`.
pub const STRING_PASSWORD: &str = "Pw-String-Canary-7731";
/// [`STRING_PASSWORD`] in base64.
pub const STRING_PASSWORD_B64: &str = "UHctU3RyaW5nLUNhbmFyeS03NzMx";

/// The password of the lab's Redfish emulator and of every lab test's BMC Secret
/// (`scripts/test.sh` starts the emulator with it).
pub const LAB_PASSWORD: &str = "Pw-Lab-Canary-2718";
/// [`LAB_PASSWORD`] in base64.
pub const LAB_PASSWORD_B64: &str = "UHctTGFiLUNhbmFyeS0yNzE4";

const ALL: [&str; 6] = [
    PASSWORD,
    PASSWORD_B64,
    STRING_PASSWORD,
    STRING_PASSWORD_B64,
    LAB_PASSWORD,
    LAB_PASSWORD_B64,
];

/// The Redfish emulator's password: `SUSHY_PASSWORD` when a lab was started with another.
pub fn lab_password() -> String {
    std::env::var("SUSHY_PASSWORD")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| LAB_PASSWORD.to_string())
}

/// Panics naming `what` when `text` holds a canary.
#[track_caller]
pub fn assert_clean(what: &str, text: &str) {
    if let Some(c) = ALL.iter().find(|c| text.contains(*c)) {
        panic!("a BMC password ({c}) in {what}:\n{text}");
    }
}

/// The output of a run of `bmhctl args`, and what it left in `dir`: its bookkeeping
/// (`.bmhctl/`), events, leases, result files and every `status:` block of a YAML file.
/// `export` prints Secrets on purpose (its output is for a metal3 cluster): its stdout is not
/// checked.
#[track_caller]
pub fn assert_clean_run(args: &[&str], stdout: &str, stderr: &str, dir: &Path) {
    let shown = format!("bmhctl {}", args.join(" "));
    if !args.contains(&"export") {
        assert_clean(&format!("the stdout of {shown}"), stdout);
    }
    assert_clean(&format!("the stderr of {shown}"), stderr);
    assert_clean_dir(dir, &shown);
}

#[track_caller]
fn assert_clean_dir(dir: &Path, shown: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            // A store's Secrets hold their passwords, as the user's files do.
            if name != "secrets" {
                assert_clean_dir(&path, shown);
            }
            continue;
        }
        if !kind.is_file() {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let bookkeeping = path.components().any(|c| c.as_os_str() == ".bmhctl")
            || name.ends_with(".jsonl")
            || name.ends_with(".json")
            || name == ".lease";
        let what = format!("{} after {shown}", path.display());
        if bookkeeping {
            assert_clean(&what, &text);
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            assert_clean(&format!("a status block of {what}"), &status_blocks(&text));
        }
    }
}

/// Every top-level `status:` block of a YAML text.
fn status_blocks(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with("status:") {
            inside = true;
        } else if !line.starts_with(' ') && !line.starts_with('#') && !line.trim().is_empty() {
            inside = false;
        }
        if inside {
            out.push_str(line);
        }
    }
    out
}

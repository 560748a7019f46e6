//! The Debian package `scripts/package-deb.sh` builds: its files, its maintainer scripts, its
//! unit as systemd reads it once installed, and its plugins under the unit's hardening.
//! The package is built once per test run: about 5 minutes from a cold release build, 1.5 after
//! a change of bmhctl's sources, 15 s when only `cargo deb` runs again.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

const UNIT: &str = "usr/lib/systemd/system/bmhctl.service";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[track_caller]
fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The package, built by `scripts/package-deb.sh` once per test run.
pub(crate) fn deb() -> PathBuf {
    static DEB: OnceLock<Mutex<Option<PathBuf>>> = OnceLock::new();
    let mut built = DEB
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(p) = &*built {
        return p.clone();
    }
    let mut script = Command::new(repo().join("scripts/package-deb.sh"));
    script.current_dir(repo());
    // What cargo sets for a test process: a build from a shell has none of it, and ring's build
    // script runs again (and its dependents build again) when CARGO_MANIFEST_DIR changes.
    for (name, _) in std::env::vars_os() {
        if let Some(name) = name.to_str()
            && (name.starts_with("CARGO_PKG_")
                || name.starts_with("CARGO_BIN_")
                || matches!(
                    name,
                    "CARGO_MANIFEST_DIR"
                        | "CARGO_MANIFEST_PATH"
                        | "CARGO_CRATE_NAME"
                        | "CARGO_TARGET_TMPDIR"
                        | "CARGO_PRIMARY_PACKAGE"
                ))
        {
            script.env_remove(name);
        }
    }
    let out = run(&mut script);
    let stdout = text(&out.stdout);
    let last = stdout
        .lines()
        .last()
        .expect("the script prints the package's path");
    let path = repo().join(last.trim());
    assert!(path.is_file(), "{} is not the package", path.display());
    *built = Some(path.clone());
    path
}

/// The package's contents unpacked into a fresh directory, as `dpkg -i` would install them.
fn unpacked() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    run(Command::new("dpkg-deb").arg("-x").arg(deb()).arg(&root));
    (dir, root)
}

/// `dpkg-deb -c`: each entry's mode (`-rw-r--r--`), owner (`0/0`) and path (`usr/bin/bmhctl`,
/// a directory ending in `/`).
fn entries() -> Vec<(String, String, String)> {
    let out = run(Command::new("dpkg-deb").arg("-c").arg(deb()));
    text(&out.stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert!(f.len() >= 6, "{l}");
            let path = f[5..].join(" ");
            let path = path.strip_prefix("./").unwrap_or(&path).to_string();
            (f[0].to_string(), f[1].to_string(), path)
        })
        .collect()
}

#[test]
#[ignore = "needs cargo-deb, dpkg-deb, systemd-analyze"]
fn the_package_holds_every_file_an_install_needs_and_nothing_else() {
    let entries = entries();
    let files: BTreeSet<&str> = entries
        .iter()
        .filter(|(mode, _, _)| !mode.starts_with('d'))
        .map(|(_, _, p)| p.as_str())
        .collect();
    let mut expected: BTreeSet<String> = [
        "usr/bin/bmhctl",
        "usr/lib/bmhctl/plugins/ironic-provisioner.so",
        "usr/lib/bmhctl/plugins/demo-provisioner.so",
        "usr/share/bash-completion/completions/bmhctl",
        "usr/share/zsh/vendor-completions/_bmhctl",
        "usr/share/fish/vendor_completions.d/bmhctl.fish",
        "usr/share/doc/bmhctl/README.md",
        "usr/share/doc/bmhctl/ironic.md",
        "usr/share/doc/bmhctl/copyright",
        "etc/bmhctl/bmhctl.env",
        UNIT,
    ]
    .into_iter()
    .map(String::from)
    .collect();
    // A page for bmhctl and each command, gzipped as Debian wants them.
    let pages = std::fs::read_dir(repo().join("docs/man")).unwrap();
    let pages: Vec<String> = pages
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".1"))
        .collect();
    assert!(pages.len() > 20, "{pages:?}");
    assert!(pages.iter().any(|p| p == "bmhctl.1"));
    expected.extend(pages.iter().map(|p| format!("usr/share/man/man1/{p}.gz")));
    let found: BTreeSet<String> = files.iter().map(|s| s.to_string()).collect();
    assert_eq!(found, expected, "the package's files");

    let mode = |path: &str| {
        entries
            .iter()
            .find(|(_, _, p)| p == path)
            .map(|(m, _, _)| m.as_str())
            .unwrap_or_else(|| panic!("no {path}"))
    };
    assert_eq!(mode("usr/bin/bmhctl"), "-rwxr-xr-x");
    // The plugin directory passes the loader's rules: root's, written by no one else.
    assert_eq!(mode("usr/lib/bmhctl/plugins/"), "drwxr-xr-x");
    assert_eq!(
        mode("usr/lib/bmhctl/plugins/ironic-provisioner.so"),
        "-rw-r--r--"
    );
    // Settings may hold credentials.
    assert_eq!(mode("etc/bmhctl/bmhctl.env"), "-rw-------");
    for (mode, owner, path) in &entries {
        assert_eq!(owner, "0/0", "{path} is not root's");
        let bits = mode.as_bytes();
        assert!(
            bits[5] != b'w' && bits[8] != b'w',
            "{mode} {path}: writable by others"
        );
        for part in ["target", "work", "home", "root", "tmp", ".."] {
            assert!(
                !path.split('/').any(|c| c == part),
                "{path}: a build path in the package"
            );
        }
    }

    // The control data: a conffile, the user's tool, and the unit enabled but never started.
    let field =
        |name: &str| text(&run(Command::new("dpkg-deb").arg("-f").arg(deb()).arg(name)).stdout);
    assert!(field("Depends").contains("adduser"), "{}", field("Depends"));
    assert_eq!(field("Package").trim(), "bmhctl");
    let control = tempfile::tempdir().unwrap();
    run(Command::new("dpkg-deb")
        .arg("-e")
        .arg(deb())
        .arg(control.path()));
    let read = |name: &str| std::fs::read_to_string(control.path().join(name)).unwrap();
    assert_eq!(read("conffiles"), "/etc/bmhctl/bmhctl.env\n");
    let postinst = read("postinst");
    assert!(
        postinst.contains("adduser --system --group --home /var/lib/bmhctl"),
        "{postinst}"
    );
    assert!(postinst.contains("install -d -o bmhctl -g bmhctl -m 0700 /var/lib/bmhctl"));
    assert!(
        postinst.contains("deb-systemd-helper enable bmhctl.service"),
        "{postinst}"
    );
    assert!(!postinst.contains("deb-systemd-invoke start"), "{postinst}");
    assert!(!postinst.contains("#DEBHELPER#"));
    let postrm = read("postrm");
    assert!(postrm.contains("rm -rf /var/lib/bmhctl"), "{postrm}");
    assert!(
        postrm.contains("deb-systemd-helper purge bmhctl.service"),
        "{postrm}"
    );
}

#[test]
#[ignore = "needs cargo-deb, dpkg-deb, systemd-analyze"]
fn the_unit_as_installed_passes_systemd_analyze_verify() {
    let (_dir, root) = unpacked();
    // The units the service refers to (multi-user.target, network-online.target, sysinit.target
    // by its default dependencies) come from this machine's systemd.
    let units = root.join("usr/lib/systemd/system");
    let mut copied = 0;
    for system in ["/usr/lib/systemd/system", "/lib/systemd/system"] {
        let Ok(read) = std::fs::read_dir(system) else {
            continue;
        };
        for e in read {
            let e = e.unwrap();
            let to = units.join(e.file_name());
            if e.file_type().unwrap().is_file() && !to.exists() {
                std::fs::copy(e.path(), to).unwrap();
                copied += 1;
            }
        }
    }
    assert!(copied > 0, "no systemd units on this machine");
    // Documentation=man:... is checked with `man`, against the package's pages.
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(format!("--root={}", root.display()))
        .arg(Path::new("/").join(UNIT))
        .env("MANPATH", root.join("usr/share/man"))
        .output()
        .expect("systemd-analyze (apt-get install systemd)");
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success() && said.is_empty(),
        "{}: {said}",
        out.status
    );

    let unit = std::fs::read_to_string(root.join(UNIT)).unwrap();
    for line in [
        "Type=notify",
        "NotifyAccess=main",
        "WatchdogSec=60",
        "Restart=on-failure",
        "User=bmhctl",
        "StateDirectory=bmhctl",
        "EnvironmentFile=-/etc/bmhctl/bmhctl.env",
        "MemoryDenyWriteExecute=yes",
        "CapabilityBoundingSet=",
        "SystemCallFilter=@system-service",
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6",
    ] {
        assert!(unit.lines().any(|l| l == line), "no {line} in the unit");
    }
    // The command line is one the packaged bmhctl accepts (with --help, it parses and stops).
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("ExecStart");
    let args: Vec<&str> = exec
        .split_whitespace()
        .filter(|a| !a.starts_with('$'))
        .collect();
    assert_eq!(
        args[..4],
        ["/usr/bin/bmhctl", "watch", "--store", "/var/lib/bmhctl"]
    );
    let binary = root.join(args[0].trim_start_matches('/'));
    let help = run(Command::new(binary).args(&args[1..]).arg("--help"));
    assert!(text(&help.stdout).contains("--store"));
}

/// `MemoryDenyWriteExecute=yes` refuses memory that is writable and executable, and making
/// memory executable later: loading and running the packaged plugins asks for neither.
#[test]
#[ignore = "needs cargo-deb, dpkg-deb, strace"]
fn the_packaged_plugins_load_without_writable_executable_memory() {
    let (dir, root) = unpacked();
    let plugins = root.join("usr/lib/bmhctl/plugins");
    for name in ["ironic", "demo"] {
        let log = dir.path().join(format!("{name}.strace"));
        let plugin = plugins.join(format!("{name}-provisioner.so"));
        // The factory is made and a provisioner asks Ironic (refused at once: no one listens).
        let out = Command::new("strace")
            .args(["-f", "-e", "trace=mmap,mprotect,pkey_mprotect,shmat", "-o"])
            .arg(&log)
            .arg(root.join("usr/bin/bmhctl"))
            .args(["plugin", "check"])
            .arg(&plugin)
            .arg(name)
            .env("IRONIC_ENDPOINT", "http://127.0.0.1:9")
            .output()
            .expect("strace (apt-get install strace)");
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains("factory         ok"),
            "{stdout}{}",
            text(&out.stderr)
        );
        let calls = std::fs::read_to_string(&log).unwrap();
        // The plugin's code among them: mapped executable, never writable.
        assert!(
            calls
                .lines()
                .any(|l| l.starts_with(|c: char| c.is_ascii_digit())
                    && l.contains("mmap(")
                    && l.contains("PROT_READ|PROT_EXEC")),
            "{calls}"
        );
        for l in calls.lines() {
            let writable_exec = l.contains("PROT_WRITE") && l.contains("PROT_EXEC");
            let made_exec = l.contains("mprotect(") && l.contains("PROT_EXEC");
            assert!(!writable_exec && !made_exec, "{name}: {l}");
        }
    }
}

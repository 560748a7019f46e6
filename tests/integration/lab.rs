//! A fluent builder for end-to-end tests: a temp directory of files and the bmhctl binary.

use assert_cmd::Command;
use std::path::PathBuf;

/// The config file bmhctl is pointed at unless a test says otherwise: one that does not exist.
const NO_CONFIG: &str = "no-bmhctl-config.yaml";

pub struct Lab {
    dir: tempfile::TempDir,
}

/// What one run of bmhctl did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    #[track_caller]
    pub fn expect_code(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}

impl Lab {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn file(self, name: &str, text: &str) -> Self {
        std::fs::write(self.path(name), text).expect("write test file");
        self
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).expect("read test file")
    }

    /// Starts bmhctl in the lab directory with BMO's real delays (time scale 1).
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
            .current_dir(self.dir.path())
            .env("BMHCTL_TIME_SCALE", "1")
            .env("BMHCTL_SEED", "1")
            .env_remove("BMHCTL_PROVISIONER")
            // No context from the user's own config file.
            .env("BMHCTL_CONFIG", self.path(NO_CONFIG))
            .env_remove("BMHCTL_CONTEXT")
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start bmhctl")
    }

    /// Runs bmhctl in the lab directory with zero delays and a fixed seed.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_env(args, &[])
    }

    /// [`Lab::run`] with extra environment variables (set after the defaults, so they win).
    pub fn run_env(&self, args: &[&str], envs: &[(&str, &str)]) -> Run {
        let out = Command::cargo_bin("bmhctl")
            .expect("bmhctl binary")
            .current_dir(self.dir.path())
            .env("BMHCTL_TIME_SCALE", "0")
            .env("BMHCTL_SEED", "1")
            .env_remove("BMHCTL_PROVISIONER")
            .env("BMHCTL_CONFIG", self.path(NO_CONFIG))
            .env_remove("BMHCTL_CONTEXT")
            .envs(envs.iter().copied())
            .args(args)
            .output()
            .expect("run bmhctl");
        let run = Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        crate::canary::assert_clean_run(args, &run.stdout, &run.stderr, self.dir.path());
        run
    }
}

/// A Secret document with BMC credentials (the password a canary: [`crate::canary`]).
pub fn secret(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\ndata:\n  username: YWRtaW4=\n  password: {}\n",
        crate::canary::PASSWORD_B64
    )
}

/// A BareMetalHost document; `extra_spec` lines are appended to its spec (indented by 2).
pub fn host(name: &str, extra_spec: &str) -> String {
    let mut s = format!(
        "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\nspec:\n  online: true\n  bmc:\n    address: ipmi://192.168.122.1:6233\n    credentialsName: bmc-secret\n"
    );
    for line in extra_spec.lines() {
        s.push_str("  ");
        s.push_str(line);
        s.push('\n');
    }
    s
}

/// Removes every top-level `status:` block from a YAML text, for comparing the rest.
pub fn without_status(text: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with("status:") {
            skipping = true;
            continue;
        }
        if skipping && line.starts_with(' ') {
            continue;
        }
        skipping = false;
        out.push_str(line);
    }
    out
}

/// The `.so` of a workspace `cdylib` package (e.g. `ironic-provisioner`), built once per test run
/// with the cargo that runs the tests (never a manual step).
pub fn cdylib(package: &str) -> PathBuf {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    // Held while building, so concurrent tests wait for one cargo run instead of starting more.
    let mut built = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(package) {
        return p.clone();
    }
    let out = std::process::Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "build",
            "--message-format=json-render-diagnostics",
            "-p",
            package,
        ])
        .output()
        .unwrap_or_else(|e| panic!("run cargo build -p {package}: {e}"));
    assert!(
        out.status.success(),
        "building {package} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let target = package.replace('-', "_");
    let lib = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == target.as_str())
        .flat_map(|m| m["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f.as_str().map(PathBuf::from))
        .find(|f| f.extension().is_some_and(|e| e == "so"))
        .unwrap_or_else(|| panic!("cargo built no .so for {package}"));
    built.insert(package.to_string(), lib.clone());
    lib
}

/// A fenced `bash` block of the README, the one after the comment line starting `marker`.
pub fn readme_block(marker: &str) -> String {
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .expect("read README.md");
    let after = readme
        .split_once(&format!("<!-- {marker}"))
        .unwrap_or_else(|| panic!("no `<!-- {marker}` in README.md"))
        .1;
    let block = after
        .split_once("```bash\n")
        .expect("a bash block after it")
        .1;
    block
        .split_once("```")
        .expect("the block's end")
        .0
        .to_string()
}

/// A child process killed and reaped when the test ends, however it ends (a failed assertion
/// must not leave a `watch` holding locks or a port).
pub struct Reaped(pub std::process::Child);

impl std::ops::Deref for Reaped {
    type Target = std::process::Child;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Reaped {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

//! Flags, environment and defaults resolved into one typed configuration.

use super::{DriveArgs, SourceArgs};
use crate::error::{Error, Result};
use crate::runner::{RunnerConfig, Timing};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Environment {
    /// `BMHCTL_TIME_SCALE`: multiplies every delay (default 1).
    pub time_scale: Option<f64>,
    /// `BMHCTL_SEED`: fixes the backoff jitter.
    pub seed: Option<u64>,
    /// `BMO_CONCURRENCY`: passes at once when `--concurrency` is not given (as BMO reads it).
    pub concurrency: Option<usize>,
    /// `BMHCTL_TIMING`: `change` or `bmo` when `--timing` is not given.
    pub timing: Option<Timing>,
}

impl Environment {
    /// Reads the process environment; a value that does not parse is a usage error naming it.
    pub fn read() -> Result<Self> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        fn setting<T: std::str::FromStr>(
            lookup: &impl Fn(&str) -> Option<String>,
            name: &str,
            expected: &str,
        ) -> Result<Option<T>> {
            match lookup(name) {
                Some(v) if !v.is_empty() => v.parse().map(Some).map_err(|_| {
                    Error::Usage(format!(
                        "invalid value {v:?} for environment variable {name}{expected}"
                    ))
                }),
                _ => Ok(None),
            }
        }
        let time_scale = setting::<f64>(&lookup, "BMHCTL_TIME_SCALE", "")?;
        if time_scale.is_some_and(|s| !(s >= 0.0 && s.is_finite())) {
            return Err(Error::Usage(
                "BMHCTL_TIME_SCALE must be a number >= 0".into(),
            ));
        }
        Ok(Self {
            time_scale,
            seed: setting(&lookup, "BMHCTL_SEED", "")?,
            concurrency: setting::<usize>(&lookup, "BMO_CONCURRENCY", "")?.filter(|n| *n > 0),
            timing: setting(&lookup, "BMHCTL_TIMING", " (expected change or bmo)")?,
        })
    }
}

/// `$BMHCTL_CONFIG`: the config file instead of the platform's default (as KUBECONFIG).
pub fn config_file() -> Option<PathBuf> {
    crate::context::config_file()
}

/// The variables of the context a command runs in, less those the user set.
pub fn context_environment(flag: Option<&str>) -> Result<BTreeMap<String, String>> {
    let from_env = std::env::var(crate::context::CONTEXT_VAR).ok();
    crate::context::selected_environment(
        flag.or(from_env.as_deref()),
        config_file().as_deref(),
        |k| std::env::var_os(k).is_some_and(|v| !v.is_empty()),
    )
}

/// `BMHCTL_MAX_FILE_SIZE`: the largest input file read, in bytes (unset or 0: the default).
pub fn max_file_size(lookup: impl Fn(&str) -> Option<String>) -> Result<u64> {
    const NAME: &str = "BMHCTL_MAX_FILE_SIZE";
    match lookup(NAME) {
        Some(v) if !v.trim().is_empty() => match v.trim().parse::<u64>() {
            Ok(0) => Ok(crate::persist::files::paths::DEFAULT_MAX_FILE_SIZE),
            Ok(n) => Ok(n),
            Err(_) => Err(Error::Usage(format!(
                "invalid value {v:?} for environment variable {NAME} (a size in bytes)"
            ))),
        },
        _ => Ok(crate::persist::files::paths::DEFAULT_MAX_FILE_SIZE),
    }
}

#[derive(Debug, Clone)]
pub struct DriveOptions {
    pub provisioner: String,
    pub runner: RunnerConfig,
    /// How long the provisioner's backend may stay unreachable at start (`--ironic-wait`).
    pub ironic_wait: Duration,
}

impl DriveOptions {
    pub fn resolve(args: &DriveArgs, timeout: Duration, env: &Environment) -> Self {
        let mut runner = RunnerConfig {
            timeout,
            time_scale: env.time_scale.unwrap_or(1.0),
            seed: env.seed,
            concurrency: args
                .concurrency
                .map(|n| n as usize)
                .or(env.concurrency)
                .unwrap_or(RunnerConfig::DEFAULT_CONCURRENCY),
            timing: match args.timing.as_deref() {
                Some(t) => t.parse().unwrap_or_default(),
                None => env.timing.unwrap_or_default(),
            },
            ..RunnerConfig::default()
        };
        runner.machine.max_provisioning_retries = i64::from(args.max_provisioning_retries);
        Self {
            provisioner: args.provisioner.clone(),
            runner,
            ironic_wait: args.ironic_wait,
        }
    }

    pub fn resolve_provisioner(
        &self,
        input: crate::persist::InputPolicy,
        settings: &crate::provisioners::Settings,
    ) -> Result<crate::provisioners::Resolved> {
        let asked = match self.runner.timing {
            Timing::Change => crate::provisioners::Asked::WhenDue,
            Timing::Bmo => crate::provisioners::Asked::Nothing,
        };
        crate::provisioners::resolve(&self.provisioner, asked, input, settings)
    }

    /// For a controller (`watch`, `--wait`): hosts never time out there.
    pub fn for_controller(args: &DriveArgs, env: &Environment) -> Self {
        Self::resolve(args, Duration::from_secs(3600), env)
    }
}

pub use crate::persist::Place;

/// Where a command's hosts are: `-f`, else `--store`/`BMHCTL_STORE`, else the default store.
pub fn place(args: &SourceArgs) -> Result<Place> {
    if !args.paths.is_empty() {
        return Ok(Place::Files(args.paths.clone()));
    }
    let root = crate::persist::store::resolve_root(args.store.store.as_deref())?;
    Ok(Place::Store(root))
}

/// `describe hosts.yaml`: positional arguments are hosts, files come with `-f`; one that looks
/// like a file when no `-f` is given is a usage error with the hint.
pub fn hosts_not_files(command: &str, source: &SourceArgs, hosts: &[String]) -> Result<()> {
    if !source.paths.is_empty() {
        return Ok(());
    }
    match hosts.iter().find(|h| looks_like_a_file(h)) {
        Some(f) => Err(Error::Usage(format!(
            "{command}: {f} looks like a file; the hosts of files are given with -f FILE|DIR \
             (did you mean -f {f}?)"
        ))),
        None => Ok(()),
    }
}

/// Whether a positional HOST argument is more likely a file the user meant to give with -f.
pub fn looks_like_a_file(arg: &str) -> bool {
    arg.ends_with(".yaml")
        || arg.ends_with(".yml")
        || arg.ends_with(".json")
        || arg.contains('/') && std::path::Path::new(arg).exists()
}

/// A path given that does not exist (exit 2), said before the provisioner is loaded.
pub fn missing_inputs(provisioner: &str, paths: &[PathBuf]) -> Result<()> {
    if !crate::provisioners::valid_name(provisioner) {
        return Ok(());
    }
    for p in paths {
        if !crate::persist::files::paths::is_stdin(p)
            && let Err(e) = std::fs::symlink_metadata(p)
            && e.kind() == std::io::ErrorKind::NotFound
        {
            return Err(Error::Usage(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Result<Environment> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Environment::from_lookup(|n| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()))
    }

    fn drive(concurrency: Option<u32>) -> DriveArgs {
        DriveArgs {
            provisioner: "fixture".into(),
            concurrency,
            max_provisioning_retries: 3,
            timing: None,
            ironic_wait: Duration::from_secs(120),
        }
    }

    #[test]
    fn flags_win_over_the_environment_which_wins_over_defaults() {
        let e = env(&[
            ("BMHCTL_TIME_SCALE", "0.5"),
            ("BMHCTL_SEED", "7"),
            ("BMO_CONCURRENCY", "3"),
        ])
        .unwrap();
        let o = DriveOptions::resolve(&drive(None), Duration::from_secs(90), &e);
        assert_eq!(o.provisioner, "fixture");
        assert_eq!(o.runner.concurrency, 3);
        assert_eq!(o.runner.time_scale, 0.5);
        assert_eq!(o.runner.seed, Some(7));
        assert_eq!(o.runner.timeout, Duration::from_secs(90));
        assert_eq!(o.runner.machine.max_provisioning_retries, 3);
        let o = DriveOptions::resolve(&drive(Some(5)), Duration::from_secs(90), &e);
        assert_eq!(o.runner.concurrency, 5);
        let o = DriveOptions::resolve(&drive(None), Duration::from_secs(1), &env(&[]).unwrap());
        assert_eq!(o.runner.concurrency, 8);
        assert_eq!(o.runner.time_scale, 1.0);
        assert_eq!(o.runner.seed, None);
    }

    #[test]
    fn timing_is_the_flag_else_bmhctl_timing_else_change() {
        let timing = |flag: Option<&str>, vars: &[(&str, &str)]| {
            let mut args = drive(None);
            args.timing = flag.map(str::to_string);
            DriveOptions::resolve(&args, Duration::from_secs(1), &env(vars).unwrap())
                .runner
                .timing
        };
        assert_eq!(timing(None, &[]), Timing::Change);
        assert_eq!(timing(None, &[("BMHCTL_TIMING", "bmo")]), Timing::Bmo);
        assert_eq!(
            timing(Some("change"), &[("BMHCTL_TIMING", "bmo")]),
            Timing::Change
        );
        assert_eq!(timing(Some("bmo"), &[]), Timing::Bmo);
        let e = env(&[("BMHCTL_TIMING", "fast")]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("BMHCTL_TIMING"), "{e}");
    }

    #[test]
    fn the_largest_file_read_comes_from_the_environment_or_the_default() {
        use crate::persist::files::paths::DEFAULT_MAX_FILE_SIZE;
        let with = |v: Option<&str>| {
            max_file_size(|k| (k == "BMHCTL_MAX_FILE_SIZE").then(|| v.map(str::to_string))?)
        };
        assert_eq!(with(None).unwrap(), DEFAULT_MAX_FILE_SIZE);
        assert_eq!(with(Some("0")).unwrap(), DEFAULT_MAX_FILE_SIZE);
        assert_eq!(with(Some(" 100 ")).unwrap(), 100);
        assert_eq!(
            with(Some("lots")).unwrap_err().to_string(),
            "invalid value \"lots\" for environment variable BMHCTL_MAX_FILE_SIZE (a size in bytes)"
        );
    }

    #[test]
    fn bad_environment_values_are_usage_errors_naming_the_variable() {
        for (name, value, message) in [
            (
                "BMHCTL_SEED",
                "x",
                "invalid value \"x\" for environment variable BMHCTL_SEED",
            ),
            (
                "BMHCTL_TIME_SCALE",
                "-1",
                "BMHCTL_TIME_SCALE must be a number >= 0",
            ),
            (
                "BMO_CONCURRENCY",
                "many",
                "invalid value \"many\" for environment variable BMO_CONCURRENCY",
            ),
        ] {
            let e = env(&[(name, value)]).unwrap_err();
            assert_eq!((e.exit_code(), e.to_string()), (2, message.to_string()));
        }
        // Empty is unset; BMO_CONCURRENCY=0 is the default.
        assert_eq!(
            env(&[("BMHCTL_SEED", ""), ("BMO_CONCURRENCY", "0")]).unwrap(),
            Environment::default()
        );
    }
}

//! `bmhctl version`.

use super::output;
use crate::error::{Error, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;

#[derive(Debug, Args)]
pub struct VersionArgs {
    /// `text` for people, or the `Version` document as `json` or `yaml`.
    #[arg(short, long, value_enum, default_value_t = VersionFormat::Text)]
    pub output: VersionFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VersionFormat {
    Text,
    Json,
    Yaml,
}

/// The `Version` document (docs/output.md).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Version {
    api_version: &'static str,
    kind: &'static str,
    version: &'static str,
    /// The source's git commit, `unknown` when built outside a git checkout (build.rs).
    git_commit: &'static str,
    /// RFC 3339, UTC: SOURCE_DATE_EPOCH when the build set it.
    build_date: &'static str,
    #[serde(rename = "pluginSDKVersion")]
    plugin_sdk_version: &'static str,
    #[serde(rename = "pluginABIVersion")]
    plugin_abi_version: u32,
}

const VERSION: Version = Version {
    api_version: output::API_VERSION,
    kind: "Version",
    version: env!("CARGO_PKG_VERSION"),
    git_commit: env!("BMHCTL_GIT_COMMIT"),
    build_date: env!("BMHCTL_BUILD_DATE"),
    plugin_sdk_version: bmhctl_plugin_sdk::SDK_VERSION,
    plugin_abi_version: bmhctl_plugin_sdk::ABI_VERSION,
};

pub fn print(args: VersionArgs) -> Result<()> {
    let v = &VERSION;
    match args.output {
        VersionFormat::Text => output::write_stdout(&format!(
            "bmhctl {}\ngit commit {}\nbuilt {}\nplugin SDK {}\nplugin ABI {}\n",
            v.version, v.git_commit, v.build_date, v.plugin_sdk_version, v.plugin_abi_version
        )),
        VersionFormat::Json => output::line(
            serde_json::to_string_pretty(v)
                .map_err(|e| Error::internal("cannot encode as JSON", e))?,
        ),
        VersionFormat::Yaml => output::write_stdout(
            &serde_saphyr::to_string(v).map_err(|e| Error::internal("cannot encode as YAML", e))?,
        ),
    }
}

/// The build script's own logic (it has no tests of its own).
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../build.rs"]
mod build_script;

#[cfg(test)]
mod tests {
    use super::build_script::{build_date, commit};

    #[test]
    fn the_build_date_is_source_date_epochs_when_set() {
        assert_eq!(build_date(Some("0"), 5), "1970-01-01T00:00:00Z");
        assert_eq!(build_date(Some("1764598245"), 5), "2025-12-01T14:10:45Z");
        assert_eq!(build_date(Some("951782400"), 5), "2000-02-29T00:00:00Z");
        assert_eq!(build_date(None, 1796601600), "2026-12-07T00:00:00Z");
        assert_eq!(build_date(Some("soon"), 86_399), "1970-01-01T23:59:59Z");
    }

    #[test]
    fn a_source_outside_a_git_checkout_has_an_unknown_commit() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(commit(dir.path()), "unknown");
        let here = commit(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
        assert!(
            here == "unknown" || here.len() == 40 && here.chars().all(|c| c.is_ascii_hexdigit()),
            "{here}"
        );
    }
}

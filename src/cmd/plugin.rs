//! `bmhctl plugin check PATH NAME` and `bmhctl plugin list`.

use crate::error::{Error, Result, Unfinished};
use crate::provisioners::{self, loader};
use bmhctl_plugin_sdk::abi::{HostConfigureInput, PluginConfig};
use bmhctl_plugin_sdk::{HostData, ProvisionerFactory};
use clap::Subcommand;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Open a plugin as the loader does, run its host configure and factory, and report.
    Check {
        /// The plugin file (any name; the loader itself needs NAME-provisioner.so).
        path: PathBuf,
        /// The name the plugin must report.
        name: String,
    },
    /// The plugins of the plugin directories, with their names and versions.
    List {
        /// `table`, or the `PluginList` document as `json`.
        #[arg(short, long, value_enum, default_value_t = ListFormat::Table)]
        output: ListFormat,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    Table,
    Json,
}

pub fn run(cmd: PluginCommand, provisioners: &provisioners::Settings) -> Result<()> {
    match cmd {
        PluginCommand::Check { path, name } => check(&path, &name, provisioners),
        PluginCommand::List { output } => list(output, provisioners),
    }
}

fn fail(e: impl std::fmt::Display) -> Error {
    Unfinished::PluginCheck(e.to_string()).into()
}

fn check(path: &std::path::Path, name: &str, provisioners: &provisioners::Settings) -> Result<()> {
    if !provisioners::valid_name(name) {
        return Err(Error::Usage(format!(
            "invalid provisioner name {name:?}: provisioner name must match ^[a-z0-9][a-z0-9-]*$"
        )));
    }
    let plugin = loader::open(path, Some(name)).map_err(fail)?;
    super::output::outln!("plugin          {}", path.display())?;
    super::output::outln!("name            {}", plugin.name())?;
    super::output::outln!(
        "plugin ABI      {} (bmhctl {})",
        plugin.abi_version(),
        bmhctl_plugin_sdk::ABI_VERSION
    )?;
    super::output::outln!(
        "plugin SDK      {} (bmhctl {})",
        plugin.sdk_version(),
        bmhctl_plugin_sdk::SDK_VERSION
    )?;
    let namespace = provisioners.default_namespace();
    let input = HostConfigureInput {
        features: Vec::new(),
        default_namespace: namespace.clone(),
    };
    let requirements = plugin.host_configure(&input).map_err(fail)?;
    if plugin.has_host_configure() {
        let kinds: Vec<String> = requirements
            .object_kinds
            .iter()
            .map(|k| format!("{} {}", k.api_version, k.kind))
            .collect();
        super::output::outln!(
            "host configure  ok (object kinds: {}; namespace: {})",
            if kinds.is_empty() {
                "none".into()
            } else {
                kinds.join(", ")
            },
            requirements.namespace.as_deref().unwrap_or("any")
        )?;
    } else {
        super::output::outln!("host configure  none")?;
    }
    let config = PluginConfig {
        name: name.to_string(),
        features: Vec::new(),
        default_namespace: namespace,
        environment: provisioners.environment.clone(),
    };
    let factory = plugin.new_factory(config).map_err(fail)?;
    super::output::outln!("factory         ok")?;
    let host = HostData {
        key: bmh_api::ObjectKey::new("default", "plugin-check"),
        ..Default::default()
    };
    let mut prov = factory
        .new_provisioner(host, Arc::new(|_| {}))
        .map_err(|e| fail(e.to_string()))?;
    super::output::outln!("provisioner     ok (health: {:?})", prov.get_health())?;
    super::output::outln!("plugin check PASSED")?;
    Ok(())
}

/// One row of `plugin list`: one object of its `-o json`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    name: String,
    /// `None`: built in, or not opened (not used, or it failed to load).
    #[serde(rename = "abiVersion")]
    abi: Option<u32>,
    #[serde(rename = "sdkVersion")]
    sdk: Option<String>,
    /// `None`: built in.
    file: Option<std::path::PathBuf>,
    /// `ok`, or why the plugin is not used.
    status: String,
}

/// A plugin directory, in the order searched.
#[derive(serde::Serialize)]
struct Directory {
    path: std::path::PathBuf,
    exists: bool,
}

fn list(format: ListFormat, provisioners: &provisioners::Settings) -> Result<()> {
    let dirs = provisioners
        .plugin_dirs()
        .map_err(|why| Error::Usage(why.to_string()))?;
    let mut listed = vec![Listed {
        name: "fixture".into(),
        abi: None,
        sdk: None,
        file: None,
        status: "ok".into(),
    }];
    // A name found earlier hides a later one.
    let mut seen: Vec<(String, std::path::PathBuf)> = Vec::new();
    let mut directories = Vec::new();
    for dir in &dirs {
        let found = match plugin_files(dir) {
            Ok(found) => found,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(Error::io(dir, e)),
        };
        directories.push(Directory {
            path: dir.clone(),
            exists: !found.is_empty() || dir.exists(),
        });
        for (file, name) in found {
            let path = dir.join(&file);
            if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
                let status = format!("not used: {} comes first", first.display());
                listed.push(Listed {
                    name,
                    abi: None,
                    sdk: None,
                    file: Some(path),
                    status,
                });
                continue;
            }
            let entry = match loader::open(&path, Some(&name)) {
                Ok(p) => Listed {
                    name: p.name().to_string(),
                    abi: Some(p.abi_version()),
                    sdk: Some(p.sdk_version().to_string()),
                    file: Some(path.clone()),
                    status: "ok".into(),
                },
                Err(e) => Listed {
                    name: name.clone(),
                    abi: None,
                    sdk: None,
                    file: Some(path.clone()),
                    status: e.to_string(),
                },
            };
            seen.push((name, path));
            listed.push(entry);
        }
    }
    if format == ListFormat::Json {
        let doc = serde_json::json!({
            "apiVersion": super::output::API_VERSION,
            "kind": "PluginList",
            "directories": directories,
            "plugins": listed,
        });
        return super::output::line(
            serde_json::to_string_pretty(&doc)
                .map_err(|e| Error::internal("cannot encode as JSON", e))?,
        );
    }
    // With several directories, a file is named by its path, else by its name.
    let several = dirs.len() > 1;
    let rows = listed.iter().map(|p| {
        // `-`: nothing to open; `?`: it failed to load.
        let unopened = p.file.is_none() || p.status.starts_with("not used");
        let version =
            |v: Option<String>| v.unwrap_or_else(|| if unopened { "-" } else { "?" }.into());
        let file = match &p.file {
            None => "(built in)".to_string(),
            Some(f) if several => f.display().to_string(),
            Some(f) => f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        [
            p.name.clone(),
            version(p.abi.map(|a| a.to_string())),
            version(p.sdk.clone()),
            file,
            p.status.clone(),
        ]
    });
    let table = super::output::kubectl_table(Some(&["NAME", "ABI", "SDK", "FILE", "STATUS"]), rows);
    if several {
        super::output::outln!("plugin directories, searched in this order:")?;
        for dir in &directories {
            let note = if dir.exists { "" } else { " (absent)" };
            super::output::outln!("  {}{note}", dir.path.display())?;
        }
    } else {
        super::output::outln!("plugin directory: {}", dirs[0].display())?;
    }
    super::output::line(table)
}

/// The plugin files of `dir`, by file name: (`NAME-provisioner.so`, NAME).
pub fn plugin_files(dir: &std::path::Path) -> std::io::Result<Vec<(String, String)>> {
    let mut found: Vec<(String, String)> = std::fs::read_dir(dir)?
        .filter_map(|e| {
            let file = e.ok()?.file_name().into_string().ok()?;
            let name = file.strip_suffix("-provisioner.so")?.to_string();
            Some((file, name))
        })
        .collect();
    found.sort();
    Ok(found)
}

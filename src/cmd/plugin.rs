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
    List,
}

pub fn run(cmd: PluginCommand, provisioners: &provisioners::Settings) -> Result<()> {
    match cmd {
        PluginCommand::Check { path, name } => check(&path, &name, provisioners),
        PluginCommand::List => list(provisioners),
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

fn list(provisioners: &provisioners::Settings) -> Result<()> {
    let dirs = provisioners
        .plugin_dirs()
        .map_err(|why| Error::Usage(why.to_string()))?;
    let builtin = ["fixture", "-", "-", "(built in)", "ok"].map(String::from);
    let mut rows: Vec<[String; 5]> = vec![builtin];
    // With several directories, a file is named by its path; a name found earlier hides it.
    let several = dirs.len() > 1;
    let mut seen: Vec<(String, std::path::PathBuf)> = Vec::new();
    let mut absent = Vec::new();
    for dir in &dirs {
        let found = match plugin_files(dir) {
            Ok(found) => found,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                absent.push(dir);
                Vec::new()
            }
            Err(e) => return Err(Error::io(dir, e)),
        };
        for (file, name) in found {
            let path = dir.join(&file);
            let shown = if several {
                path.display().to_string()
            } else {
                file
            };
            if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
                let why = format!("not used: {} comes first", first.display());
                rows.push([name, "-".into(), "-".into(), shown, why]);
                continue;
            }
            let row = match loader::open(&path, Some(&name)) {
                Ok(p) => [
                    p.name().to_string(),
                    p.abi_version().to_string(),
                    p.sdk_version().to_string(),
                    shown,
                    "ok".into(),
                ],
                Err(e) => [name.clone(), "?".into(), "?".into(), shown, e.to_string()],
            };
            seen.push((name, path));
            rows.push(row);
        }
    }
    if several {
        super::output::outln!("plugin directories, searched in this order:")?;
        for dir in &dirs {
            let note = if absent.contains(&dir) {
                " (absent)"
            } else {
                ""
            };
            super::output::outln!("  {}{note}", dir.display())?;
        }
    } else {
        super::output::outln!("plugin directory: {}", dirs[0].display())?;
    }
    let header = ["NAME", "ABI", "SDK", "FILE", "STATUS"];
    super::output::line(super::output::kubectl_table(Some(&header), rows))?;
    Ok(())
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

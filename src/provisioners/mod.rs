//! Provisioners by name: `fixture` is built in; every other name is a plugin
//! `$PROVISIONER_PLUGIN_DIR/<name>-provisioner.so`.

pub mod fixture;
pub mod loader;

use crate::error::{Error, Result};
use bmhctl_plugin_sdk::ProvisionerFactory;
use std::path::PathBuf;
use std::sync::Arc;

/// Names must match `^[a-z0-9][a-z0-9-]*$`, checked before any path is built, so a name can't
/// escape the plugin directory.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `$PROVISIONER_PLUGIN_DIR`, or `plugins/` beside the bmhctl binary (so it moves with an install).
pub fn plugin_dir() -> PathBuf {
    match std::env::var_os("PROVISIONER_PLUGIN_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("plugins")))
            .unwrap_or_else(|| PathBuf::from("plugins")),
    }
}

pub fn plugin_path(name: &str) -> PathBuf {
    plugin_dir().join(format!("{name}-provisioner.so"))
}

/// The factory of the provisioner called `name`.
pub fn resolve(name: &str) -> Result<Arc<dyn ProvisionerFactory>> {
    if !valid_name(name) {
        return Err(Error::Usage(format!(
            "invalid provisioner name {name:?}: provisioner name must match ^[a-z0-9][a-z0-9-]*$"
        )));
    }
    if name == fixture::NAME {
        return Ok(Arc::new(fixture::Fixture::new()));
    }
    let path = plugin_path(name);
    load(name, &path).map_err(|e| {
        let hint = if path.exists() {
            ""
        } else {
            " (set PROVISIONER_PLUGIN_DIR, or use --provisioner fixture)"
        };
        Error::Other(anyhow::anyhow!(
            "cannot load provisioner plugin {name:?}: {e}{hint}"
        ))
    })
}

/// The namespace handed to plugins (BMO's `ProvisionerNamespace`): `$POD_NAMESPACE`, else `default`.
pub fn default_namespace() -> String {
    std::env::var("POD_NAMESPACE")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "default".to_string())
}

/// Opens the plugin `name` at `path` (every check of the loader), runs its host configure and
/// creates its factory.
pub fn load(name: &str, path: &std::path::Path) -> Result<Arc<dyn ProvisionerFactory>, String> {
    let plugin = loader::open(path, Some(name))?;
    let namespace = default_namespace();
    let requirements = plugin.host_configure(&bmhctl_plugin_sdk::abi::HostConfigureInput {
        features: Vec::new(),
        default_namespace: namespace.clone(),
    })?;
    tracing::debug!(
        plugin = name,
        path = %path.display(),
        sdk = plugin.sdk_version(),
        ?requirements,
        "provisioner plugin loaded"
    );
    let factory = plugin.new_factory(bmhctl_plugin_sdk::abi::PluginConfig {
        name: name.to_string(),
        features: Vec::new(),
        default_namespace: namespace,
    })?;
    Ok(Arc::new(factory))
}

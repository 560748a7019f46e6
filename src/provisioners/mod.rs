//! Provisioners by name: `fixture` is built in; every other name is a plugin
//! `$PROVISIONER_PLUGIN_DIR/<name>-provisioner.so`.

pub mod fixture;

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
    if !path.exists() {
        return Err(Error::Other(anyhow::anyhow!(
            "cannot load provisioner plugin {name:?}: failed to open plugin {}: no such file \
             (set PROVISIONER_PLUGIN_DIR, or use --provisioner fixture)",
            path.display()
        )));
    }
    Err(Error::Other(anyhow::anyhow!(
        "cannot load provisioner plugin {name:?} from {}: the plugin loader is not built yet; use --provisioner fixture",
        path.display()
    )))
}

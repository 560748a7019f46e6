//! Provisioners by name: `fixture` is built in; every other name is a plugin
//! `$PROVISIONER_PLUGIN_DIR/<name>-provisioner.so`.

pub mod fixture;
pub mod fixture_subscriptions;
pub mod loader;
pub mod trust;

use crate::error::{Error, Result};
use crate::objects::ObjectSource;
use crate::persist::{InputPolicy, LoadOptions};
use bmhctl_plugin_sdk::{HostData, Provisioner, ProvisionerError, ProvisionerFactory};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A mutex's guard, whether or not a holder panicked.
pub(crate) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Names match `^[a-z0-9][a-z0-9-]*$`, so that none can escape the plugin directory.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// What the command line read for the provisioners.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `$PROVISIONER_PLUGIN_DIR`; checked only when a plugin is looked for.
    pub plugin_dir: Option<PathBuf>,
    /// `$POD_NAMESPACE`.
    pub namespace: Option<String>,
    /// Handed to a plugin in its configuration, looked up before the process environment.
    pub environment: BTreeMap<String, String>,
}

impl Settings {
    /// `$PROVISIONER_PLUGIN_DIR`, or `plugins/` beside the bmhctl binary; never relative.
    pub fn plugin_dir(&self) -> Result<PathBuf, trust::Untrusted> {
        let dir = match &self.plugin_dir {
            Some(d) if !d.as_os_str().is_empty() => d.clone(),
            _ => std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(|d| d.join("plugins")))
                .unwrap_or_else(|| PathBuf::from("plugins")),
        };
        if dir.is_absolute() {
            Ok(dir)
        } else {
            Err(trust::Untrusted::RelativeDir(dir))
        }
    }

    /// BMO's `ProvisionerNamespace`: `$POD_NAMESPACE`, else `default`.
    pub fn default_namespace(&self) -> String {
        self.namespace
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "default".to_string())
    }
}

/// A provisioner ready to use: its factory, what the file loader accepts for it, its objects.
pub struct Resolved {
    pub factory: Arc<dyn ProvisionerFactory>,
    /// What the runs of `factory` tell of the provisioner's backend.
    pub health: Arc<BackendHealth>,
    /// Pass to [`crate::persist::files::inventory::load_with`].
    pub load_options: LoadOptions,
    plugin: Option<loader::PluginFactory>,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolved")
            .field("load_options", &self.load_options)
            .field("plugin", &self.plugin)
            .finish_non_exhaustive()
    }
}

impl Resolved {
    fn watched(
        factory: Arc<dyn ProvisionerFactory>,
        load_options: LoadOptions,
        plugin: Option<loader::PluginFactory>,
    ) -> Self {
        let health = Arc::new(BackendHealth::default());
        Self {
            factory: Arc::new(Watched {
                inner: factory,
                health: health.clone(),
            }),
            health,
            load_options,
            plugin,
        }
    }

    /// Gives a plugin read access to `objects` (until then every object is absent).
    pub fn set_objects(&self, objects: Arc<dyn ObjectSource>) {
        if let Some(p) = &self.plugin {
            p.transport().set_objects(objects);
        }
    }
}

/// Whether the runner will ask which waiting hosts are due and which passes to hold back
/// (`FEATURE_DUE_HOSTS`, `FEATURE_READY_HOSTS`), as change-driven timing does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    WhenDue,
    Nothing,
}

/// The provisioner called `name`, told what it will be [`Asked`].
pub fn resolve(
    name: &str,
    asked: Asked,
    input: InputPolicy,
    settings: &Settings,
) -> Result<Resolved> {
    if !valid_name(name) {
        return Err(Error::Usage(format!(
            "invalid provisioner name {name:?}: provisioner name must match ^[a-z0-9][a-z0-9-]*$"
        )));
    }
    let mut resolved = if name == fixture::NAME {
        // Built in: it asks nothing of the loader and reads no objects.
        Resolved::watched(
            Arc::new(fixture::Fixture::new()),
            LoadOptions::default(),
            None,
        )
    } else {
        let dir = settings
            .plugin_dir()
            .map_err(|why| Error::Usage(why.to_string()))?;
        let path = dir.join(format!("{name}-provisioner.so"));
        load(name, &path, asked, settings).map_err(|e| {
            let hint = if path.exists() {
                ""
            } else {
                " (set PROVISIONER_PLUGIN_DIR, or use --provisioner fixture)"
            };
            Error::Provisioner {
                name: name.to_string(),
                reason: Box::new(e),
                hint,
            }
        })?
    };
    // The plugin's kinds, read by the command line's rules.
    resolved.load_options.input = input;
    Ok(resolved)
}

/// Opens the plugin `name` at `path`, runs its host configure (whose requirements become the
/// [`Resolved::load_options`]) and creates its factory with what it will be [`Asked`].
pub fn load(
    name: &str,
    path: &std::path::Path,
    asked: Asked,
    settings: &Settings,
) -> Result<Resolved, loader::LoadError> {
    let plugin = loader::open(path, Some(name))?;
    let namespace = settings.default_namespace();
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
    let mut features = Vec::new();
    if asked == Asked::WhenDue {
        features.push(bmhctl_plugin_sdk::abi::FEATURE_DUE_HOSTS.to_string());
        features.push(bmhctl_plugin_sdk::abi::FEATURE_READY_HOSTS.to_string());
    }
    let factory = plugin.new_factory(bmhctl_plugin_sdk::abi::PluginConfig {
        name: name.to_string(),
        features,
        default_namespace: namespace,
        environment: settings.environment.clone(),
    })?;
    // What the file loader must accept for the plugin: its extra object kinds, in its namespace.
    let load_options = LoadOptions {
        extra_kinds: requirements.object_kinds,
        namespace: requirements.namespace.filter(|ns| !ns.is_empty()),
        ..LoadOptions::default()
    };
    Ok(Resolved::watched(
        Arc::new(factory.clone()),
        load_options,
        Some(factory),
    ))
}

/// The error of the last provisioner creation refused because the backend was not ready: BMO
/// requeues such a pass silently, and a host waiting on it would otherwise show nothing.
#[derive(Debug, Default)]
pub struct BackendHealth {
    trouble: Mutex<Option<String>>,
    /// Whether `trouble` holds one, so that clearing it usually takes no lock.
    troubled: AtomicBool,
}

impl BackendHealth {
    /// The backend's current trouble, if the last provisioner creation hit one.
    pub fn trouble(&self) -> Option<String> {
        lock(&self.trouble).clone()
    }

    fn set(&self, trouble: Option<String>) {
        if trouble.is_none() && !self.troubled.load(Ordering::Acquire) {
            return;
        }
        let mut t = lock(&self.trouble);
        self.troubled.store(trouble.is_some(), Ordering::Release);
        *t = trouble;
    }
}

/// A factory whose provisioner creations are noted in a [`BackendHealth`].
struct Watched {
    inner: Arc<dyn ProvisionerFactory>,
    health: Arc<BackendHealth>,
}

impl bmhctl_plugin_sdk::ForwardingFactory for Watched {
    fn inner(&self) -> &dyn ProvisionerFactory {
        &*self.inner
    }

    fn make_provisioner(
        &self,
        host: HostData,
        make: impl FnOnce(HostData) -> Result<Box<dyn Provisioner>, ProvisionerError>,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        let made = make(host);
        match &made {
            Ok(_) => self.health.set(None),
            Err(e @ ProvisionerError::NotReady(_)) => self.health.set(Some(e.to_string())),
            Err(_) => {}
        }
        made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A provisioner made clears the trouble a failed creation left, however many were made
    /// before it.
    #[test]
    fn backend_trouble_is_kept_until_a_provisioner_is_made() {
        let health = BackendHealth::default();
        health.set(None);
        assert_eq!(health.trouble(), None);
        health.set(Some("connection refused".into()));
        health.set(Some("still refused".into()));
        assert_eq!(health.trouble().as_deref(), Some("still refused"));
        health.set(None);
        assert_eq!(health.trouble(), None);
        health.set(None);
        assert_eq!(health.trouble(), None);
        health.set(Some("refused again".into()));
        assert_eq!(health.trouble().as_deref(), Some("refused again"));
    }
}

//! Provisioners by name: `fixture` is built in; every other name is a plugin
//! `<name>-provisioner.so` in `$PROVISIONER_PLUGIN_DIR`, else beside the binary or in the
//! system plugin directory.

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

/// Where a package installs the shipped plugins (`BMHCTL_SYSTEM_PLUGIN_DIR` at build time
/// changes it): searched last, when `PROVISIONER_PLUGIN_DIR` is unset.
pub const SYSTEM_PLUGIN_DIR: &str = match option_env!("BMHCTL_SYSTEM_PLUGIN_DIR") {
    Some(dir) => dir,
    None => "/usr/lib/bmhctl/plugins",
};

impl Settings {
    /// The directories a plugin is looked for in, in order: `$PROVISIONER_PLUGIN_DIR` alone;
    /// else `plugins/` beside the bmhctl binary, then [`SYSTEM_PLUGIN_DIR`]. Never relative.
    pub fn plugin_dirs(&self) -> Result<Vec<PathBuf>, trust::Untrusted> {
        let dir = match &self.plugin_dir {
            Some(d) if !d.as_os_str().is_empty() => {
                return if d.is_absolute() {
                    Ok(vec![d.clone()])
                } else {
                    Err(trust::Untrusted::RelativeDir(d.clone()))
                };
            }
            _ => std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(|d| d.join("plugins"))),
        };
        let system = PathBuf::from(SYSTEM_PLUGIN_DIR);
        let mut dirs: Vec<PathBuf> = dir.into_iter().filter(|d| d.is_absolute()).collect();
        if !dirs.contains(&system) {
            dirs.push(system);
        }
        Ok(dirs)
    }

    /// The file of the plugin `name`: `NAME-provisioner.so` in the first of
    /// [`Self::plugin_dirs`] that has one (whether it may be loaded or not: a refused file is
    /// not passed over); in the first directory when none has.
    pub fn plugin_path(&self, name: &str) -> Result<PathBuf, trust::Untrusted> {
        Ok(first_holding(&self.plugin_dirs()?, &plugin_file(name)))
    }

    /// An Ironic is given, by a context or the environment (its endpoint, or an `Ironic`
    /// object's name).
    pub fn ironic_configured(&self) -> bool {
        ["IRONIC_ENDPOINT", "IRONIC_NAME"].iter().any(|k| {
            let set = |v: Option<&String>| v.is_some_and(|v| !v.trim().is_empty());
            set(self.environment.get(*k)) || set(std::env::var(k).ok().as_ref())
        })
    }

    /// BMO's `ProvisionerNamespace`: `$POD_NAMESPACE`, else `default`.
    pub fn default_namespace(&self) -> String {
        self.namespace
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "default".to_string())
    }
}

/// The provisioner of bmhctl's default, which needs an Ironic.
pub const IRONIC: &str = "ironic";

/// The ways out when no Ironic is configured, each a thing to type.
pub fn no_ironic_hint() -> String {
    let contexts = crate::context::Config::load(crate::context::config_file().as_deref())
        .map(|c| {
            c.file
                .contexts
                .into_iter()
                .map(|c| c.name)
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let contexts = if contexts.is_empty() {
        "none yet".to_string()
    } else {
        contexts.join(", ")
    };
    format!(
        " (no Ironic is configured: use --provisioner fixture to run without one, --context NAME \
         for a context's Ironic (contexts: {contexts}; see bmhctl config get-contexts), or set \
         IRONIC_ENDPOINT)"
    )
}

/// The file name of the plugin `name`.
pub fn plugin_file(name: &str) -> String {
    format!("{name}-provisioner.so")
}

/// `dirs[i]/file` for the first directory holding `file` (any kind of file, or a link); in the
/// first directory when none does.
fn first_holding(dirs: &[PathBuf], file: &str) -> PathBuf {
    dirs.iter()
        .map(|d| d.join(file))
        .find(|p| p.symlink_metadata().is_ok())
        .unwrap_or_else(|| dirs.first().map_or_else(|| file.into(), |d| d.join(file)))
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
        let path = settings
            .plugin_path(name)
            .map_err(|why| Error::Usage(why.to_string()))?;
        load(name, &path, asked, settings).map_err(|e| {
            let hint = if !path.exists() {
                " (set PROVISIONER_PLUGIN_DIR, or use --provisioner fixture)".to_string()
            } else if name == IRONIC && !settings.ironic_configured() {
                no_ironic_hint()
            } else {
                String::new()
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

    /// A plugin is taken from the first directory that has its file; a later one is only a
    /// fallback, and a missing plugin is said to be missing from the first.
    #[test]
    fn a_plugin_is_taken_from_the_first_directory_that_has_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (beside, system) = (tmp.path().join("beside"), tmp.path().join("system"));
        for d in [&beside, &system] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("both-provisioner.so"), "").unwrap();
        }
        std::fs::write(system.join("late-provisioner.so"), "").unwrap();
        // Any file counts, even one the loader would refuse: never passed over silently.
        std::os::unix::fs::symlink("/nonexistent", beside.join("dangling-provisioner.so")).unwrap();
        std::fs::write(system.join("dangling-provisioner.so"), "").unwrap();
        let dirs = [beside.clone(), system.clone()];
        let find = |name: &str| first_holding(&dirs, &plugin_file(name));
        assert_eq!(find("both"), beside.join("both-provisioner.so"));
        assert_eq!(find("late"), system.join("late-provisioner.so"));
        assert_eq!(find("dangling"), beside.join("dangling-provisioner.so"));
        assert_eq!(find("absent"), beside.join("absent-provisioner.so"));
    }

    /// `PROVISIONER_PLUGIN_DIR` is the only directory when set; unset, the system directory
    /// comes last.
    #[test]
    fn the_system_directory_is_searched_last_and_only_without_the_variable() {
        let set = Settings {
            plugin_dir: Some(PathBuf::from("/opt/p")),
            ..Settings::default()
        };
        assert_eq!(set.plugin_dirs().unwrap(), vec![PathBuf::from("/opt/p")]);
        let relative = Settings {
            plugin_dir: Some(PathBuf::from("p")),
            ..Settings::default()
        };
        assert!(relative.plugin_dirs().is_err());
        for unset in [None, Some(PathBuf::new())] {
            let dirs = Settings {
                plugin_dir: unset,
                ..Settings::default()
            }
            .plugin_dirs()
            .unwrap();
            let beside = std::env::current_exe()
                .unwrap()
                .parent()
                .unwrap()
                .join("plugins");
            assert_eq!(dirs, vec![beside, PathBuf::from(SYSTEM_PLUGIN_DIR)]);
        }
    }

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

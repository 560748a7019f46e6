//! The Ironic provisioner's settings, read from the environment variables BMO reads (spec
//! `bmo-state-machine.md` 8.2).

/// Settings beyond the client's (the client reads its own: endpoint, auth, TLS, timeout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvisionerConfig {
    pub deploy_kernel_url: String,
    pub deploy_ramdisk_url: String,
    pub deploy_iso_url: String,
    /// `PROVISIONING_LIMIT`: busy non-virtual-media nodes allowed at once.
    pub provisioning_limit: usize,
    /// `LIVE_ISO_FORCE_PERSISTENT_BOOT_DEVICE`.
    pub live_iso_force_persistent_boot_device: String,
    /// `DIRECT_DEPLOY_FORCE_PERSISTENT_BOOT_DEVICE`.
    pub direct_deploy_force_persistent_boot_device: String,
    /// `IRONIC_EXTERNAL_URL_V6`.
    pub external_url_v6: String,
    /// `PROVISIONING_NETWORK_DISABLED`.
    pub provisioning_network_disabled: bool,
    /// A preprovisioning image builder is configured (the host's feature flag).
    pub have_preprov_image_builder: bool,
    /// The host will ask `due_hosts` (its feature `DueHosts`): keep the node watch and cache.
    pub answer_due_hosts: bool,
    /// The host will ask `ready_hosts` (its feature `ReadyHosts`) and `hold_passes` is on.
    pub answer_ready_hosts: bool,
    /// `BMHCTL_IRONIC_HOLD_PASSES`: hold a pass back for the next shared listing (`ready_hosts`).
    pub hold_passes: bool,
    /// `BMHCTL_IRONIC_DELTA_FROM`: from this many nodes (ports) listed, the shared listings read
    /// only what changed since the last between full ones (at least every 15 s).
    pub delta_from: usize,
}

/// `BMHCTL_IRONIC_HOLD_PASSES` when unset: on, fewer calls at the same speed (docs/benchmarks.md).
pub const DEFAULT_HOLD_PASSES: bool = true;

pub const DEFAULT_PROVISIONING_LIMIT: usize = 20;

const HOLD_PASSES: &str = "BMHCTL_IRONIC_HOLD_PASSES";
const DELTA_FROM: &str = "BMHCTL_IRONIC_DELTA_FROM";

/// A count of nodes; `None` when unset or empty.
fn parse_count(name: &str, raw: Option<String>) -> Result<Option<usize>, String> {
    match raw.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| {
            format!("invalid value for variable {name}={v}, must be a number of nodes")
        }),
    }
}

/// What an empty environment gives.
impl Default for ProvisionerConfig {
    fn default() -> Self {
        Self::from_lookup(|_| None, false).expect("no setting is valid")
    }
}

/// `PROVISIONING_LIMIT`'s value, with BMO's message for a non-integer.
pub fn parse_provisioning_limit(raw: Option<&str>) -> Result<usize, String> {
    match raw {
        None | Some("") => Ok(DEFAULT_PROVISIONING_LIMIT),
        Some(v) => v
            .trim()
            .parse::<usize>()
            .map_err(|_| format!("invalid value set for variable PROVISIONING_LIMIT={v}")),
    }
}

/// A `true`/`false` setting (any case); `None` when unset or empty.
fn parse_bool(name: &str, raw: Option<String>) -> Result<Option<bool>, String> {
    match raw.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(v) => Err(format!(
            "invalid value for variable {name}={v}, must be true or false"
        )),
    }
}

fn persistent_boot_device(name: &str, raw: Option<String>) -> Result<String, String> {
    match raw.as_deref() {
        None | Some("") => Ok("Default".into()),
        Some(v @ ("Default" | "Always" | "Never")) => Ok(v.to_string()),
        Some(v) => Err(format!(
            "invalid value for variable {name}={v}, must be one of Default, Always, Never"
        )),
    }
}

impl ProvisionerConfig {
    /// From `get`: the plugin's settings (the host's variables, else the process environment).
    pub fn from_lookup(
        get: impl Fn(&str) -> Option<String>,
        have_preprov_image_builder: bool,
    ) -> Result<Self, String> {
        let text = |k: &str| get(k).unwrap_or_default().trim().to_string();
        let boot_device = |k: &str| persistent_boot_device(k, get(k));
        let kernel = text("DEPLOY_KERNEL_URL");
        let ramdisk = text("DEPLOY_RAMDISK_URL");
        if !ramdisk.is_empty() && kernel.is_empty() {
            return Err("DEPLOY_RAMDISK_URL requires DEPLOY_KERNEL_URL to be set also".into());
        }
        if !have_preprov_image_builder && kernel.is_empty() != ramdisk.is_empty() {
            return Err("DEPLOY_KERNEL_URL and DEPLOY_RAMDISK_URL can only be set together".into());
        }
        Ok(ProvisionerConfig {
            deploy_kernel_url: kernel,
            deploy_ramdisk_url: ramdisk,
            deploy_iso_url: text("DEPLOY_ISO_URL"),
            provisioning_limit: parse_provisioning_limit(get("PROVISIONING_LIMIT").as_deref())?,
            live_iso_force_persistent_boot_device: boot_device(
                "LIVE_ISO_FORCE_PERSISTENT_BOOT_DEVICE",
            )?,
            direct_deploy_force_persistent_boot_device: boot_device(
                "DIRECT_DEPLOY_FORCE_PERSISTENT_BOOT_DEVICE",
            )?,
            external_url_v6: text("IRONIC_EXTERNAL_URL_V6"),
            provisioning_network_disabled: text("PROVISIONING_NETWORK_DISABLED")
                .eq_ignore_ascii_case("true"),
            have_preprov_image_builder,
            hold_passes: parse_bool(HOLD_PASSES, get(HOLD_PASSES))?.unwrap_or(DEFAULT_HOLD_PASSES),
            delta_from: parse_count(DELTA_FROM, get(DELTA_FROM))?
                .unwrap_or(super::delta::DEFAULT_DELTA_FROM),
            answer_due_hosts: false,
            answer_ready_hosts: false,
        })
    }
}

#[cfg(test)]
mod hold_passes {
    use super::*;

    fn with(value: Option<&str>) -> Result<ProvisionerConfig, String> {
        ProvisionerConfig::from_lookup(
            |k| (k == "BMHCTL_IRONIC_HOLD_PASSES").then(|| value.map(String::from))?,
            false,
        )
    }

    #[test]
    fn hold_passes_is_read_and_a_bad_value_names_the_variable() {
        assert_eq!(with(None).unwrap().hold_passes, DEFAULT_HOLD_PASSES);
        assert_eq!(with(Some("")).unwrap().hold_passes, DEFAULT_HOLD_PASSES);
        assert!(with(Some("TRUE")).unwrap().hold_passes);
        assert!(!with(Some(" false ")).unwrap().hold_passes);
        assert_eq!(
            with(Some("yes")).unwrap_err(),
            "invalid value for variable BMHCTL_IRONIC_HOLD_PASSES=yes, must be true or false"
        );
    }
}

#[cfg(test)]
mod delta_from {
    use super::*;

    fn with(value: Option<&str>) -> Result<ProvisionerConfig, String> {
        ProvisionerConfig::from_lookup(
            |k| (k == "BMHCTL_IRONIC_DELTA_FROM").then(|| value.map(String::from))?,
            false,
        )
    }

    #[test]
    fn delta_from_is_read_and_a_bad_value_names_the_variable() {
        let default = super::super::delta::DEFAULT_DELTA_FROM;
        assert_eq!(with(None).unwrap().delta_from, default);
        assert_eq!(with(Some(" ")).unwrap().delta_from, default);
        assert_eq!(with(Some(" 0 ")).unwrap().delta_from, 0);
        assert_eq!(
            with(Some("many")).unwrap_err(),
            "invalid value for variable BMHCTL_IRONIC_DELTA_FROM=many, must be a number of nodes"
        );
    }
}

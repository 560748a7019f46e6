//! The config drive in Ironic's JSON form (spec 3.7).

use bmhctl_plugin_sdk::HostConfigData;
use serde_json::Value;

/// Who the host is, for the default meta data.
#[derive(Debug, Clone, Default)]
pub struct HostIdentity<'a> {
    pub uid: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

/// `{}` for a live ISO; else `{"meta_data": …, "network_data"?: …, "user_data"?: …}`.
/// Errors are the transient error texts of the spec.
pub fn config_drive(
    host: &HostIdentity<'_>,
    data: &HostConfigData,
    live_iso: bool,
) -> Result<Value, String> {
    let _ = (host, data, live_iso);
    todo!()
}

//! core/v1 Secret, as far as BMC credentials and host config data need it.

use crate::meta::{Extra, ObjectMeta};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A core/v1 Secret: BMC credentials (`username`, `password`), user/network/meta data for the
/// config drive, OCI registry credentials, or event-subscription HTTP headers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Secret {
    /// `apiVersion`: `v1`.
    #[serde(default)]
    pub api_version: String,
    /// `kind`: `Secret`.
    #[serde(default)]
    pub kind: String,
    /// Name, namespace and `resourceVersion` (what BMO records as the credentials version).
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Base64-encoded values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, String>,
    /// Plain values; they win over `data` for the same key, as in Kubernetes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub string_data: BTreeMap<String, String>,
    /// `type`, e.g. `Opaque` or `kubernetes.io/dockerconfigjson`.
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// Other fields, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

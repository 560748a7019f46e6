//! core/v1 Secret, as far as BMC credentials and host config data need it.

use crate::meta::{Extra, ObjectMeta};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A core/v1 Secret: BMC credentials, config-drive data, registry credentials or HTTP headers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Secret {
    /// `apiVersion`: `v1`.
    pub api_version: String,
    /// `kind`: `Secret`.
    pub kind: String,
    /// Name, namespace and `resourceVersion` (what BMO records as the credentials version).
    pub metadata: ObjectMeta,
    /// Base64-encoded values.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, String>,
    /// Plain values; they win over `data` for the same key, as in Kubernetes.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub string_data: BTreeMap<String, String>,
    /// `type`, e.g. `Opaque` or `kubernetes.io/dockerconfigjson`.
    #[serde(rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// Other fields, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

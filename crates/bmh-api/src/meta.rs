//! The slice of Kubernetes' ObjectMeta that BareMetalHost files carry.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::extra::Extra;

/// Kubernetes `metadata` (ObjectMeta): the fields bmhctl uses; the rest is kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// `name`: with `namespace`, names the object (companions carry their host's name).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// `namespace`: empty means [`DEFAULT_NAMESPACE`].
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// `labels`: free key/value tags.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// `annotations`: where BMO's control annotations live (see [`crate::annotations`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// `uid`: the object's unique ID; BMO hands a host's to Ironic as its instance UUID.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// `generation`: bumped on every spec change; conditions record it as `observedGeneration`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub generation: i64,
    /// `resourceVersion`: version of the stored object.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    /// `deletionTimestamp`: set once deletion is asked for (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
    /// `finalizers`: the object is only removed once this is empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
    /// Other `metadata` fields, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// For `skip_serializing_if`: the value is its type's zero (`0`, `false`, `0.0`).
pub fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// The namespace used when a document names none.
pub const DEFAULT_NAMESPACE: &str = "default";

impl ObjectMeta {
    /// The namespace, with Kubernetes' default applied.
    pub fn namespace_or_default(&self) -> &str {
        if self.namespace.is_empty() {
            DEFAULT_NAMESPACE
        } else {
            &self.namespace
        }
    }

    /// The object's key: its name in [`Self::namespace_or_default`].
    pub fn key(&self) -> ObjectKey {
        ObjectKey::new(self.namespace_or_default(), &self.name)
    }
}

/// `namespace/name`, the key objects are known by.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObjectKey {
    /// Namespace of the object.
    pub namespace: String,
    /// Name of the object.
    pub name: String,
}

impl ObjectKey {
    /// The key of `name` in `namespace`.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

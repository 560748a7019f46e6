//! What a loader accepts besides hosts and Secrets.

/// What the loader accepts besides hosts and Secrets: a provisioner plugin's requirements
/// (see `bmhctl_plugin_sdk::abi::HostRequirements`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Object kinds kept in the loaded objects (matched on `apiVersion` and `kind`).
    pub extra_kinds: Vec<bmhctl_plugin_sdk::abi::ObjectKind>,
    /// Only documents of the extra kinds in this namespace are kept; `None`: every namespace.
    pub namespace: Option<String>,
}

impl LoadOptions {
    fn accepts_kind(&self, api_version: &str, kind: &str) -> bool {
        self.extra_kinds
            .iter()
            .any(|k| k.api_version == api_version && k.kind == kind)
    }

    /// Whether a document of this kind in this namespace is kept for the plugin.
    pub fn accepts_in(&self, api_version: &str, kind: &str, namespace: &str) -> bool {
        self.accepts_kind(api_version, kind)
            && self.namespace.as_deref().is_none_or(|ns| ns == namespace)
    }

    /// Whether a document of this kind in this namespace is kept as an object: one of the
    /// extra kinds, in the namespace, or a HostUpdatePolicy (which the state machine reads).
    pub fn accepts(&self, api_version: &str, kind: &str, namespace: &str) -> bool {
        (api_version == bmh_api::API_VERSION && kind == bmh_api::HOST_UPDATE_POLICY_KIND)
            || self.accepts_in(api_version, kind, namespace)
    }
}

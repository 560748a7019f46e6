//! What a loader accepts besides hosts and Secrets.

/// What the loader accepts besides hosts and Secrets: a plugin's kinds, and input rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Object kinds kept in the loaded objects (matched on `apiVersion` and `kind`).
    pub extra_kinds: Vec<bmhctl_plugin_sdk::abi::ObjectKind>,
    /// Only documents of the extra kinds in this namespace are kept; `None`: every namespace.
    pub namespace: Option<String>,
    /// The command line's rules for input (strict by default).
    pub input: InputPolicy,
    /// Documents of kinds bmhctl does not read are kept, not skipped (`apply` stores them all,
    /// as `kubectl apply` does); near misses are refused all the same.
    pub keep_every_kind: bool,
}

impl LoadOptions {
    pub fn with_input(input: InputPolicy) -> Self {
        Self {
            input,
            ..Self::default()
        }
    }

    /// Whether a document of this kind in this namespace is kept for the plugin.
    pub fn accepts_in(&self, api_version: &str, kind: &str, namespace: &str) -> bool {
        self.knows_kind(api_version, kind)
            && self.namespace.as_deref().is_none_or(|ns| ns == namespace)
    }

    /// Whether documents of this kind are the plugin's, in whatever namespace.
    pub fn knows_kind(&self, api_version: &str, kind: &str) -> bool {
        self.extra_kinds
            .iter()
            .any(|k| k.api_version == api_version && k.kind == kind)
    }

    /// Whether a document is kept as an object: one of the extra kinds, or a HostUpdatePolicy.
    pub fn accepts(&self, api_version: &str, kind: &str, namespace: &str) -> bool {
        (api_version == bmh_api::API_VERSION && kind == bmh_api::HOST_UPDATE_POLICY_KIND)
            || self.accepts_in(api_version, kind, namespace)
    }
}

/// What the loaders do with fields no schema knows (kubectl's `--validate`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// An unknown field is bad input (exit 2): input that would touch hardware is exact.
    #[default]
    Strict,
    /// An unknown field is a warning on stderr.
    Warn,
    /// Unknown fields are kept untouched, unmentioned.
    Ignore,
}

/// How exact the input must be, from the command line, carried to every load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputPolicy {
    pub fields: FieldValidation,
    /// Documents of kinds bmhctl does not know are skipped (and counted) instead of refused.
    pub skip_unknown_kinds: bool,
    /// Warnings are not printed (`--quiet`); they are still counted.
    pub quiet: bool,
    /// The largest input file read, in bytes (`BMHCTL_MAX_FILE_SIZE`).
    pub max_file_size: u64,
}

impl Default for InputPolicy {
    fn default() -> Self {
        Self {
            fields: FieldValidation::default(),
            skip_unknown_kinds: false,
            quiet: false,
            max_file_size: crate::persist::files::paths::DEFAULT_MAX_FILE_SIZE,
        }
    }
}

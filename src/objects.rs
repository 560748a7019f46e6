//! Read-only access to the objects a host refers to (its Secrets, later firmware objects),
//! whether they come from the files of one invocation or from the local store.

use bmh_api::ObjectKey;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A Secret with its values decoded (`data` base64-decoded, `stringData` merged over it) and a
/// version token: a hash of its content, playing Kubernetes' `resourceVersion`.
#[derive(Clone, PartialEq, Eq)]
pub struct ResolvedSecret {
    pub key: ObjectKey,
    pub version: String,
    pub data: BTreeMap<String, Vec<u8>>,
}

impl std::fmt::Debug for ResolvedSecret {
    // Values may be passwords: never print them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedSecret")
            .field("key", &self.key)
            .field("version", &self.version)
            .field("keys", &self.data.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ResolvedSecret {
    /// Builds a secret and computes its version from its content.
    pub fn new(key: ObjectKey, data: BTreeMap<String, Vec<u8>>) -> Self {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for (k, v) in &data {
            h.update((k.len() as u64).to_le_bytes());
            h.update(k.as_bytes());
            h.update((v.len() as u64).to_le_bytes());
            h.update(v);
        }
        let digest = h.finalize();
        let version = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        Self { key, version, data }
    }

    /// The value of `key` as text (lossy UTF-8).
    pub fn get_str(&self, key: &str) -> Option<String> {
        self.data
            .get(key)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }
}

/// Where the state machine reads companion objects.
pub trait ObjectSource: Send + Sync {
    fn secret(&self, key: &ObjectKey) -> Option<Arc<ResolvedSecret>>;
}

/// An in-memory object source: the Secrets of one invocation.
#[derive(Debug, Default, Clone)]
pub struct SecretMap(pub BTreeMap<ObjectKey, Arc<ResolvedSecret>>);

impl ObjectSource for SecretMap {
    fn secret(&self, key: &ObjectKey) -> Option<Arc<ResolvedSecret>> {
        self.0.get(key).cloned()
    }
}

impl SecretMap {
    pub fn insert(&mut self, secret: ResolvedSecret) {
        self.0.insert(secret.key.clone(), Arc::new(secret));
    }
}

//! Read-only access to the objects hosts and provisioner plugins refer to, from files or store.

use bmh_api::ObjectKey;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A Secret with its values decoded and a content hash playing `resourceVersion`.
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

    pub fn get_str(&self, key: &str) -> Option<String> {
        self.data
            .get(key)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }
}

/// The `apiVersion` and `kind` of a Secret.
/// The BMC password `import --from-ironic` writes where Ironic hides the real one: a Secret still
/// holding it is refused wherever it would reach a BMC.
pub const PASSWORD_PLACEHOLDER: &str = "REPLACE-ME";

/// Why a BMC credentials Secret cannot be used as it is (`None`: it can).
pub fn placeholder_problem(key: &ObjectKey, password: Option<&[u8]>) -> Option<String> {
    (password.map(<[u8]>::trim_ascii) == Some(PASSWORD_PLACEHOLDER.as_bytes())).then(|| {
        format!(
            "Secret {key} still holds the password placeholder {PASSWORD_PLACEHOLDER} that \
             `bmhctl import` wrote: put the BMC password in"
        )
    })
}

pub const SECRET_API_VERSION: &str = "v1";
pub const SECRET_KIND: &str = "Secret";

/// Where the state machine and provisioner plugins read companion objects.
pub trait ObjectSource: Send + Sync {
    fn secret(&self, key: &ObjectKey) -> Option<Arc<ResolvedSecret>>;

    /// Any object as JSON; a Secret as [`secret_object`]. The default knows Secrets only.
    fn object(&self, api_version: &str, kind: &str, key: &ObjectKey) -> Option<Value> {
        if api_version == SECRET_API_VERSION && kind == SECRET_KIND {
            self.secret(key).map(|s| secret_object(&s))
        } else {
            None
        }
    }
}

/// A Secret as a Kubernetes object, every value base64-encoded in `data`.
pub fn secret_object(secret: &ResolvedSecret) -> Value {
    use base64::Engine as _;
    let data: serde_json::Map<String, Value> = secret
        .data
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                Value::String(base64::engine::general_purpose::STANDARD.encode(v)),
            )
        })
        .collect();
    serde_json::json!({
        "apiVersion": SECRET_API_VERSION,
        "kind": SECRET_KIND,
        "metadata": {"name": secret.key.name, "namespace": secret.key.namespace},
        "data": data,
    })
}

/// Identifies an object of any kind: `apiVersion`, `kind`, then `namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TypedKey {
    pub api_version: String,
    pub kind: String,
    pub key: ObjectKey,
}

impl TypedKey {
    pub fn new(api_version: impl Into<String>, kind: impl Into<String>, key: ObjectKey) -> Self {
        Self {
            api_version: api_version.into(),
            kind: kind.into(),
            key,
        }
    }
}

impl std::fmt::Display for TypedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.api_version, self.kind, self.key)
    }
}

/// An in-memory object source: Secrets decoded, other objects as JSON; cheap to clone.
#[derive(Debug, Default, Clone)]
pub struct ObjectMap {
    secrets: BTreeMap<ObjectKey, Arc<ResolvedSecret>>,
    objects: BTreeMap<TypedKey, Arc<Value>>,
}

impl ObjectSource for ObjectMap {
    fn secret(&self, key: &ObjectKey) -> Option<Arc<ResolvedSecret>> {
        self.secrets.get(key).cloned()
    }

    fn object(&self, api_version: &str, kind: &str, key: &ObjectKey) -> Option<Value> {
        if api_version == SECRET_API_VERSION && kind == SECRET_KIND {
            return self.secret(key).map(|s| secret_object(&s));
        }
        self.objects
            .get(&TypedKey::new(api_version, kind, key.clone()))
            .map(|v| Value::clone(v))
    }
}

impl ObjectMap {
    pub fn insert_secret(&mut self, secret: ResolvedSecret) {
        self.secrets.insert(secret.key.clone(), Arc::new(secret));
    }

    /// Adds (or replaces) an object of another kind; a Secret is refused (returns false).
    pub fn insert_object(&mut self, key: TypedKey, value: Value) -> bool {
        if key.api_version == SECRET_API_VERSION && key.kind == SECRET_KIND {
            return false;
        }
        self.objects.insert(key, Arc::new(value));
        true
    }

    pub fn get_secret(&self, key: &ObjectKey) -> Option<&Arc<ResolvedSecret>> {
        self.secrets.get(key)
    }

    pub fn contains_secret(&self, key: &ObjectKey) -> bool {
        self.secrets.contains_key(key)
    }

    /// The objects other than Secrets, in order of kind, namespace and name.
    pub fn objects(&self) -> impl Iterator<Item = (&TypedKey, &Value)> {
        self.objects.iter().map(|(k, v)| (k, &**v))
    }
}

#[cfg(test)]
impl ObjectMap {
    pub fn secret_count(&self) -> usize {
        self.secrets.len()
    }

    /// The keys of the objects other than Secrets, in order.
    pub fn object_keys(&self) -> impl Iterator<Item = &TypedKey> {
        self.objects.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map() -> ObjectMap {
        let mut m = ObjectMap::default();
        let mut data = BTreeMap::new();
        data.insert("username".to_string(), b"admin".to_vec());
        data.insert("password".to_string(), vec![0xff, 0x00, b'x']);
        m.insert_secret(ResolvedSecret::new(ObjectKey::new("lab", "bmc"), data));
        let widget = json!({
            "apiVersion": "example.bmhctl.metal3.io/v1alpha1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {"colour": "blue"},
        });
        assert!(m.insert_object(
            TypedKey::new(
                "example.bmhctl.metal3.io/v1alpha1",
                "Widget",
                ObjectKey::new("default", "w"),
            ),
            widget,
        ));
        m
    }

    #[test]
    fn secrets_answer_their_re_encoded_form() {
        let m = map();
        let key = ObjectKey::new("lab", "bmc");
        assert_eq!(
            m.secret(&key).unwrap().get_str("username").unwrap(),
            "admin"
        );
        assert_eq!(
            m.object("v1", "Secret", &key).unwrap(),
            json!({
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "bmc", "namespace": "lab"},
                "data": {"password": "/wB4", "username": "YWRtaW4="},
            })
        );
        // Only under its own apiVersion, kind and namespace.
        assert_eq!(m.object("v2", "Secret", &key), None);
        assert_eq!(
            m.object("v1", "Secret", &ObjectKey::new("default", "bmc")),
            None
        );
        assert!(m.contains_secret(&key));
        assert_eq!(m.secret_count(), 1);
    }

    #[test]
    fn other_objects_by_api_version_kind_namespace_and_name() {
        let mut m = map();
        let key = ObjectKey::new("default", "w");
        let w = m
            .object("example.bmhctl.metal3.io/v1alpha1", "Widget", &key)
            .unwrap();
        assert_eq!(w["spec"]["colour"], "blue");
        assert_eq!(
            m.object("example.bmhctl.metal3.io/v1", "Widget", &key),
            None
        );
        assert_eq!(
            m.object("example.bmhctl.metal3.io/v1alpha1", "Gadget", &key),
            None
        );
        assert_eq!(
            m.object(
                "example.bmhctl.metal3.io/v1alpha1",
                "Widget",
                &ObjectKey::new("lab", "w")
            ),
            None
        );
        // Secrets are never taken as plain JSON.
        assert!(!m.insert_object(
            TypedKey::new("v1", "Secret", ObjectKey::new("default", "x")),
            json!({}),
        ));
        assert_eq!(
            m.object("v1", "Secret", &ObjectKey::new("default", "x")),
            None
        );
        let keys: Vec<String> = m.object_keys().map(|k| k.to_string()).collect();
        assert_eq!(keys, ["example.bmhctl.metal3.io/v1alpha1 Widget default/w"]);
    }

    #[test]
    fn the_default_object_method_knows_secrets_only() {
        struct Only(ObjectMap);
        impl ObjectSource for Only {
            fn secret(&self, key: &ObjectKey) -> Option<Arc<ResolvedSecret>> {
                self.0.secret(key)
            }
        }
        let o = Only(map());
        assert!(
            o.object("v1", "Secret", &ObjectKey::new("lab", "bmc"))
                .is_some()
        );
        assert_eq!(
            o.object(
                "example.bmhctl.metal3.io/v1alpha1",
                "Widget",
                &ObjectKey::new("default", "w")
            ),
            None
        );
    }
}

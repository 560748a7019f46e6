//! A host as a metal3 cluster accepts it: its status in BMO's status annotation.

use crate::error::{Error, Result};
use crate::objects::{SECRET_API_VERSION, SECRET_KIND};
use crate::record::HostRecord;
use bmh_api::annotations::STATUS;
use bmh_api::{BareMetalHost, BareMetalHostStatus, ErrorType, ObjectKey, OperationalStatus};
use serde_json::{Map, Value, json};

pub fn to_value<T: serde::Serialize>(v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::internal("cannot encode as JSON", e))
}

/// Why a host cannot go to a metal3 cluster at all.
pub fn refusal(r: &HostRecord) -> Option<String> {
    if let Some(bmc) = r.host.spec.bmc.as_ref()
        && let Ok(access) = bmh_bmc::parse(&bmc.address)
        && access.is_extension()
    {
        return Some(format!(
            "spec.bmc.address {}: {}:// is bmhctl's own BMC scheme, which a metal3 cluster \
             refuses (Unknown BMC type '{}'); give the host a BMO scheme (ipmi://, redfish://, \
             ...) first",
            bmc.address,
            access.profile().name,
            access.bmc_type()
        ));
    }
    if r.book.deletion_requested.is_some() {
        return Some(
            "it is being deleted: let the deletion finish (bmhctl reconcile / delete) first".into(),
        );
    }
    None
}

/// The host as it goes to a cluster, and notes on the status values mapped.
pub fn cluster_host(r: &HostRecord) -> Result<(BareMetalHost, Vec<String>)> {
    let mut host = r.host.clone();
    let mut notes = Vec::new();
    if host.spec.architecture.is_empty() && !r.book.architecture.is_empty() {
        host.spec.architecture = r.book.architecture.clone();
    }
    host.metadata.annotations.remove(STATUS);
    if let Some(status) = host.status.take()
        && status != BareMetalHostStatus::default()
    {
        let (status, n) = cluster_status(status);
        notes = n;
        let text = serde_json::to_string(&status)
            .map_err(|e| Error::internal("cannot encode the status as JSON", e))?;
        host.metadata.annotations.insert(STATUS.to_string(), text);
    }
    Ok((*host, notes))
}

/// The status as BMO's status annotation accepts it (docs/metal3-migration.md).
pub fn cluster_status(mut status: BareMetalHostStatus) -> (BareMetalHostStatus, Vec<String>) {
    let mut notes = Vec::new();
    if matches!(
        status.error_type,
        ErrorType::ServicingError | ErrorType::DetachError
    ) {
        let detach = status.error_type == ErrorType::DetachError;
        notes.push(format!(
            "status.errorType {:?} is not accepted in BMO's status annotation: exported \
             without the error (was: {:?}); BMO records it again if {} fails again",
            status.error_type.as_str(),
            status.error_message,
            if detach { "detaching" } else { "servicing" }
        ));
        if detach {
            status.error_count = 0;
        }
        status.error_type = ErrorType::None;
        status.error_message.clear();
        status.operational_status = OperationalStatus::Ok;
    }
    if status.operational_status == OperationalStatus::Servicing {
        notes.push(
            "status.operationalStatus \"servicing\" is not accepted in BMO's status annotation: \
             exported as \"OK\"; BMO goes back to servicing while firmware changes are pending"
                .into(),
        );
        status.operational_status = OperationalStatus::Ok;
    }
    let dropped: Vec<String> = status
        .extra
        .keys()
        .map(|k| format!("status.{k}"))
        .chain(
            status
                .provisioning
                .extra
                .keys()
                .map(|k| format!("status.provisioning.{k}")),
        )
        .collect();
    if !dropped.is_empty() {
        notes.push(format!(
            "{} not in BMO's status: left out of the status annotation",
            dropped.join(", ")
        ));
        status.extra.clear();
        status.provisioning.extra.clear();
    }
    (status, notes)
}

/// The Secrets a host references, in its namespace (BMO's webhook refuses other namespaces).
pub fn secret_refs(host: &BareMetalHost) -> Vec<ObjectKey> {
    let ns = host.metadata.namespace_or_default();
    let mut out = Vec::new();
    let mut push = |name: &str, namespace: &str| {
        if name.is_empty() {
            return;
        }
        let namespace = if namespace.is_empty() { ns } else { namespace };
        let k = ObjectKey::new(namespace, name);
        if !out.contains(&k) {
            out.push(k);
        }
    };
    let spec = &host.spec;
    if let Some(bmc) = &spec.bmc {
        push(&bmc.credentials_name, "");
    }
    for r in [&spec.user_data, &spec.network_data, &spec.meta_data]
        .into_iter()
        .flatten()
    {
        push(&r.name, &r.namespace);
    }
    push(&spec.preprovisioning_network_data_name, "");
    out
}

/// Fields of `metadata` an API server sets, never exported.
const SERVER_METADATA: [&str; 8] = [
    "uid",
    "generation",
    "resourceVersion",
    "deletionTimestamp",
    "creationTimestamp",
    "managedFields",
    "ownerReferences",
    "selfLink",
];

/// Metadata as a cluster takes it on create; finalizers only when `keep_finalizers`.
pub fn clean_metadata(meta: &Value, key: &ObjectKey, keep_finalizers: bool) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), Value::String(key.name.clone()));
    out.insert("namespace".into(), Value::String(key.namespace.clone()));
    if let Some(m) = meta.as_object() {
        for (k, v) in m {
            let skip = SERVER_METADATA.contains(&k.as_str())
                || k == "name"
                || k == "namespace"
                || (k == "finalizers" && !keep_finalizers)
                || v.is_null()
                || v.as_object().is_some_and(Map::is_empty)
                || v.as_array().is_some_and(Vec::is_empty);
            if !skip {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// A companion object as a cluster takes it: clean metadata, no `status`.
pub fn clean_object(v: &Value, key: &ObjectKey, keep_finalizers: bool) -> Value {
    let mut out = v.clone();
    out["metadata"] = clean_metadata(&v["metadata"], key, keep_finalizers);
    if let Some(o) = out.as_object_mut() {
        o.remove("status");
        o.remove(crate::persist::store::hosts::BOOK_KEY);
    }
    out
}

/// A Secret as exported: its `type`, labels, annotations and `data`.
pub fn clean_secret(v: &Value) -> Value {
    let key = crate::persist::store::object_key(v);
    let mut out = json!({
        "apiVersion": SECRET_API_VERSION,
        "kind": SECRET_KIND,
        "metadata": clean_metadata(&v["metadata"], &key, false),
    });
    if let Some(t) = v.get("type").filter(|t| t.is_string()) {
        out["type"] = t.clone();
    }
    out["data"] = v.get("data").cloned().unwrap_or_else(|| json!({}));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(op: OperationalStatus, et: ErrorType) -> BareMetalHostStatus {
        BareMetalHostStatus {
            operational_status: op,
            error_type: et,
            error_message: "boom".into(),
            error_count: 3,
            ..Default::default()
        }
    }

    #[test]
    fn values_the_status_annotation_refuses_are_mapped() {
        let (s, n) = cluster_status(status(OperationalStatus::Servicing, ErrorType::None));
        assert_eq!(s.operational_status, OperationalStatus::Ok);
        assert_eq!(s.error_count, 3);
        assert_eq!(n.len(), 1);

        let (s, n) = cluster_status(status(OperationalStatus::Error, ErrorType::ServicingError));
        assert_eq!(
            (s.operational_status, s.error_type, s.error_message.as_str()),
            (OperationalStatus::Ok, ErrorType::None, "")
        );
        assert_eq!(s.error_count, 3, "kept for the backoff");
        assert_eq!(n.len(), 1);

        let (s, _) = cluster_status(status(OperationalStatus::Error, ErrorType::DetachError));
        assert_eq!(
            (s.operational_status, s.error_type, s.error_count),
            (OperationalStatus::Ok, ErrorType::None, 0)
        );

        let (s, n) = cluster_status(status(
            OperationalStatus::Error,
            ErrorType::ProvisioningError,
        ));
        assert_eq!(
            (s.operational_status, s.error_type, s.error_message.as_str()),
            (
                OperationalStatus::Error,
                ErrorType::ProvisioningError,
                "boom"
            )
        );
        assert!(n.is_empty());
    }

    #[test]
    fn unknown_status_fields_are_dropped() {
        let mut st = status(OperationalStatus::Ok, ErrorType::None);
        st.extra.insert("bmhctlOnly".into(), json!(1));
        let (s, n) = cluster_status(st);
        assert!(s.extra.is_empty());
        assert!(n[0].contains("status.bmhctlOnly"), "{n:?}");
    }

    #[test]
    fn metadata_keeps_only_what_a_user_sets() {
        let m = json!({"name": "h", "uid": "u", "generation": 3, "resourceVersion": "7",
            "finalizers": ["f"], "labels": {"a": "b"}, "annotations": {}});
        let key = ObjectKey::new("default", "h");
        assert_eq!(
            clean_metadata(&m, &key, false),
            json!({"name": "h", "namespace": "default", "labels": {"a": "b"}})
        );
        assert_eq!(clean_metadata(&m, &key, true)["finalizers"], json!(["f"]));
    }
}

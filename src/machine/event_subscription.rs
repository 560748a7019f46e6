//! What BMO's BMCEventSubscription controller does with one subscription (its `Reconcile`),
//! decided from what is known now; [`crate::runner`] carries it out and writes the status.
//!
//! bmhctl differs from BMO only for a host that cannot be asked: a host not registered yet is
//! waited for without an error (BMO calls Ironic with an empty node ID and fails), and a
//! removed subscription whose host is gone too is forgotten with a warning (BMO's finalizer
//! would hold it forever; a removed document cannot be held).

use crate::objects::ObjectSource;
use bmh_api::{BmcEventSubscription, ObjectKey};
use std::collections::BTreeMap;
use std::time::Duration;

/// BMO's `subscriptionRetryDelay`: how long a subscription whose host is missing waits.
pub const SUBSCRIPTION_RETRY_DELAY: Duration = Duration::from_secs(600);
/// BMO's `provisionerNotReadyRetryDelay`.
pub const PROVISIONER_NOT_READY_DELAY: Duration = Duration::from_secs(30);
/// How long a subscription waits for its host to be registered before looking again.
pub const HOST_NOT_REGISTERED_DELAY: Duration = Duration::from_secs(10);

/// BMO's `status.error` texts.
pub const CREATE_FAILED: &str = "failed to create a subscription";
pub const DELETE_FAILED: &str = "failed to delete a subscription";

/// The subscription's host, as far as the subscription cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostView {
    /// `status.provisioning.ID`; empty until the host is registered.
    pub provisioner_id: String,
}

/// What to do with a subscription now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Made already: nothing to do until it changes.
    Done,
    /// Its host is missing: write `error`, look again after `retry_after`.
    HostMissing {
        error: String,
        retry_after: Duration,
    },
    /// Its host is not registered yet: look again after `retry_after`, write nothing.
    WaitForHost { retry_after: Duration },
    /// Make the subscription with the `httpHeadersRef` Secret's headers, or, when they cannot
    /// be read, write BMO's header error and back off.
    Create {
        headers: Result<Vec<BTreeMap<String, String>>, String>,
    },
    /// Remove it from the BMC.
    Delete,
    /// Being deleted with nothing to remove (never made, or its host is gone): forget it.
    Forget { warning: Option<String> },
}

/// BMO's `Reconcile` for `sub`: `host` is `None` when the host is missing; `deleting` when the
/// subscription's document was removed; `objects` hold the header Secret.
pub fn decide(
    sub: &BmcEventSubscription,
    host: Option<&HostView>,
    deleting: bool,
    objects: &dyn ObjectSource,
) -> Decision {
    let made = !sub.subscription_id().is_empty();
    let Some(host) = host else {
        if deleting {
            let warning = made.then(|| {
                format!(
                    "BareMetalHost {:?} is gone: subscription {} may stay on its BMC",
                    sub.spec.host_name,
                    sub.subscription_id()
                )
            });
            return Decision::Forget { warning };
        }
        return Decision::HostMissing {
            error: format!("baremetal host {:?} not found", sub.spec.host_name),
            retry_after: SUBSCRIPTION_RETRY_DELAY,
        };
    };
    match (deleting, made) {
        (true, true) => return Decision::Delete,
        (true, false) => return Decision::Forget { warning: None },
        (false, true) => return Decision::Done,
        (false, false) => {}
    }
    if host.provisioner_id.is_empty() {
        return Decision::WaitForHost {
            retry_after: HOST_NOT_REGISTERED_DELAY,
        };
    }
    Decision::Create {
        headers: http_headers(sub, objects),
    }
}

/// The host of `sub`: `spec.hostName` in the subscription's namespace.
pub fn host_key(sub: &BmcEventSubscription) -> ObjectKey {
    ObjectKey::new(sub.metadata.namespace_or_default(), &sub.spec.host_name)
}

/// BMO's `getHTTPHeaders`: one single-entry map per key of the `httpHeadersRef` Secret, in key
/// order; none without a reference. The error says why, naming the Secret but never a value.
pub fn http_headers(
    sub: &BmcEventSubscription,
    objects: &dyn ObjectSource,
) -> Result<Vec<BTreeMap<String, String>>, String> {
    let Some(r) = &sub.spec.http_headers_ref else {
        return Ok(Vec::new());
    };
    let namespace = sub.metadata.namespace_or_default();
    if r.namespace != namespace {
        return Err(
            "httpHeadersRef secret must be in the same namespace as the BMCEventSubscription"
                .into(),
        );
    }
    let secret_key = ObjectKey::new(&r.namespace, &r.name);
    let secret = objects
        .secret(&secret_key)
        .ok_or_else(|| format!("Secret {secret_key} not found"))?;
    Ok(secret
        .data
        .iter()
        .map(|(k, v)| BTreeMap::from([(k.clone(), String::from_utf8_lossy(v).into_owned())]))
        .collect())
}

/// controller-runtime's default per-object backoff after `failures` failed reconciles in a
/// row (BMO's controller returns the error): 5 ms doubling, at most 1000 s.
pub fn error_backoff(failures: u32) -> Duration {
    super::backoff::error_retry_delay(failures.saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{ObjectMap, ResolvedSecret};
    use bmh_api::{BmcEventSubscriptionStatus, ObjectMeta, SecretReference};

    fn sub(id: &str) -> BmcEventSubscription {
        let mut s = BmcEventSubscription {
            metadata: ObjectMeta {
                name: "sub".into(),
                namespace: "ns".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        s.spec.host_name = "worker-0".into();
        s.spec.destination = "https://events.example.com/hook".into();
        if !id.is_empty() {
            s.status = Some(BmcEventSubscriptionStatus {
                subscription_id: id.into(),
                ..Default::default()
            });
        }
        s
    }

    fn registered() -> HostView {
        HostView {
            provisioner_id: "node-uuid".into(),
        }
    }

    // BMO's Reconcile: a missing host writes the error and waits subscriptionRetryDelay.
    #[test]
    fn missing_host_is_an_error_retried_after_ten_minutes() {
        assert_eq!(
            decide(&sub(""), None, false, &ObjectMap::default()),
            Decision::HostMissing {
                error: "baremetal host \"worker-0\" not found".into(),
                retry_after: Duration::from_secs(600),
            }
        );
    }

    // BMO's createSubscription: a subscription with an ID is left alone.
    #[test]
    fn a_made_subscription_is_done() {
        assert_eq!(
            decide(
                &sub("id-1"),
                Some(&registered()),
                false,
                &ObjectMap::default()
            ),
            Decision::Done
        );
    }

    #[test]
    fn a_new_subscription_of_a_registered_host_is_created() {
        assert_eq!(
            decide(&sub(""), Some(&registered()), false, &ObjectMap::default()),
            Decision::Create {
                headers: Ok(Vec::new())
            }
        );
    }

    #[test]
    fn an_unregistered_host_is_waited_for_without_an_error() {
        let host = HostView {
            provisioner_id: String::new(),
        };
        assert!(matches!(
            decide(&sub(""), Some(&host), false, &ObjectMap::default()),
            Decision::WaitForHost { .. }
        ));
    }

    // BMO's deleteSubscription (finalizer): removed from the BMC before it goes.
    #[test]
    fn deleting_removes_a_made_subscription_and_forgets_one_never_made() {
        assert_eq!(
            decide(
                &sub("id-1"),
                Some(&registered()),
                true,
                &ObjectMap::default()
            ),
            Decision::Delete
        );
        assert_eq!(
            decide(&sub(""), Some(&registered()), true, &ObjectMap::default()),
            Decision::Forget { warning: None }
        );
        let Decision::Forget { warning: Some(w) } =
            decide(&sub("id-1"), None, true, &ObjectMap::default())
        else {
            panic!("a made subscription of a gone host is forgotten with a warning");
        };
        assert!(w.contains("id-1"), "{w}");
    }

    // BMO's getHTTPHeaders: one map per key; only the subscription's namespace.
    #[test]
    fn headers_come_from_the_secret_one_map_per_key() {
        let mut objects = ObjectMap::default();
        objects.insert_secret(ResolvedSecret::new(
            ObjectKey::new("ns", "hdr"),
            BTreeMap::from([
                ("Authorization".to_string(), b"Bearer s3cret".to_vec()),
                ("X-Tag".to_string(), b"t".to_vec()),
            ]),
        ));
        let mut s = sub("");
        assert_eq!(http_headers(&s, &objects), Ok(Vec::new()));
        s.spec.http_headers_ref = Some(SecretReference {
            name: "hdr".into(),
            namespace: "ns".into(),
        });
        let headers = http_headers(&s, &objects).unwrap();
        assert_eq!(headers.len(), 2);
        assert_eq!(headers[0]["Authorization"], "Bearer s3cret");
        s.spec.http_headers_ref.as_mut().unwrap().name = "missing".into();
        let err = http_headers(&s, &objects).unwrap_err();
        assert_eq!(err, "Secret ns/missing not found");
        s.spec.http_headers_ref.as_mut().unwrap().namespace = "other".into();
        assert!(
            http_headers(&s, &objects)
                .unwrap_err()
                .contains("same namespace")
        );
    }

    #[test]
    fn error_backoff_doubles_from_5ms_to_1000s() {
        assert_eq!(error_backoff(1), Duration::from_millis(5));
        assert_eq!(error_backoff(2), Duration::from_millis(10));
        assert_eq!(error_backoff(10), Duration::from_millis(2560));
        assert_eq!(error_backoff(30), Duration::from_secs(1000));
        assert_eq!(error_backoff(u32::MAX), Duration::from_secs(1000));
    }
}

//! `BMCEventSubscription` (metal3.io/v1alpha1): a Redfish event subscription on a host's BMC.

use crate::host::SecretReference;
use crate::meta::{Extra, ObjectMeta};
use serde::{Deserialize, Serialize};

/// `kind` of a BMCEventSubscription.
pub const BMC_EVENT_SUBSCRIPTION_KIND: &str = "BMCEventSubscription";

/// Holds a subscription until it is removed from the BMC (`BMCEventSubscriptionFinalizer`).
pub const BMC_EVENT_SUBSCRIPTION_FINALIZER: &str = "bmceventsubscription.metal3.io";

/// A BMCEventSubscription (`bes`): a Redfish event subscription BMO makes on a host's BMC.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BmcEventSubscription {
    /// `apiVersion`: `metal3.io/v1alpha1`.
    pub api_version: String,
    /// `kind`: `BMCEventSubscription`.
    pub kind: String,
    /// Name and namespace; BMO holds it with [`BMC_EVENT_SUBSCRIPTION_FINALIZER`].
    pub metadata: ObjectMeta,
    /// `spec`: the host, where its events go, and what goes with them.
    pub spec: BmcEventSubscriptionSpec,
    /// `status`: the subscription's ID on the BMC, or its error; written by BMO.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<BmcEventSubscriptionStatus>,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec` of a BMCEventSubscription.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BmcEventSubscriptionSpec {
    /// `hostName`: the BareMetalHost, in the subscription's namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host_name: String,
    /// `destination`: the URL the BMC sends its events to.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub destination: String,
    /// `context`: free text the BMC sends back with every event.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub context: String,
    /// `httpHeadersRef`: a Secret of HTTP headers sent with every event (values never printed).
    #[serde(rename = "httpHeadersRef", skip_serializing_if = "Option::is_none")]
    pub http_headers_ref: Option<SecretReference>,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `status` of a BMCEventSubscription.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BmcEventSubscriptionStatus {
    /// `subscriptionID`: the BMC's ID of the subscription, once made.
    #[serde(rename = "subscriptionID", skip_serializing_if = "String::is_empty")]
    pub subscription_id: String,
    /// `error`: the last error making or removing the subscription; empty when none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

impl BmcEventSubscription {
    /// The subscription's ID on the BMC; empty until it is made.
    pub fn subscription_id(&self) -> &str {
        self.status.as_ref().map_or("", |s| &s.subscription_id)
    }

    /// The last error; empty when none.
    pub fn error(&self) -> &str {
        self.status.as_ref().map_or("", |s| &s.error)
    }

    /// BMO's webhook checks of a new subscription, as (field, message) pairs.
    pub fn validate(&self) -> Vec<(&'static str, String)> {
        let mut errors = Vec::new();
        let spec = &self.spec;
        if spec.host_name.is_empty() {
            errors.push(("spec.hostName", "hostName cannot be empty".to_string()));
        }
        if let Some(r) = &spec.http_headers_ref
            && r.namespace != self.metadata.namespace_or_default()
        {
            errors.push((
                "spec.httpHeadersRef.namespace",
                "httpHeadersRef secret must be in the same namespace as the BMCEventSubscription"
                    .to_string(),
            ));
        }
        if spec.destination.is_empty() {
            errors.push((
                "spec.destination",
                "destination cannot be empty".to_string(),
            ));
        } else if let Some(problem) = destination_problem(&spec.destination) {
            errors.push(("spec.destination", problem));
        }
        errors
    }
}

/// What Go's `url.ParseRequestURI` and BMO refuse in a destination; `None` when acceptable.
fn destination_problem(destination: &str) -> Option<String> {
    let invalid = |why: &str| Some(format!("destination is invalid: {why}"));
    if destination
        .chars()
        .any(|c| c.is_ascii_control() || c == ' ')
    {
        return invalid("invalid character in URL");
    }
    // An absolute URI (`scheme:...`) or an absolute path (`/...`).
    let rest = match destination.split_once(':') {
        Some((scheme, rest))
            if !scheme.is_empty()
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            rest
        }
        _ if destination.starts_with('/') => destination,
        _ => return invalid(&format!("parse {destination:?}: invalid URI for request")),
    };
    let path = match rest.strip_prefix("//") {
        Some(authority_and_path) => {
            let path_at = authority_and_path
                .find(['/', '?', '#'])
                .unwrap_or(authority_and_path.len());
            let path = &authority_and_path[path_at..];
            path.split(['?', '#']).next().unwrap_or_default()
        }
        None => rest.split('?').next().unwrap_or_default(),
    };
    if path.is_empty() {
        return Some("hostname-only destination must have a trailing slash".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(host: &str, destination: &str) -> BmcEventSubscription {
        BmcEventSubscription {
            metadata: ObjectMeta {
                name: "sub".into(),
                namespace: "ns".into(),
                ..Default::default()
            },
            spec: BmcEventSubscriptionSpec {
                host_name: host.into(),
                destination: destination.into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn bmo_webhook_rules() {
        assert!(
            sub("h", "https://events.example.com/hook")
                .validate()
                .is_empty()
        );
        assert!(sub("h", "http://10.0.0.1:8080/").validate().is_empty());
        let fields = |s: &BmcEventSubscription| -> Vec<(&str, String)> { s.validate() };
        assert_eq!(
            fields(&sub("", "https://x/")),
            vec![("spec.hostName", "hostName cannot be empty".to_string())]
        );
        assert_eq!(
            fields(&sub("h", "")),
            vec![(
                "spec.destination",
                "destination cannot be empty".to_string()
            )]
        );
        assert_eq!(
            fields(&sub("h", "https://events.example.com")),
            vec![(
                "spec.destination",
                "hostname-only destination must have a trailing slash".to_string()
            )]
        );
        assert_eq!(fields(&sub("h", "not a url")).len(), 1);
        assert_eq!(fields(&sub("h", "events.example.com/x")).len(), 1);
        let mut other_ns = sub("h", "https://x/");
        other_ns.spec.http_headers_ref = Some(SecretReference {
            name: "headers".into(),
            namespace: "elsewhere".into(),
        });
        assert_eq!(other_ns.validate()[0].0, "spec.httpHeadersRef.namespace");
    }

    #[test]
    fn status_round_trips_with_bmo_field_names() {
        let json = serde_json::json!({
            "apiVersion": "metal3.io/v1alpha1",
            "kind": "BMCEventSubscription",
            "metadata": {"name": "sub"},
            "spec": {"hostName": "h", "destination": "https://x/", "context": "c",
                     "httpHeadersRef": {"name": "hdr", "namespace": "default"}},
            "status": {"subscriptionID": "abc", "error": "boom"}
        });
        let s: BmcEventSubscription = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(s.subscription_id(), "abc");
        assert_eq!(s.error(), "boom");
        assert_eq!(s.spec.http_headers_ref.as_ref().unwrap().name, "hdr");
        assert!(s.extra.is_empty() && s.spec.extra.is_empty());
        assert_eq!(serde_json::to_value(&s).unwrap(), json);
    }
}

//! BMCEventSubscriptions in the store, put there by `apply`.

use super::Store;
use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::objects::TypedKey;
use bmh_api::{API_VERSION, BMC_EVENT_SUBSCRIPTION_KIND, BmcEventSubscription, ObjectKey};
use serde_json::Value;

pub fn subscription_key(key: &ObjectKey) -> TypedKey {
    TypedKey::new(API_VERSION, BMC_EVENT_SUBSCRIPTION_KIND, key.clone())
}

/// Every subscription of the store, typed, sorted by namespace and name.
pub fn list(store: &Store) -> Result<Vec<BmcEventSubscription>> {
    let listing = store.list(API_VERSION, BMC_EVENT_SUBSCRIPTION_KIND)?;
    if let Some(bad) = listing.bad.into_iter().next() {
        return Err(bad.error);
    }
    listing.objects.iter().map(|s| decode(&s.value)).collect()
}

fn decode(value: &Value) -> Result<BmcEventSubscription> {
    let mut sub: BmcEventSubscription = serde_json::from_value(value.clone()).map_err(|e| {
        Error::invalid(
            Diagnostic::new(format!("in the store: {e}"))
                .object(BMC_EVENT_SUBSCRIPTION_KIND, super::object_key(value)),
        )
    })?;
    if sub.metadata.namespace.is_empty() {
        sub.metadata.namespace = bmh_api::DEFAULT_NAMESPACE.to_string();
    }
    Ok(sub)
}

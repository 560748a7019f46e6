//! The fixture's BMC event subscriptions, kept per host in memory, with the ID
//! `fixture-<namespace>-<name>` (BMO's fixture gives none).

use super::lock;
use bmh_api::{BmcEventSubscription, ObjectKey};
use bmhctl_plugin_sdk::ProvisionerError;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// A subscription annotation that makes the fixture refuse to make it, with this message.
pub const ANNOTATION_SUBSCRIPTION_ERROR: &str = "fixture.bmhctl.metal3.io/subscription-error";

/// One subscription as the fixture's BMC holds it. Header values are not kept, only names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureSubscription {
    pub destination: String,
    pub context: String,
    pub header_names: Vec<String>,
}

/// The subscriptions of every host, by host and then subscription ID. Clones share them.
#[derive(Debug, Clone, Default)]
pub struct FixtureSubscriptions(
    Arc<Mutex<HashMap<ObjectKey, BTreeMap<String, FixtureSubscription>>>>,
);

impl FixtureSubscriptions {
    /// The subscriptions the host's BMC holds now.
    pub fn of(&self, host: &ObjectKey) -> BTreeMap<String, FixtureSubscription> {
        lock(&self.0).get(host).cloned().unwrap_or_default()
    }

    pub(super) fn create(
        &self,
        host: &ObjectKey,
        sub: &BmcEventSubscription,
        http_headers: &[BTreeMap<String, String>],
    ) -> Result<String, ProvisionerError> {
        if let Some(message) = sub.metadata.annotations.get(ANNOTATION_SUBSCRIPTION_ERROR) {
            return Err(ProvisionerError::Other(message.clone()));
        }
        let id = format!(
            "fixture-{}-{}",
            sub.metadata.namespace_or_default(),
            sub.metadata.name
        );
        let made = FixtureSubscription {
            destination: sub.spec.destination.clone(),
            context: sub.spec.context.clone(),
            header_names: http_headers
                .iter()
                .flat_map(|h| h.keys().cloned())
                .collect(),
        };
        lock(&self.0)
            .entry(host.clone())
            .or_default()
            .insert(id.clone(), made);
        Ok(id)
    }

    /// Removing a subscription the BMC does not hold succeeds, as BMO's fixture does.
    pub(super) fn delete(&self, host: &ObjectKey, sub: &BmcEventSubscription) {
        if let Some(subs) = lock(&self.0).get_mut(host) {
            subs.remove(sub.subscription_id());
        }
    }
}

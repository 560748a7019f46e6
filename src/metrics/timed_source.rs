//! A [`HostSource`] that times its commits for `bmhctl_store_write_duration_seconds`.

use super::Metrics;
use crate::error::Result;
use crate::objects::ObjectMap;
use crate::persist::{HostSource, SourceChange, Staged};
use crate::record::HostRecord;
use bmh_api::ObjectKey;
use std::sync::Arc;
use std::time::Instant;

/// `inner`, with each commit's duration recorded in `metrics`.
pub struct TimedSource {
    pub inner: Arc<dyn HostSource>,
    pub metrics: Arc<Metrics>,
}

impl HostSource for TimedSource {
    fn groups(&self) -> usize {
        self.inner.groups()
    }

    fn group_of(&self, host: usize) -> usize {
        self.inner.group_of(host)
    }

    fn stage(&self, host: usize, staged: &Staged) -> Result<u64> {
        self.inner.stage(host, staged)
    }

    fn commit(&self, group: usize) -> Result<u64> {
        let started = Instant::now();
        let r = self.inner.commit(group);
        let took = started.elapsed().as_secs_f64();
        self.metrics.store_writes.observe(took);
        r
    }

    fn record_events(&self, host: usize, events: &[bmhctl_plugin_sdk::Event]) -> Result<()> {
        self.inner.record_events(host, events)
    }

    fn events_in_bookkeeping(&self) -> bool {
        self.inner.events_in_bookkeeping()
    }

    fn add_host(&self, key: ObjectKey) -> usize {
        self.inner.add_host(key)
    }

    fn load(&self, key: &ObjectKey) -> Result<Option<HostRecord>> {
        self.inner.load(key)
    }

    fn objects(&self) -> Result<ObjectMap> {
        self.inner.objects()
    }

    fn changes(&self) -> Result<Vec<SourceChange>> {
        self.inner.changes()
    }

    // Forwarded: the defaults would hide the source's subscriptions.
    fn event_subscriptions(&self) -> Result<Vec<bmh_api::BmcEventSubscription>> {
        self.inner.event_subscriptions()
    }

    fn write_event_subscription_status(
        &self,
        key: &ObjectKey,
        status: &bmh_api::BmcEventSubscriptionStatus,
    ) -> Result<bool> {
        self.inner.write_event_subscription_status(key, status)
    }
}

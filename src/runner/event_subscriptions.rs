//! BMO's BMCEventSubscription controller, beside the hosts' scheduler as BMO runs it beside the
//! host controller. Each reconcile is decided by [`crate::machine::event_subscription::decide`]
//! and carried out with a provisioner made for the subscription's host (BMO's
//! `BuildHostDataNoBMC`: no BMC credentials); the status is written back where it lives.
//!
//! A batch reconciles its hosts' subscriptions once their passes are over, until each is made
//! or in error ([`settle`]); `watch` reconciles those due every poll and removes one whose
//! document went from its BMC first, as BMO's finalizer does ([`control`]). Each outcome worth
//! telling is one line on stderr; header values never appear.

use super::Services;
use super::rate_limit::RateLimiter;
use crate::machine::Requeue;
use crate::machine::event_subscription::{
    self as decision, CREATE_FAILED, DELETE_FAILED, Decision, HostView, PROVISIONER_NOT_READY_DELAY,
};
use crate::persist::HostSource;
use crate::record::HostRecord;
use bmh_api::{BmcEventSubscription, BmcEventSubscriptionStatus, ObjectKey};
use bmhctl_plugin_sdk::{EventSink, HostData, ProvisionerError};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one reconcile of a subscription came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Made now, with this ID (empty when the provisioner gives none).
    Created(String),
    /// Made before (`status.subscriptionID` set).
    Exists,
    /// Failed: `status.error` says BMO's short text, `cause` why.
    Failed { cause: String },
    /// The host is missing (`status.error` says so).
    HostMissing,
    /// The host has no provisioner ID yet.
    WaitingForHost,
    /// The provisioner is not ready (nothing written).
    NotReady(String),
    /// The provisioner does not support subscriptions.
    NotSupported,
    /// Removed from the BMC after its document went.
    Deleted,
    /// Its document went and there was nothing to remove.
    Forgotten,
}

/// One subscription as the loop knows it.
#[derive(Default)]
struct Tracked {
    /// As accepted (BMO's webhook refuses spec updates), with its last status.
    sub: BmcEventSubscription,
    /// controller-runtime's per-object backoff of failed reconciles.
    limiter: RateLimiter,
    /// When to look again; `None`: only when it changes.
    next: Option<Instant>,
    /// A refused spec change was reported (once).
    refused_update: bool,
}

/// The controller's state, moved onto a blocking thread for each round of reconciles.
pub struct SubscriptionLoop {
    services: Services,
    time_scale: f64,
    tracked: HashMap<ObjectKey, Tracked>,
}

impl SubscriptionLoop {
    pub fn new(services: &Services, time_scale: f64) -> Self {
        Self {
            services: services.clone(),
            time_scale,
            tracked: HashMap::new(),
        }
    }

    /// Reconciles the due subscriptions of the `wanted` hosts and the tracked ones gone from
    /// `subs`; `host` finds a host's record (`None`: missing).
    pub fn round(
        &mut self,
        subs: Vec<BmcEventSubscription>,
        host: &dyn Fn(&ObjectKey) -> Option<HostRecord>,
        wanted: &dyn Fn(&ObjectKey) -> bool,
        now: Instant,
    ) -> Vec<(ObjectKey, Outcome)> {
        let mut out = Vec::new();
        let mut present = BTreeSet::new();
        for sub in subs {
            let key = sub.metadata.key();
            let host_key = decision::host_key(&sub);
            if !wanted(&host_key) {
                continue;
            }
            present.insert(key.clone());
            let due = self.tracked.get_mut(&key).is_none_or(|t| {
                let spec_changed = t.sub.spec != sub.spec;
                if spec_changed && !t.sub.subscription_id().is_empty() {
                    if !t.refused_update {
                        t.refused_update = true;
                        crate::eprintln_quiet!(
                            "bmhctl: BMCEventSubscription {key}: spec not changed: \
                             subscriptions cannot be updated, please recreate it"
                        );
                    }
                    return t.next.is_some_and(|n| n <= now);
                }
                let status_changed = t.sub.status != sub.status;
                if spec_changed || status_changed {
                    t.sub = sub.clone();
                    t.refused_update = false;
                }
                spec_changed || status_changed || t.next.is_some_and(|n| n <= now)
            });
            if !due {
                continue;
            }
            let tracked = self.tracked.entry(key.clone()).or_insert_with(|| Tracked {
                sub,
                ..Default::default()
            });
            let sub = tracked.sub.clone();
            let outcome = self.reconcile(&key, &sub, host(&host_key).as_ref(), false, now);
            out.push((key, outcome));
        }
        let gone: Vec<ObjectKey> = self
            .tracked
            .keys()
            .filter(|k| !present.contains(*k))
            .cloned()
            .collect();
        for key in gone {
            let sub = self.tracked[&key].sub.clone();
            let record = host(&decision::host_key(&sub));
            let outcome = self.reconcile(&key, &sub, record.as_ref(), true, now);
            if matches!(outcome, Outcome::Deleted | Outcome::Forgotten) {
                self.tracked.remove(&key);
            }
            out.push((key, outcome));
        }
        out
    }

    /// Reconciles `subs` again (a batch waiting on their provisioner); the other tracked
    /// subscriptions are left as they are, not taken for removed as [`Self::round`] would.
    fn again(
        &mut self,
        subs: &[BmcEventSubscription],
        host: &dyn Fn(&ObjectKey) -> Option<HostRecord>,
        now: Instant,
    ) -> Vec<(ObjectKey, Outcome)> {
        subs.iter()
            .map(|sub| {
                let key = sub.metadata.key();
                let sub = self
                    .tracked
                    .get(&key)
                    .map_or_else(|| sub.clone(), |t| t.sub.clone());
                let record = host(&decision::host_key(&sub));
                let outcome = self.reconcile(&key, &sub, record.as_ref(), false, now);
                (key, outcome)
            })
            .collect()
    }

    /// The earliest time a tracked subscription wants to be looked at again.
    pub fn next_due(&self) -> Option<Instant> {
        self.tracked.values().filter_map(|t| t.next).min()
    }

    fn reconcile(
        &mut self,
        key: &ObjectKey,
        sub: &BmcEventSubscription,
        record: Option<&HostRecord>,
        deleting: bool,
        now: Instant,
    ) -> Outcome {
        let view = record.map(|r| HostView {
            provisioner_id: r.status().provisioning.id.clone(),
        });
        let objects = self.services.objects.as_ref();
        let decided = decision::decide(sub, view.as_ref(), deleting, objects);
        let (outcome, requeue) = match decided {
            Decision::Done => (Outcome::Exists, Requeue::Never),
            Decision::HostMissing { error, retry_after } => {
                self.write_status(key, sub, "", &error);
                (Outcome::HostMissing, Requeue::After(retry_after))
            }
            Decision::WaitForHost { retry_after } => {
                (Outcome::WaitingForHost, Requeue::After(retry_after))
            }
            Decision::Forget { warning } => {
                if let Some(w) = warning {
                    crate::eprintln_quiet!("bmhctl: BMCEventSubscription {key}: {w}");
                }
                (Outcome::Forgotten, Requeue::Never)
            }
            Decision::Create { headers } => self.called(key, sub, record, Some(headers)),
            Decision::Delete => self.called(key, sub, record, None),
        };
        if let Some(t) = self.tracked.get_mut(key) {
            let delay = t.limiter.delay(requeue);
            t.next = delay.map(|d| now + d.mul_f64(self.time_scale.max(0.0)));
        }
        outcome
    }

    /// Calls the provisioner (`headers`: to make the subscription; `None`: to remove it); a
    /// failure writes BMO's status error.
    fn called(
        &mut self,
        key: &ObjectKey,
        sub: &BmcEventSubscription,
        record: Option<&HostRecord>,
        headers: Option<Result<Vec<BTreeMap<String, String>>, String>>,
    ) -> (Outcome, Requeue) {
        let record = record.expect("a decision to call the provisioner has a host");
        // BMO's `createSubscription` writes "failed to retrieve HTTP headers secret" when the
        // headers cannot be read, but `handleError` overwrites it at once: its final text is kept.
        let status_error = match &headers {
            None => DELETE_FAILED,
            Some(_) => CREATE_FAILED,
        };
        let result = headers
            .transpose()
            .map_err(ProvisionerError::Other)
            .and_then(|h| self.call(key, sub, record, h));
        match result {
            Ok(o) => (o, Requeue::Never),
            Err(ProvisionerError::NotReady(e)) => (
                Outcome::NotReady(e),
                Requeue::After(PROVISIONER_NOT_READY_DELAY),
            ),
            Err(e) => {
                self.write_status(key, sub, sub.subscription_id(), status_error);
                let cause = e.to_string();
                (Outcome::Failed { cause }, Requeue::ErrorBackoff)
            }
        }
    }

    /// Makes (`headers`) or removes (`None`) the subscription through a provisioner of its host.
    fn call(
        &mut self,
        key: &ObjectKey,
        sub: &BmcEventSubscription,
        record: &HostRecord,
        headers: Option<Vec<BTreeMap<String, String>>>,
    ) -> Result<Outcome, ProvisionerError> {
        let host = &record.host;
        let data = HostData {
            key: host.metadata.key(),
            uid: record.book.uid.clone(),
            labels: host.metadata.labels.clone(),
            annotations: host.metadata.annotations.clone(),
            provisioner_id: record.status().provisioning.id.clone(),
            provisioner_state: record.book.provisioner_state.as_deref().cloned(),
            ..HostData::default()
        };
        let events: EventSink = Arc::new(|_| {});
        let mut prov = self.services.factory.new_provisioner(data, events)?;
        let done = match headers {
            None => prov
                .delete_bmc_event_subscription(sub)?
                .then_some(Outcome::Deleted),
            Some(headers) => prov
                .create_bmc_event_subscription(sub, &headers)?
                .map(|id| {
                    self.write_status(key, sub, &id, "");
                    Outcome::Created(id)
                }),
        };
        Ok(done.unwrap_or(Outcome::NotSupported))
    }

    /// Writes the status when it differs from the subscription's; the tracked copy follows.
    fn write_status(&mut self, key: &ObjectKey, sub: &BmcEventSubscription, id: &str, error: &str) {
        let mut status = sub.status.clone().unwrap_or_default();
        status.subscription_id = id.to_string();
        status.error = error.to_string();
        if sub.status.as_ref() == Some(&status)
            || (sub.status.is_none() && status == BmcEventSubscriptionStatus::default())
        {
            return;
        }
        let written = self
            .services
            .source
            .write_event_subscription_status(key, &status);
        match written {
            Ok(_) => {
                if let Some(t) = self.tracked.get_mut(key) {
                    t.sub.status = Some(status);
                }
            }
            Err(e) => crate::eprintln_quiet!(
                "bmhctl: BMCEventSubscription {key}: cannot write its status: {}",
                e.chain()
            ),
        }
    }
}

/// Tells what each reconcile did that is worth telling.
fn tell(outcomes: &[(ObjectKey, Outcome)]) {
    for (key, outcome) in outcomes {
        let what = match outcome {
            Outcome::Created(id) if id.is_empty() => "subscription created (no ID given)".into(),
            Outcome::Created(id) => format!("subscription {id} created"),
            Outcome::Exists | Outcome::Forgotten => continue,
            Outcome::Failed { cause } => format!("error: {cause}"),
            Outcome::HostMissing => "error: its BareMetalHost is not there".into(),
            Outcome::WaitingForHost => "waiting for its BareMetalHost to be registered".into(),
            Outcome::NotReady(e) if e.is_empty() => "waiting for the provisioner".into(),
            Outcome::NotReady(e) => format!("waiting for the provisioner: {e}"),
            Outcome::NotSupported => {
                "the provisioner does not support BMC event subscriptions".into()
            }
            Outcome::Deleted => "subscription deleted".into(),
        };
        crate::eprintln_quiet!("bmhctl: BMCEventSubscription {key}: {what}");
    }
}

/// The batch's end: reconciles the subscriptions of the run's hosts (`results`: as they ended;
/// a deleted one is missing) until each is stable or `deadline` passes.
pub async fn settle(
    services: &Services,
    results: &[super::HostResult],
    time_scale: f64,
    deadline: Instant,
) -> crate::error::Result<()> {
    let source: Arc<dyn HostSource> = services.source.clone();
    let subs = tokio::task::spawn_blocking(move || source.event_subscriptions())
        .await
        .expect("reading subscriptions does not panic")?;
    // Only the hosts subscriptions name are kept (a run may hold thousands).
    let named: BTreeSet<ObjectKey> = subs.iter().map(decision::host_key).collect();
    let hosts: HashMap<ObjectKey, Option<HostRecord>> = results
        .iter()
        .filter_map(|r| {
            let key = r.record.host.metadata.key();
            named
                .contains(&key)
                .then(|| (key, (!r.deleted).then(|| r.record.clone())))
        })
        .collect();
    let mut pending: Vec<BmcEventSubscription> = subs
        .into_iter()
        .filter(|s| hosts.contains_key(&decision::host_key(s)))
        .collect();
    let mut ctl = SubscriptionLoop::new(services, time_scale);
    let hosts = Arc::new(hosts);
    let mut last: HashMap<ObjectKey, Outcome> = HashMap::new();
    let mut first = true;
    while !pending.is_empty() {
        let (h, subs) = (hosts.clone(), pending.clone());
        let (back, outcomes) = tokio::task::spawn_blocking(move || {
            let host = |k: &ObjectKey| h.get(k).cloned().flatten();
            let outcomes = if first {
                ctl.round(subs, &host, &|_| true, Instant::now())
            } else {
                ctl.again(&subs, &host, Instant::now())
            };
            (ctl, outcomes)
        })
        .await
        .expect("a subscription round does not panic");
        ctl = back;
        first = false;
        tell(&outcomes);
        last.extend(outcomes);
        // Only a subscription waiting for its provisioner is looked at again.
        pending.retain(|s| matches!(last.get(&s.metadata.key()), Some(Outcome::NotReady(_))));
        match ctl.next_due() {
            Some(at) if !pending.is_empty() && at < deadline => {
                tokio::time::sleep_until(at.into()).await;
            }
            _ => break,
        }
    }
    Ok(())
}

/// The controller under `watch`: every `poll`, and when a retry is due, reconciles the
/// subscriptions of the hosts `wanted` names, until `stop` turns true.
pub async fn control(
    services: Services,
    time_scale: f64,
    poll: Duration,
    wanted: Arc<dyn Fn(&ObjectKey) -> bool + Send + Sync>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut ctl = SubscriptionLoop::new(&services, time_scale);
    loop {
        let (src, w) = (services.source.clone(), wanted.clone());
        let (back, outcomes) = tokio::task::spawn_blocking(move || {
            let outcomes = match src.event_subscriptions() {
                Ok(subs) => ctl.round(subs, &|k| src.load(k).ok().flatten(), &*w, Instant::now()),
                Err(e) => {
                    tracing::warn!("cannot read the BMCEventSubscriptions: {}", e.chain());
                    Vec::new()
                }
            };
            (ctl, outcomes)
        })
        .await
        .expect("a subscription round does not panic");
        ctl = back;
        tell(&outcomes);
        let wake = ctl.next_due().map_or(poll, |at| {
            at.saturating_duration_since(Instant::now()).min(poll)
        });
        tokio::select! {
            _ = tokio::time::sleep(wake) => {}
            _ = stop.changed() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SystemClock;
    use crate::error::Result;
    use crate::objects::ObjectMap;
    use crate::persist::{SourceChange, Staged};
    use crate::provisioners::fixture::Fixture;
    use crate::provisioners::fixture_subscriptions::ANNOTATION_SUBSCRIPTION_ERROR;
    use std::sync::Mutex;

    /// Holds the subscriptions' statuses as written; no hosts.
    #[derive(Default)]
    struct Statuses(Mutex<Vec<(ObjectKey, BmcEventSubscriptionStatus)>>);

    impl HostSource for Statuses {
        fn groups(&self) -> usize {
            0
        }
        fn group_of(&self, _: usize) -> usize {
            0
        }
        fn stage(&self, _: usize, _: &Staged) -> Result<u64> {
            Ok(0)
        }
        fn commit(&self, _: usize) -> Result<u64> {
            Ok(0)
        }
        fn record_events(&self, _: usize, _: &[bmhctl_plugin_sdk::Event]) -> Result<()> {
            Ok(())
        }
        fn add_host(&self, _: ObjectKey) -> usize {
            0
        }
        fn load(&self, _: &ObjectKey) -> Result<Option<HostRecord>> {
            Ok(None)
        }
        fn objects(&self) -> Result<ObjectMap> {
            Ok(ObjectMap::default())
        }
        fn changes(&self) -> Result<Vec<SourceChange>> {
            Ok(Vec::new())
        }
        fn write_event_subscription_status(
            &self,
            key: &ObjectKey,
            status: &BmcEventSubscriptionStatus,
        ) -> Result<bool> {
            self.0.lock().unwrap().push((key.clone(), status.clone()));
            Ok(true)
        }
    }

    fn setup() -> (SubscriptionLoop, Fixture, Arc<Statuses>) {
        let fixture = Fixture::new();
        let source = Arc::new(Statuses::default());
        let services = Services {
            factory: Arc::new(fixture.clone()),
            objects: Arc::new(ObjectMap::default()),
            clock: Arc::new(SystemClock),
            source: source.clone(),
        };
        (SubscriptionLoop::new(&services, 1.0), fixture, source)
    }

    fn sub() -> BmcEventSubscription {
        let mut s = BmcEventSubscription::default();
        s.metadata.name = "sub".into();
        s.metadata.namespace = "default".into();
        s.spec.host_name = "worker-0".into();
        s.spec.destination = "https://events.example/hook".into();
        s
    }

    /// `s` as its source holds it after the statuses written.
    fn read_back(mut s: BmcEventSubscription, source: &Statuses) -> BmcEventSubscription {
        s.status = source.0.lock().unwrap().last().map(|(_, st)| st.clone());
        s
    }

    fn registered() -> HostRecord {
        let mut r = HostRecord::default();
        r.host.metadata.name = "worker-0".into();
        r.host.metadata.namespace = "default".into();
        r.host
            .status
            .get_or_insert_with(Default::default)
            .provisioning
            .id = "node-1".into();
        r
    }

    // A batch run looks again only at the subscription waiting on its provisioner: the one
    // made already stays made (it is not taken for removed).
    #[test]
    fn waiting_on_one_subscription_leaves_the_others_made() {
        let (mut ctl, fixture, _) = setup();
        let now = Instant::now();
        let mut slow = registered();
        slow.host.metadata.name = "worker-1".into();
        slow.host.metadata.annotations.insert(
            crate::provisioners::fixture::ANNOTATION_BECOME_READY_COUNTER.into(),
            "2".into(),
        );
        let found = |k: &ObjectKey| match k.name.as_str() {
            "worker-1" => Some(slow.clone()),
            _ => Some(registered()),
        };
        let mut waiting = sub();
        waiting.metadata.name = "sub-1".into();
        waiting.spec.host_name = "worker-1".into();
        let out = ctl.round(vec![sub(), waiting.clone()], &found, &|_| true, now);
        assert!(matches!(out[1].1, Outcome::NotReady(_)), "{out:?}");
        let out = ctl.again(&[waiting], &found, now);
        assert_eq!(
            out,
            [(
                ObjectKey::new("default", "sub-1"),
                Outcome::Created("fixture-default-sub-1".into())
            )]
        );
        let made = |h: &str| {
            fixture
                .subscriptions()
                .of(&ObjectKey::new("default", h))
                .len()
        };
        assert_eq!((made("worker-0"), made("worker-1")), (1, 1));
    }

    // BMO's Reconcile, then its finalizer: made once, removed when the object goes.
    #[test]
    fn a_subscription_is_made_once_and_removed_when_it_goes() {
        let (mut ctl, fixture, source) = setup();
        let host = ObjectKey::new("default", "worker-0");
        let key = ObjectKey::new("default", "sub");
        let now = Instant::now();
        let found = |_: &ObjectKey| Some(registered());
        let out = ctl.round(vec![sub()], &found, &|_| true, now);
        assert_eq!(
            out,
            [(key.clone(), Outcome::Created("fixture-default-sub".into()))]
        );
        assert_eq!(fixture.subscriptions().of(&host).len(), 1);
        let written = source.0.lock().unwrap().clone();
        assert_eq!(written.len(), 1);
        assert_eq!(written[0].1.subscription_id, "fixture-default-sub");
        // Read back with its status: nothing more to do.
        let mut made = sub();
        made.status = Some(written[0].1.clone());
        assert!(ctl.round(vec![made], &found, &|_| true, now).is_empty());
        assert_eq!(ctl.next_due(), None);
        // Its document is gone: removed from the BMC, then forgotten.
        let out = ctl.round(Vec::new(), &found, &|_| true, now);
        assert_eq!(out, [(key, Outcome::Deleted)]);
        assert!(fixture.subscriptions().of(&host).is_empty());
        assert!(ctl.round(Vec::new(), &found, &|_| true, now).is_empty());
    }

    // BMO's handleError: the status says so; a missing host waits subscriptionRetryDelay, a
    // refused create controller-runtime's growing backoff.
    #[test]
    fn errors_write_bmo_s_status_and_wait_their_delay() {
        let (mut ctl, _, source) = setup();
        let now = Instant::now();
        let out = ctl.round(vec![sub()], &|_| None, &|_| true, now);
        assert_eq!(out[0].1, Outcome::HostMissing);
        assert_eq!(
            source.0.lock().unwrap()[0].1.error,
            "baremetal host \"worker-0\" not found"
        );
        assert_eq!(ctl.next_due(), Some(now + Duration::from_secs(600)));
        // Not due before then (read back with the status written).
        assert!(
            ctl.round(vec![read_back(sub(), &source)], &|_| None, &|_| true, now)
                .is_empty()
        );

        let (mut ctl, _, source) = setup();
        let mut refused = sub();
        refused
            .metadata
            .annotations
            .insert(ANNOTATION_SUBSCRIPTION_ERROR.into(), "BMC said no".into());
        let found = |_: &ObjectKey| Some(registered());
        let mut delays = Vec::new();
        let mut at = now;
        for _ in 0..3 {
            let out = ctl.round(
                vec![read_back(refused.clone(), &source)],
                &found,
                &|_| true,
                at,
            );
            assert_eq!(
                out[0].1,
                Outcome::Failed {
                    cause: "BMC said no".into()
                }
            );
            let next = ctl.next_due().unwrap();
            delays.push(next - at);
            at = next;
        }
        assert_eq!(
            delays,
            [
                Duration::from_millis(5),
                Duration::from_millis(10),
                Duration::from_millis(20)
            ]
        );
        assert_eq!(
            source.0.lock().unwrap()[0].1.error,
            "failed to create a subscription"
        );
    }
}

//! What `watch --metrics-addr` serves, under BMO's metric names where BMO has them.

mod observed_factory;
mod timed_source;

pub use observed_factory::ObservedFactory;
pub use timed_source::TimedSource;

use crate::machine::PassOutcome;
use crate::provisioners::lock;
use crate::record::HostRecord;
use bmh_api::{ObjectKey, ProvisioningState};
use bmhctl_plugin_sdk::{ProvisionerFactory, WaitOn};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Label names and values, in the order they are printed.
type Labels<const N: usize> = [(&'static str, String); N];

/// The controller's metrics, shared by its observer, its host source and the HTTP server.
pub struct Metrics {
    registry: Registry,
    reconciles: Family<Labels<2>, Counter>,
    reconcile_errors: Counter,
    state_changes: Family<Labels<2>, Counter>,
    delayed_provisioning: Family<Labels<2>, Counter>,
    delayed_deprovisioning: Family<Labels<2>, Counter>,
    hosts: Family<Labels<2>, Gauge>,
    store_writes: Histogram,
    provisioner_calls: Family<Labels<1>, Histogram, fn() -> Histogram>,
    /// Provisioners alive: one held by each pass talking to the provisioner.
    pub(crate) passes_in_flight: Gauge,
    /// Each host's state after its last pass; the hosts gauge is set from it when scraped.
    states: Mutex<HashMap<ObjectKey, (String, String)>>,
    /// The provisioner's requests to its backend, by kind, as the plugin last told them.
    ironic_api_calls: Family<Labels<1>, Counter>,
    /// Whom to ask for them at each scrape; the lock keeps two scrapes from adding twice.
    api_call_source: Mutex<Option<Arc<dyn ProvisionerFactory>>>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        // `$metric`, registered under `$name`.
        macro_rules! registered {
            ($name:literal, $help:expr, $metric:expr) => {{
                let metric = $metric;
                registry.register($name, $help, Clone::clone(&metric));
                metric
            }};
        }
        Self {
            // prometheus-client adds `_total` to a counter's name.
            reconciles: registered!(
                "metal3_reconcile",
                "The number of times hosts have been reconciled",
                Family::default()
            ),
            reconcile_errors: registered!(
                "metal3_reconcile_error",
                "The number of times the operator has failed to reconcile a host",
                Counter::default()
            ),
            state_changes: registered!(
                "metal3_provisioning_state_change",
                "Number of times a state transition has occurred",
                Family::default()
            ),
            // BMO's names, double underscore included.
            delayed_provisioning: registered!(
                "metal3_delayed__provisioning",
                "The number of times hosts have been delayed while provisioning due a busy \
                 provisioner",
                Family::default()
            ),
            delayed_deprovisioning: registered!(
                "metal3_delayed__deprovisioning",
                "The number of times hosts have been delayed while deprovisioning due a busy \
                 provisioner",
                Family::default()
            ),
            hosts: registered!(
                "bmhctl_hosts",
                "Hosts by provisioning state and operational status, after their last pass",
                Family::default()
            ),
            // 1 ms to about 33 s: a commit of one store object to one of a 10,000-host file.
            store_writes: registered!(
                "bmhctl_store_write_duration_seconds",
                "Time to write one commit group (a store object, or a host file and its \
                 bookkeeping)",
                Histogram::new(exponential_buckets(0.001, 2.0, 16))
            ),
            // 100 us to about 3.3 s: a fixture call to an Ironic call under load.
            provisioner_calls: registered!(
                "bmhctl_provisioner_call_duration_seconds",
                "Time of each provisioner call, by call (the plugin method), as the runner sees it",
                Family::<_, _, fn() -> Histogram>::new_with_constructor(|| Histogram::new(
                    exponential_buckets(0.0001, 2.0, 16)
                ))
            ),
            passes_in_flight: registered!(
                "bmhctl_passes_in_flight",
                "Passes holding a provisioner now",
                Gauge::default()
            ),
            states: Mutex::default(),
            ironic_api_calls: registered!(
                "bmhctl_ironic_api_calls",
                "HTTP requests the provisioner plugin sent to Ironic, by method and path \
                 template (every attempt, version discovery and probe included), as the plugin \
                 counts them",
                Family::default()
            ),
            api_call_source: Mutex::default(),
            registry,
        }
    }
}

impl Metrics {
    /// Counts one pass of `key`, as BMO counts Reconcile calls, and records where it left the host.
    pub fn observe_pass(&self, key: &ObjectKey, rec: &HostRecord, out: &PassOutcome) {
        let labels = [
            ("namespace", key.namespace.clone()),
            ("host", key.name.clone()),
        ];
        self.reconciles.get_or_create(&labels).inc();
        if out.error.is_some() {
            self.reconcile_errors.inc();
        }
        let status = rec.status();
        let state = status.provisioning.state.as_str().to_string();
        if out.wait == Some(WaitOn::Capacity) {
            // BMO's recordActionDelayed: the deprovisioning counter in deprovisioning.
            if status.provisioning.state == ProvisioningState::Deprovisioning {
                self.delayed_deprovisioning.get_or_create(&labels).inc();
            } else {
                self.delayed_provisioning.get_or_create(&labels).inc();
            }
        }
        let mut states = lock(&self.states);
        if out.deleted() {
            states.remove(key);
            return;
        }
        let now = (state, status.operational_status.as_str().to_string());
        // A host first seen has no previous state to count a change from.
        if let Some((before, _)) = states.get(key)
            && *before != now.0
        {
            self.state_changes
                .get_or_create(&[("prev_state", before.clone()), ("new_state", now.0.clone())])
                .inc();
        }
        states.insert(key.clone(), now);
    }

    pub fn observe_provisioner_call(&self, call: &str, took: Duration) {
        self.provisioner_calls
            .get_or_create(&[("call", call.to_string())])
            .observe(took.as_secs_f64());
    }

    /// Asks `factory` for its API request counts at each scrape.
    pub fn read_api_calls_from(&self, factory: Arc<dyn ProvisionerFactory>) {
        *lock(&self.api_call_source) = Some(factory);
    }

    /// Brings `bmhctl_ironic_api_calls_total` up to the provisioner's counts; never down.
    fn read_api_calls(&self) {
        let source = lock(&self.api_call_source);
        let Some(factory) = source.as_ref() else {
            return;
        };
        match factory.api_calls() {
            Ok(Some(rows)) => {
                for row in rows {
                    let counter = self.ironic_api_calls.get_or_create(&[("kind", row.kind)]);
                    let served = counter.get();
                    if row.count > served {
                        counter.inc_by(row.count - served);
                    }
                }
            }
            Ok(None) => {}
            Err(e) => tracing::debug!("metrics: cannot read the provisioner's API calls: {e}"),
        }
    }

    pub fn encode(&self) -> String {
        self.read_api_calls();
        {
            let states = lock(&self.states);
            self.hosts.clear();
            for (state, op) in states.values() {
                self.hosts
                    .get_or_create(&[
                        ("provisioning_state", state.clone()),
                        ("operational_status", op.clone()),
                    ])
                    .inc();
            }
        }
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

#[cfg(test)]
mod tests;

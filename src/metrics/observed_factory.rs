//! A [`ProvisionerFactory`] whose provisioners are timed call by call, on the runner's side.

use super::Metrics;
use bmhctl_plugin_sdk::{
    CallObserver, DueHosts, HostData, ObservedProvisioner, ProbeReport, Provisioner,
    ProvisionerError, ProvisionerFactory, WaitingHost,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `inner`, with its provisioners' calls and lifetimes recorded in `metrics`.
pub struct ObservedFactory {
    pub inner: Arc<dyn ProvisionerFactory>,
    pub metrics: Arc<Metrics>,
}

/// One pass's provisioner: counted in flight from its creation until it is dropped.
struct PassCalls(Arc<Metrics>);

impl CallObserver for PassCalls {
    fn observe(&self, call: &'static str, took: Duration) {
        self.0.observe_provisioner_call(call, took);
    }
}

impl Drop for PassCalls {
    fn drop(&mut self) {
        self.0.passes_in_flight.dec();
    }
}

impl ObservedFactory {
    fn timed<R>(&self, call: &'static str, f: impl FnOnce() -> R) -> R {
        let started = Instant::now();
        let r = f();
        self.metrics
            .observe_provisioner_call(call, started.elapsed());
        r
    }
}

// Not timed: `ready_hosts`, `api_calls` and `calls_never_block` (not a pass's calls).
impl bmhctl_plugin_sdk::ForwardingFactory for ObservedFactory {
    fn inner(&self) -> &dyn ProvisionerFactory {
        &*self.inner
    }

    fn make_provisioner(
        &self,
        host: HostData,
        make: impl FnOnce(HostData) -> Result<Box<dyn Provisioner>, ProvisionerError>,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        let inner = self.timed("new_provisioner", || make(host))?;
        self.metrics.passes_in_flight.inc();
        Ok(Box::new(ObservedProvisioner {
            inner,
            observer: Box::new(PassCalls(self.metrics.clone())),
        }))
    }

    fn due_hosts(&self, waiting: &[WaitingHost]) -> Result<Option<DueHosts>, ProvisionerError> {
        self.timed("due_hosts", || self.inner.due_hosts(waiting))
    }

    fn probe(&self) -> Result<Option<ProbeReport>, ProvisionerError> {
        self.timed("probe", || self.inner.probe())
    }
}

//! Factory decorators that write only what they change ([`ForwardingFactory`]).

use crate::factory_calls::{self, forwarding_impl, forwarding_trait};
use crate::{EventSink, HostData, Provisioner, ProvisionerError, ProvisionerFactory};
use std::sync::Arc;

factory_calls::factory_calls!(forwarding_trait {
    /// A factory that adds to [`Self::inner`]; every call not overridden goes to `inner`.
    pub trait ForwardingFactory: Send + Sync
} {
    /// The factory every call is forwarded to.
    fn inner(&self) -> &dyn ProvisionerFactory;

    /// Makes a provisioner for `host` for both `new_provisioner*` calls; default `make(host)`.
    fn make_provisioner(
        &self,
        host: HostData,
        make: impl FnOnce(HostData) -> Result<Box<dyn Provisioner>, ProvisionerError>,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        make(host)
    }

    /// [`ProvisionerFactory::calls_never_block`], forwarded to `inner` by default.
    fn calls_never_block(&self) -> bool {
        self.inner().calls_never_block()
    }
});

// Table calls are forwarded by generated code.
factory_calls::factory_calls!(forwarding_impl {
    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        self.make_provisioner(host, |host| self.inner().new_provisioner(host, events))
    }

    fn new_provisioner_with_state(
        &self,
        host: HostData,
        state: Option<Arc<serde_json::Value>>,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        self.make_provisioner(host, |host| {
            self.inner().new_provisioner_with_state(host, state, events)
        })
    }

    fn calls_never_block(&self) -> bool {
        ForwardingFactory::calls_never_block(self)
    }
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ApiCallCount, DueHosts, ProbeReport, ReadyHosts, StartingHost, WaitingHost};
    use std::sync::Mutex;

    /// A factory that notes each call it gets, and answers each so that the caller can tell the
    /// answer came from it.
    #[derive(Default)]
    struct Noting(Mutex<Vec<&'static str>>);

    impl Noting {
        fn note(&self, call: &'static str) {
            self.0.lock().unwrap().push(call);
        }

        fn calls(&self) -> Vec<&'static str> {
            std::mem::take(&mut *self.0.lock().unwrap())
        }
    }

    fn answered(call: &str) -> ProvisionerError {
        ProvisionerError::Other(format!("{call} answered by the inner factory"))
    }

    impl ProvisionerFactory for Noting {
        fn new_provisioner(
            &self,
            _: HostData,
            _: EventSink,
        ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
            self.note("new_provisioner");
            Err(answered("new_provisioner"))
        }

        fn new_provisioner_with_state(
            &self,
            _: HostData,
            _: Option<Arc<serde_json::Value>>,
            _: EventSink,
        ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
            self.note("new_provisioner_with_state");
            Err(answered("new_provisioner_with_state"))
        }

        fn calls_never_block(&self) -> bool {
            self.note("calls_never_block");
            true
        }

        fn due_hosts(&self, _: &[WaitingHost]) -> Result<Option<DueHosts>, ProvisionerError> {
            self.note("due_hosts");
            Err(answered("due_hosts"))
        }

        fn probe(&self) -> Result<Option<ProbeReport>, ProvisionerError> {
            self.note("probe");
            Err(answered("probe"))
        }

        fn api_calls(&self) -> Result<Option<Vec<ApiCallCount>>, ProvisionerError> {
            self.note("api_calls");
            Err(answered("api_calls"))
        }

        fn ready_hosts(&self, _: &[StartingHost]) -> Result<Option<ReadyHosts>, ProvisionerError> {
            self.note("ready_hosts");
            Err(answered("ready_hosts"))
        }
    }

    /// A decorator that changes nothing.
    struct Plain(Noting);

    impl ForwardingFactory for Plain {
        fn inner(&self) -> &dyn ProvisionerFactory {
            &self.0
        }
    }

    fn no_events() -> EventSink {
        Arc::new(|_| {})
    }

    fn err_of<T>(r: Result<T, ProvisionerError>) -> String {
        match r {
            Ok(_) => panic!("answered without the inner factory"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_decorator_that_overrides_nothing_forwards_every_factory_call() {
        let plain = Plain(Noting::default());
        let f: &dyn ProvisionerFactory = &plain;
        let answers = [
            err_of(f.new_provisioner(HostData::default(), no_events())),
            err_of(f.new_provisioner_with_state(HostData::default(), None, no_events())),
            err_of(f.due_hosts(&[])),
            err_of(f.probe()),
            err_of(f.api_calls()),
            err_of(f.ready_hosts(&[])),
        ];
        // The trait's default would answer `false`.
        assert!(f.calls_never_block());
        let every_call = [
            "new_provisioner",
            "new_provisioner_with_state",
            "due_hosts",
            "probe",
            "api_calls",
            "ready_hosts",
            "calls_never_block",
        ];
        assert_eq!(plain.0.calls(), every_call);
        for (answer, call) in answers.iter().zip(every_call) {
            assert_eq!(*answer, answered(call).to_string());
        }
    }

    /// A decorator that notes the hosts of the provisioners made, whichever way they are made.
    struct NotingHosts {
        inner: Noting,
        made_for: Mutex<Vec<String>>,
    }

    impl ForwardingFactory for NotingHosts {
        fn inner(&self) -> &dyn ProvisionerFactory {
            &self.inner
        }

        fn make_provisioner(
            &self,
            host: HostData,
            make: impl FnOnce(HostData) -> Result<Box<dyn Provisioner>, ProvisionerError>,
        ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
            self.made_for.lock().unwrap().push(host.key.name.clone());
            make(host)
        }
    }

    #[test]
    fn both_ways_of_making_a_provisioner_pass_through_the_one_hook() {
        let f = NotingHosts {
            inner: Noting::default(),
            made_for: Mutex::default(),
        };
        let host = |name: &str| HostData {
            key: bmh_api::ObjectKey::new("ns", name),
            ..HostData::default()
        };
        let _ = ProvisionerFactory::new_provisioner(&f, host("a"), no_events());
        let _ = ProvisionerFactory::new_provisioner_with_state(&f, host("b"), None, no_events());
        assert_eq!(*f.made_for.lock().unwrap(), ["a", "b"]);
        // Each way reached the inner factory as the caller asked it.
        assert_eq!(
            f.inner.calls(),
            ["new_provisioner", "new_provisioner_with_state"]
        );
    }
}

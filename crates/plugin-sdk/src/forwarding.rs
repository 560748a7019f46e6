//! Decorators that write only what they change ([`ForwardingFactory`], [`ForwardingProvisioner`]).

use crate::calls::{self, forwarding_provisioner};
use crate::factory_calls::{self, forwarding};
use crate::*;
use std::sync::Arc;

// Table calls are forwarded by generated code.
factory_calls::factory_calls!(forwarding {
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
} {
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

// Table calls are forwarded by generated code.
calls::provisioner_calls!(forwarding_provisioner {
    {
        /// A provisioner that adds to [`Self::inner`]; every call not overridden goes to `inner`.
        pub trait ForwardingProvisioner: Send
    } {
        /// The provisioner every `&mut self` call is forwarded to.
        fn inner(&mut self) -> &mut dyn Provisioner;

        /// The same provisioner, for the `&self` calls.
        fn inner_ref(&self) -> &dyn Provisioner;

        /// [`Provisioner::shared_persistent_state`], forwarded to `inner_ref` by default.
        fn shared_persistent_state(&self) -> Option<Arc<serde_json::Value>> {
            self.inner_ref().shared_persistent_state()
        }
    } {
        fn shared_persistent_state(&self) -> Option<Arc<serde_json::Value>> {
            ForwardingProvisioner::shared_persistent_state(self)
        }
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

    /// Answers a call so that the caller can tell the answer came from the inner provisioner.
    trait InnerAnswer {
        fn inner_answer(call: &'static str) -> Self;
    }

    impl<T> InnerAnswer for Result<T, ProvisionerError> {
        fn inner_answer(call: &'static str) -> Self {
            Err(ProvisionerError::Other(format!(
                "{call} answered by the inner provisioner"
            )))
        }
    }

    impl InnerAnswer for bool {
        fn inner_answer(_: &'static str) -> Self {
            true
        }
    }

    impl InnerAnswer for String {
        fn inner_answer(call: &'static str) -> Self {
            call.into()
        }
    }

    impl InnerAnswer for Option<serde_json::Value> {
        fn inner_answer(call: &'static str) -> Self {
            Some(call.into())
        }
    }

    /// A provisioner that notes each call it gets (`Noting`'s counterpart).
    #[derive(Default)]
    struct NotingProvisioner(Noting);

    /// `impl Provisioner for NotingProvisioner`, and every call of the table with default
    /// arguments, in its order.
    macro_rules! noting_provisioner {
        (
            { $($by_hand:tt)* }
            $(
                $(#[$doc:meta])*
                $variant:ident $({ $($(#[$fattr:meta])* $field:ident : $fty:ty),* })?
                fn $name:ident ($($params:tt)*) -> $ret:ty $($default:block)? $(;)?
            )*
        ) => {
            impl Provisioner for NotingProvisioner {
                $($by_hand)*
                $( noting_method! { $name ($($params)*) -> $ret } )*
            }

            fn every_call() -> Vec<crate::abi::ProvisionerCall> {
                vec![$(
                    crate::abi::ProvisionerCall::$variant
                        $({ $($field: Default::default()),* })?
                ),*]
            }
        };
    }

    macro_rules! noting_method {
        ($name:ident (&mut self $(, $arg:ident : $sig:ty)*) -> $ret:ty) => {
            fn $name(&mut self $(, _: $sig)*) -> $ret {
                self.0.note(stringify!($name));
                InnerAnswer::inner_answer(stringify!($name))
            }
        };
        ($name:ident (&self $(, $arg:ident : $sig:ty)*) -> $ret:ty) => {
            fn $name(&self $(, _: $sig)*) -> $ret {
                self.0.note(stringify!($name));
                InnerAnswer::inner_answer(stringify!($name))
            }
        };
    }

    calls::provisioner_calls!(noting_provisioner {
        fn shared_persistent_state(&self) -> Option<Arc<serde_json::Value>> {
            self.0.note("shared_persistent_state");
            Some(Arc::new("shared".into()))
        }
    });

    /// A provisioner decorator that changes nothing.
    struct PlainProvisioner(NotingProvisioner);

    impl ForwardingProvisioner for PlainProvisioner {
        fn inner(&mut self) -> &mut dyn Provisioner {
            &mut self.0
        }

        fn inner_ref(&self) -> &dyn Provisioner {
            &self.0
        }
    }

    #[test]
    fn a_decorator_that_overrides_nothing_forwards_every_provisioner_call() {
        use crate::abi_plugin::dispatch;
        let mut plain = PlainProvisioner(NotingProvisioner::default());
        let mut direct = NotingProvisioner::default();
        let calls = every_call();
        for call in &calls {
            let answer = dispatch(&mut plain, call.clone());
            assert_eq!(answer, dispatch(&mut direct, call.clone()), "{call:?}");
        }
        let every_call = direct.0.calls();
        assert_eq!(every_call.len(), calls.len());
        assert_eq!(plain.0.0.calls(), every_call);
        // Not in the table: the trait's default would ask `persistent_state` instead.
        let shared = Provisioner::shared_persistent_state(&plain);
        assert_eq!(shared.as_deref(), Some(&serde_json::Value::from("shared")));
        assert_eq!(plain.0.0.calls(), ["shared_persistent_state"]);
    }
}

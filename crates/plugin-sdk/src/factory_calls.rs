//! The optional factory calls, declared once in [`factory_calls!`] and generated from there.

/// The table: docs, the `Request` variant, the first SDK minor answering it, the method.
macro_rules! factory_calls {
    ($generate:ident $($args:tt)*) => {
        $generate! {
            $($args)*

            /// Which of these waiting hosts are due now; `Ok(None)` (default): not supported.
            DueHosts { waiting: Vec<crate::WaitingHost> } since DUE_HOSTS_SINCE_MINOR
            fn due_hosts(&self, waiting: &[crate::WaitingHost])
                -> Result<Option<crate::DueHosts>, crate::ProvisionerError> {
                let _ = waiting;
                Ok(None)
            }

            /// Whether the backend is reachable with our credentials; `Ok(None)`: nothing to probe.
            Probe since PROBE_SINCE_MINOR
            fn probe(&self) -> Result<Option<crate::ProbeReport>, crate::ProvisionerError> {
                Ok(None)
            }

            /// The requests sent to the backend so far, by kind; must be cheap. `Ok(None)`: none.
            ApiCalls since API_CALLS_SINCE_MINOR
            fn api_calls(&self)
                -> Result<Option<Vec<crate::ApiCallCount>>, crate::ProvisionerError> {
                Ok(None)
            }

            /// How long until each host's next pass can be served; `Ok(None)`: not supported.
            ReadyHosts { starting: Vec<crate::StartingHost> } since READY_HOSTS_SINCE_MINOR
            fn ready_hosts(&self, starting: &[crate::StartingHost])
                -> Result<Option<crate::ReadyHosts>, crate::ProvisionerError> {
                let _ = starting;
                Ok(None)
            }

            /// Every machine the backend already manages, for `bmhctl import`. `Ok(None)`: none.
            KnownMachines since KNOWN_MACHINES_SINCE_MINOR
            fn known_machines(&self)
                -> Result<Option<Vec<crate::KnownMachine>>, crate::ProvisionerError> {
                Ok(None)
            }
        }
    };
}
pub(crate) use factory_calls;

/// The [`ProvisionerFactory`](crate::ProvisionerFactory) trait, with the hand-written methods.
macro_rules! factory_trait {
    (
        { $($head:tt)* }
        { $($by_hand:tt)* }
        $(
            $(#[$doc:meta])*
            $variant:ident $({ $($field:ident : $fty:ty),* })? since $since:ident
            fn $name:ident (&self $(, $arg:ident : $sig:ty)*) -> $ret:ty $default:block
        )*
    ) => {
        $($head)* {
            $($by_hand)*

            $(
                $(#[$doc])*
                fn $name(&self $(, $arg: $sig)*) -> $ret $default
            )*
        }
    };
}
pub(crate) use factory_trait;

/// The request enum, `{ <docs and attributes> pub enum Request } { <the variants by hand> }`, and
/// `impl ProvisionerFactory for RemoteFactory<T>`: each call sent through `T` if answered.
macro_rules! request_enum {
    (
        { $($head:tt)* }
        { $($by_hand:tt)* }
        $(
            $(#[$doc:meta])*
            $variant:ident $({ $($field:ident : $fty:ty),* })? since $since:ident
            fn $name:ident (&self $(, $arg:ident : $sig:ty)*) -> $ret:ty $default:block
        )*
    ) => {
        $($head)* {
            $($by_hand)*
            $(
                #[doc = concat!(
                    "[`ProvisionerFactory::", stringify!($name), "`](crate::ProvisionerFactory::",
                    stringify!($name), "); never sent to a plugin built with an SDK whose minor \
                    version is below [`", stringify!($since), "`](crate::", stringify!($since),
                    "). Answer: the method's `Ok` value."
                )]
                $variant $({ $(
                    #[doc = concat!(
                        "The `", stringify!($field), "` argument of the method, set by the host."
                    )]
                    $field: $fty
                ),* })?,
            )*
        }

        impl<T: FactoryTransport> ProvisionerFactory for RemoteFactory<T> {
            fn new_provisioner(
                &self,
                host: HostData,
                events: crate::EventSink,
            ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
                self.transport.new_provisioner(host, events)
            }

            $(
                fn $name(&self $(, $arg: $sig)*) -> $ret {
                    if !self.transport.answers(crate::$since) {
                        return Ok(None);
                    }
                    self.transport.request(Request::$variant
                        $({ $($field: $crate::calls::WireArg::to_wire($field)),* })?)
                }
            )*
        }
    };
}
pub(crate) use request_enum;

/// The plugin's answer to a request: the hand-written arms and one arm per call.
macro_rules! dispatch_request {
    (
        ($factory:expr, $request:expr) { $($by_hand:tt)* }
        $(
            $(#[$doc:meta])*
            $variant:ident $({ $($field:ident : $fty:ty),* })? since $since:ident
            fn $name:ident (&self $(, $arg:ident : $sig:ty)*) -> $ret:ty $default:block
        )*
    ) => {
        match $request {
            $($by_hand)*
            $(
                Request::$variant $({ $($field),* })? => answer(
                    $factory.$name($($crate::calls::WireArg::from_wire(&$arg)),*)
                ),
            )*
        }
    };
}
pub(crate) use dispatch_request;

/// The [`ForwardingFactory`](crate::ForwardingFactory) trait, every call forwarded to `inner`,
/// and its blanket impl: `{ <head> } { <trait methods by hand> } { <impl methods by hand> }`.
macro_rules! forwarding {
    (
        { $($head:tt)* }
        { $($by_hand:tt)* }
        { $($impl_by_hand:tt)* }
        $(
            $(#[$doc:meta])*
            $variant:ident $({ $($field:ident : $fty:ty),* })? since $since:ident
            fn $name:ident (&self $(, $arg:ident : $sig:ty)*) -> $ret:ty $default:block
        )*
    ) => {
        $($head)* {
            $($by_hand)*
            $(
                #[doc = concat!(
                    "[`ProvisionerFactory::", stringify!($name), "`](crate::ProvisionerFactory::",
                    stringify!($name), "), forwarded to `inner` by default."
                )]
                fn $name(&self $(, $arg: $sig)*) -> $ret {
                    self.inner().$name($($arg),*)
                }
            )*
        }

        impl<T: ForwardingFactory> ProvisionerFactory for T {
            $($impl_by_hand)*
            $(
                fn $name(&self $(, $arg: $sig)*) -> $ret {
                    ForwardingFactory::$name(self $(, $arg)*)
                }
            )*
        }
    };
}
pub(crate) use forwarding;

//! The optional factory calls, declared once.
//!
//! [`factory_calls!`] is the one table of the [`ProvisionerFactory`](crate::ProvisionerFactory)
//! calls that travel through the C ABI besides making and dropping provisioners. It hands the
//! table to a generator macro, and the generators turn it into
//!
//! * those methods of `ProvisionerFactory`, with their docs and default bodies (`factory_trait!`,
//!   expanded in `lib.rs`);
//! * their variants of [`Request`](crate::abi::Request) (`request_enum!`, in `abi.rs`);
//! * their arms of the plugin's answer to a request (`dispatch_request!`, in `abi_plugin.rs`);
//! * the `ProvisionerFactory` impl of [`RemoteFactory`](crate::abi::RemoteFactory), which sends
//!   each one as a request on the host side, to plugins built with an SDK that knows it
//!   (`remote_factory_impl!`, in `abi.rs`);
//! * the forwarding defaults of [`ForwardingFactory`](crate::ForwardingFactory) and its
//!   `ProvisionerFactory` impl (`forwarding_trait!` and `forwarding_impl!`, in `forwarding.rs`).
//!
//! The calls that are not requests of their own (`new_provisioner_with_state`,
//! `calls_never_block`) and the one that makes a provisioner are written by hand beside each
//! generator. Adding a call is one entry here plus its implementations, and its request's JSON
//! pinned beside the others' (the tests of `abi.rs`, `tests/wire_format.rs`).

/// The table. An entry is the call's docs, its variant in `Request` with the fields sent on the
/// wire, the first SDK minor version whose plugins answer it (older plugins are never sent it),
/// and the trait method with its default body:
///
/// ```text
/// /// Docs of the method.
/// Variant { field: WireType } since FIRST_MINOR_CONSTANT
/// fn method(&self, field: &WireType) -> Result<Option<Answer>, ProvisionerError> { default }
/// ```
///
/// Parameters and fields pair as in `calls.rs` (see `WireArg`). Every call is optional: a plugin
/// that is never sent it answers the default body.
macro_rules! factory_calls {
    ($generate:ident $($args:tt)*) => {
        $generate! {
            $($args)*

            /// Which of these hosts, whose passes wait on this provisioner, are due now: their
            /// node changed, or a slot they wait for freed. An optional capability: a caller that
            /// gets `Ok(None)` (the default, "not supported") keeps BMO's requeue times and does
            /// not ask again. A due host still gets BMO's whole pass; only its wait shrinks.
            DueHosts { waiting: Vec<crate::WaitingHost> } since DUE_HOSTS_SINCE_MINOR
            fn due_hosts(&self, waiting: &[crate::WaitingHost])
                -> Result<Option<crate::DueHosts>, crate::ProvisionerError> {
                let _ = waiting;
                Ok(None)
            }

            /// Whether the backend can be reached and accepts our credentials, asked once before
            /// the first pass with a short deadline, so that an unreachable or refusing backend is
            /// reported at once instead of as hosts that never progress. An optional capability:
            /// `Ok(None)` (the default) means "nothing to probe"; `Err` carries what the user
            /// should read (e.g. "connection refused", "401 Unauthorized"), and the caller asks
            /// again until it gives up.
            Probe since PROBE_SINCE_MINOR
            fn probe(&self) -> Result<Option<crate::ProbeReport>, crate::ProvisionerError> {
                Ok(None)
            }

            /// The requests sent to the backend so far, by kind, each count only ever growing;
            /// read when the host's metrics are scraped, so it must be cheap and must not reach
            /// the backend. An optional capability: `Ok(None)` (the default) means "not counted".
            ApiCalls since API_CALLS_SINCE_MINOR
            fn api_calls(&self)
                -> Result<Option<Vec<crate::ApiCallCount>>, crate::ProvisionerError> {
                Ok(None)
            }

            /// How long until the provisioner can serve the next pass of each of these hosts from
            /// what it shares between hosts (e.g. "my view of this node is older than the pass's
            /// last write; the next shared listing may be made in 300 ms"), asked in
            /// change-driven timing just before their passes start; the caller holds each pass
            /// back that long (bounded) without taking a pass slot. It must be cheap and must not
            /// reach the backend: it is asked on the caller's scheduling thread. An optional
            /// capability: `Ok(None)` (the default, "not supported") makes every pass start at
            /// once, and the caller does not ask again.
            ReadyHosts { starting: Vec<crate::StartingHost> } since READY_HOSTS_SINCE_MINOR
            fn ready_hosts(&self, starting: &[crate::StartingHost])
                -> Result<Option<crate::ReadyHosts>, crate::ProvisionerError> {
                let _ = starting;
                Ok(None)
            }

            /// Every machine the backend already manages, for `bmhctl import`. It may take a
            /// while (one listing of the backend). An optional capability: `Ok(None)` (the
            /// default) means "nothing to import from here".
            KnownMachines since KNOWN_MACHINES_SINCE_MINOR
            fn known_machines(&self)
                -> Result<Option<Vec<crate::KnownMachine>>, crate::ProvisionerError> {
                Ok(None)
            }
        }
    };
}
pub(crate) use factory_calls;

/// The [`ProvisionerFactory`](crate::ProvisionerFactory) trait:
/// `{ <docs> pub trait ProvisionerFactory: Send + Sync } { <the methods written by hand> }`.
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

/// The request enum: `{ <docs and attributes> pub enum Request } { <the variants by hand> }`.
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
    };
}
pub(crate) use request_enum;

/// `match $request { <arms by hand> <one arm per call> }`, the plugin's answer to a request made
/// of `$factory`'s answer with `answer`.
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

/// `impl ProvisionerFactory for RemoteFactory<T>`: every call sent through `T`, when the plugin
/// answers it.
macro_rules! remote_factory_impl {
    (
        $(
            $(#[$doc:meta])*
            $variant:ident $({ $($field:ident : $fty:ty),* })? since $since:ident
            fn $name:ident (&self $(, $arg:ident : $sig:ty)*) -> $ret:ty $default:block
        )*
    ) => {
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
pub(crate) use remote_factory_impl;

/// The [`ForwardingFactory`](crate::ForwardingFactory) trait, every call forwarded to `inner`
/// by default: `{ <docs> pub trait ForwardingFactory: Send + Sync } { <methods by hand> }`.
macro_rules! forwarding_trait {
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
                    stringify!($name), "), forwarded to `inner` by default."
                )]
                fn $name(&self $(, $arg: $sig)*) -> $ret {
                    self.inner().$name($($arg),*)
                }
            )*
        }
    };
}
pub(crate) use forwarding_trait;

/// `impl<T: ForwardingFactory> ProvisionerFactory for T`: `{ <the methods written by hand> }`.
macro_rules! forwarding_impl {
    (
        { $($by_hand:tt)* }
        $(
            $(#[$doc:meta])*
            $variant:ident $({ $($field:ident : $fty:ty),* })? since $since:ident
            fn $name:ident (&self $(, $arg:ident : $sig:ty)*) -> $ret:ty $default:block
        )*
    ) => {
        impl<T: ForwardingFactory> ProvisionerFactory for T {
            $($by_hand)*
            $(
                fn $name(&self $(, $arg: $sig)*) -> $ret {
                    ForwardingFactory::$name(self $(, $arg)*)
                }
            )*
        }
    };
}
pub(crate) use forwarding_impl;

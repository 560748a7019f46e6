//! bmhctl: metal3 baremetal-operator's BareMetalHost behaviour without Kubernetes.

/// `eprintln!` that drops the line on a closed standard error instead of panicking, and gives
/// it a priority when standard error is the journal ([`journal_stream`]).
#[macro_export]
macro_rules! eprintln_quiet {
    ($($arg:tt)*) => {{
        $crate::journal_stream::eprintln(format_args!($($arg)*));
    }};
}

pub mod allocator;
pub mod clock;
pub mod cmd;
pub mod context;
pub mod diagnostic;
pub mod error;
pub(crate) mod intern;
pub mod journal_stream;
pub mod machine;
pub mod metal3_export;
pub mod metrics;
pub mod objects;
pub mod persist;
pub mod plan;
pub mod provisioners;
pub mod record;
pub mod resource_args;
pub mod runner;
pub mod selection;
pub mod selector;
pub mod stderr_json;
pub mod timeline;
pub mod validate;

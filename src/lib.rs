//! bmhctl: metal3 baremetal-operator's BareMetalHost behaviour without Kubernetes.
//!
//! The layers, each depending only on those below it: `cmd` (what the user types) → `runner`
//! (scheduling, concurrency, progress) → `machine` (BMO's state machine, pure) → the provisioner
//! trait (`bmhctl-plugin-sdk`); beside the machine, `persist` (where hosts live between passes,
//! behind its `HostSource` interface: the user's files, or the local store).

/// `eprintln!` that never panics: a closed standard error (`2>&1 | head -1`) ends nothing
/// worth a crash, so the line is dropped.
#[macro_export]
macro_rules! eprintln_quiet {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod allocator;
pub mod clock;
pub mod cmd;
pub mod context;
pub mod diagnostic;
pub mod error;
pub(crate) mod intern;
pub mod machine;
pub mod metal3_export;
pub mod metrics;
pub mod objects;
pub mod persist;
pub mod plan;
pub mod provisioners;
pub mod record;
pub mod runner;
pub mod selection;
pub mod selector;
pub mod validate;

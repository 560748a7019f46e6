//! bmhctl: metal3 baremetal-operator's BareMetalHost behaviour without Kubernetes.
//!
//! The layers, each depending only on those below it: `cmd` (what the user types) → `runner`
//! (scheduling, concurrency, progress) → `machine` (BMO's state machine, pure) → the provisioner
//! trait (`bmhctl-plugin-sdk`); beside the machine, `persist` (where hosts live between passes,
//! behind its `HostSource` interface: the user's files, or the local store).

pub mod clock;
pub mod cmd;
pub mod diagnostic;
pub mod error;
pub mod machine;
pub mod metal3_export;
pub mod objects;
pub mod persist;
pub mod provisioners;
pub mod record;
pub mod runner;
pub mod selection;
pub mod selector;
pub mod validate;

//! bmhctl: metal3 baremetal-operator's BareMetalHost behaviour without Kubernetes.
//!
//! The layers, each depending only on those below it: `cmd` (what the user types) → `runner`
//! (scheduling, concurrency, progress) → `machine` (BMO's state machine, pure) → the provisioner
//! trait (`bmhctl-plugin-sdk`), `files` (every byte of the user's files) and `store` (the local
//! store: one YAML file per object, for `apply`, `get`, `describe`, `watch` and the verbs).

pub mod clock;
pub mod cmd;
pub mod diagnostic;
pub mod error;
pub mod files;
pub mod machine;
pub mod objects;
pub mod provisioners;
pub mod record;
pub mod runner;
pub mod selector;
pub mod store;
pub mod validate;

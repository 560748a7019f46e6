//! Hosts in the user's YAML files (`-f FILE|DIR`): every byte bmhctl reads from and writes to
//! them, and its bookkeeping beside them (`.bmhctl/<file>.state.json`, `.bmhctl/<file>.lock`).

pub mod admission;
pub mod annotation_edit;
mod bmc_event_subscriptions;
pub mod file_source;
pub mod host_file;
pub mod inventory;
mod kinds;
pub mod lock;
mod parse;
pub mod paths;
pub mod sidecar;
mod strict;
pub mod yaml_file;
mod yaml_tags;

#[cfg(test)]
mod tests;

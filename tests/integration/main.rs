//! End-to-end tests of the real `bmhctl` binary on real files (one test binary, as ripgrep does).

mod lab;

mod arguments;
mod bad_input;
mod ci_output;
mod completions;
mod config_secrets;
mod event_subscription;
mod exit_codes;
mod export;
mod files_driven;
mod firmware;
mod hardware_details_annotation;
mod ironic_faults;
mod ironic_lab;
mod ironic_unreachable;
mod kubectl_parity;
mod out_of_tree;
mod output_snapshots;
mod plugins;
mod provision;
mod refused_input;
mod result_contract;
mod save_failures;
mod store;
mod store_delete;
mod store_trust;
mod strict_input;
mod validate;
mod watch;

pub mod atomic;
pub mod backend;
pub mod inventory;
pub mod lock;
pub mod sidecar;
pub mod yaml_file;

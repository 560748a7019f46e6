//! `bmhctl version`.

pub fn print() {
    println!("bmhctl {}", env!("CARGO_PKG_VERSION"));
    println!("plugin SDK {}", bmhctl_plugin_sdk::SDK_VERSION);
    println!("plugin ABI {}", bmhctl_plugin_sdk::ABI_VERSION);
}

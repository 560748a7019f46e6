//! `bmhctl version`.

pub fn print() -> crate::error::Result<()> {
    super::output::outln!("bmhctl {}", env!("CARGO_PKG_VERSION"))?;
    super::output::outln!("plugin SDK {}", bmhctl_plugin_sdk::SDK_VERSION)?;
    super::output::outln!("plugin ABI {}", bmhctl_plugin_sdk::ABI_VERSION)
}

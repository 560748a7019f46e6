//! `ironic-provisioner.so`: BMO's Ironic provisioner, bmhctl's default. The provisioner itself
//! lives in bmhctl's `ironic` module (`src/ironic/`); this crate only exports it through the
//! plugin ABI.

bmhctl_plugin_sdk::export_plugin!(
    name = "ironic",
    factory = bmhctl::ironic::plugin::factory,
    host_configure = bmhctl::ironic::plugin::host_configure,
);

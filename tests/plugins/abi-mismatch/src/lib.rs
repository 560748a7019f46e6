//! A test plugin that declares plugin ABI 999: the loader must refuse it before any call.

use bmhctl_plugin_sdk::abi::{HostCallbacks, PluginBuffer, PluginDeclaration};
use std::ffi::{c_char, c_void};

unsafe extern "C" fn create_factory(
    _config: *const u8,
    _len: usize,
    _callbacks: *const HostCallbacks,
    _error_out: *mut PluginBuffer,
) -> *mut c_void {
    std::process::abort()
}

unsafe extern "C" fn call(
    _factory: *mut c_void,
    _request: *const u8,
    _len: usize,
    _out: *mut PluginBuffer,
) -> i32 {
    std::process::abort()
}

unsafe extern "C" fn free_buffer(_ptr: *mut u8, _len: usize) {
    std::process::abort()
}

/// The declaration, with an ABI version no bmhctl speaks.
#[unsafe(no_mangle)]
pub static BMHCTL_PROVISIONER_PLUGIN: PluginDeclaration = PluginDeclaration {
    abi_version: 999,
    sdk_version: c"0.1.0".as_ptr() as *const c_char,
    name: c"abi-mismatch".as_ptr() as *const c_char,
    create_factory,
    host_configure: None,
    call,
    free_buffer,
};

//! Root device hints → Ironic's hint map (spec 6.1).

use bmh_api::RootDeviceHints;
use serde_json::{Map, Value};

/// Ironic's `root_device` map; empty when there are no hints.
pub fn root_device_hints(hints: Option<&RootDeviceHints>) -> Map<String, Value> {
    let _ = hints;
    todo!()
}

//! Ironic inspection data → `HardwareDetails` (spec 3.3.1).

use bmh_api::HardwareDetails;
use serde_json::Value;

/// Convert `GET /v1/nodes/{id}/inventory`'s `inventory` and `plugin_data`.
pub fn hardware_details(inventory: &Value, plugin_data: &Value) -> HardwareDetails {
    let _ = (inventory, plugin_data);
    todo!()
}

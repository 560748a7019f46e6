//! BMC event subscriptions through Ironic's Redfish vendor passthru (3.14), as BMO makes them:
//! `create_subscription` with Redfish's capitalised keys, `delete_subscription` with `{"id": ..}`.

use super::IronicProvisioner;
use bmh_api::BmcEventSubscription;
use bmhctl_plugin_sdk::ProvisionerError;
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;

impl IronicProvisioner {
    /// Makes the subscription and answers its ID; the header values are never logged.
    pub(super) fn do_create_bmc_event_subscription(
        &mut self,
        subscription: &BmcEventSubscription,
        http_headers: &[BTreeMap<String, String>],
    ) -> Result<String, ProvisionerError> {
        let node = self.require_node_id()?;
        let body = json!({
            "Destination": subscription.spec.destination,
            "Context": subscription.spec.context,
            "HttpHeaders": http_headers,
        });
        self.wrote_unlisted();
        let answer = self
            .seen(
                self.client()
                    .vendor_passthru(&node, "create_subscription", Method::POST, &body),
            )
            .map_err(|e| ProvisionerError::Other(format!("failed to create subscription: {e}")))?;
        let id = answer.get("Id").and_then(Value::as_str).map(str::to_string);
        let no_id = "failed to create subscription: Ironic's answer has no Id";
        id.ok_or_else(|| ProvisionerError::Other(no_id.into()))
    }

    /// Removes the subscription of `status.subscriptionID` (404 counts as removed).
    pub(super) fn do_delete_bmc_event_subscription(
        &mut self,
        subscription: &BmcEventSubscription,
    ) -> Result<(), ProvisionerError> {
        let node = self.require_node_id()?;
        let body = json!({ "id": subscription.subscription_id() });
        self.wrote_unlisted();
        match self.seen(self.client().vendor_passthru(
            &node,
            "delete_subscription",
            Method::DELETE,
            &body,
        )) {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(ProvisionerError::Other(format!(
                "failed to remove subscription: {e}"
            ))),
        }
    }
}

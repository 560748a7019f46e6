//! Firmware reads (3.13), data images (3.14).

use super::{IronicProvisioner, transient};
use bmhctl_plugin_sdk::FirmwareSettingsOptions;
use bmhctl_plugin_sdk::{
    FirmwareComponentStatus, FirmwareSettings, ProvisionerError, SettingSchema,
};
use serde_json::Value;

fn text(v: &Value, key: &str) -> String {
    crate::convert::steps::desired_setting_text(v.get(key).unwrap_or(&Value::Null))
}

impl IronicProvisioner {
    pub(super) fn do_get_firmware_settings(
        &mut self,
        opts: FirmwareSettingsOptions,
    ) -> Result<FirmwareSettings, ProvisionerError> {
        let id = self.require_node_id()?;
        let items = self
            .seen(self.client().get_bios(&id, opts.include_schema))
            .map_err(|e| {
                ProvisionerError::Other(format!("could not get BIOS settings for node {id}: {e}"))
            })?;
        let mut out = FirmwareSettings::default();
        for item in items {
            let name = text(&item, "name");
            if name.is_empty() {
                continue;
            }
            out.settings.insert(name.clone(), text(&item, "value"));
            if opts.include_schema {
                let int = |k: &str| item.get(k).and_then(Value::as_i64);
                let flag = |k: &str| item.get(k).and_then(Value::as_bool);
                let values = item.get("allowable_values").and_then(Value::as_array);
                let values = values.into_iter().flatten().filter_map(Value::as_str);
                out.schema.insert(
                    name,
                    SettingSchema {
                        attribute_type: text(&item, "attribute_type"),
                        allowable_values: values.map(String::from).collect(),
                        lower_bound: int("lower_bound"),
                        upper_bound: int("upper_bound"),
                        min_length: int("min_length"),
                        max_length: int("max_length"),
                        read_only: flag("read_only"),
                        unique: flag("unique"),
                    },
                );
            }
        }
        Ok(out)
    }

    pub(super) fn do_get_firmware_components(
        &mut self,
    ) -> Result<Vec<FirmwareComponentStatus>, ProvisionerError> {
        let id = self.require_node_id()?;
        let items = self.seen(self.client().get_firmware(&id)).map_err(|e| {
            ProvisionerError::Other(format!(
                "could not get firmware components for node {id}: {e}"
            ))
        })?;
        Ok(items
            .iter()
            .map(|c| FirmwareComponentStatus {
                component: text(c, "component"),
                initial_version: text(c, "initial_version"),
                current_version: text(c, "current_version"),
                last_version_flashed: text(c, "last_version_flashed"),
                updated_at: text(c, "updated_at"),
            })
            .filter(|c| {
                c.component == "bios" || c.component == "bmc" || c.component.starts_with("nic:")
            })
            .collect())
    }

    pub(super) fn do_get_data_image_status(&mut self) -> Result<bool, ProvisionerError> {
        let version = self
            .seen(self.client().api_version())
            .map_err(ProvisionerError::other)?;
        if !version.has_virtual_media_get_api() {
            // BMO prints its `MaxVersion`, the minor version alone.
            return transient(format!(
                "ironic version={} doesn't support Virtual Media Get API, needs version>=1.93",
                version.server_max.1
            ));
        }
        let node = self.get_node()?;
        if node.reservation.as_deref().is_some_and(|r| !r.is_empty()) {
            return Err(ProvisionerError::NodeIsBusy);
        }
        // BMO's three calls return the client's error as it is (DataImage `status.error`).
        let media = self
            .seen(self.client().get_vmedia(&node.uuid))
            .map_err(ProvisionerError::other)?;
        Ok(media
            .iter()
            .any(|m| m.get("inserted").and_then(Value::as_bool) == Some(true)))
    }

    pub(super) fn do_attach_data_image(&mut self, url: &str) -> Result<(), ProvisionerError> {
        let id = self.require_node_id()?;
        self.wrote_unlisted();
        self.seen(self.client().attach_vmedia(&id, url))
            .map_err(ProvisionerError::other)
    }

    pub(super) fn do_detach_data_image(&mut self) -> Result<(), ProvisionerError> {
        let id = self.require_node_id()?;
        self.wrote_unlisted();
        self.seen(self.client().detach_vmedia(&id))
            .map_err(ProvisionerError::other)
    }
}

//! BMO's helper predicates on a host (`baremetalhost_types.go:956-1108`), same semantics.

use crate::annotations;
use crate::enums::{BootMode, InspectionMode};
use crate::host::BareMetalHost;

impl BareMetalHost {
    /// spec.bootMode, or UEFI when empty.
    pub fn boot_mode(&self) -> BootMode {
        if self.spec.boot_mode.is_unset() {
            BootMode::Uefi
        } else {
            self.spec.boot_mode.clone()
        }
    }

    /// An address or a credentials name is set.
    pub fn has_bmc_details(&self) -> bool {
        self.spec
            .bmc
            .as_ref()
            .is_some_and(|b| !b.address.is_empty() || !b.credentials_name.is_empty())
    }

    /// `spec.bmc.address`, or empty when there is no `bmc`.
    pub fn bmc_address(&self) -> &str {
        self.spec.bmc.as_ref().map_or("", |b| &b.address)
    }

    /// `spec.bmc.credentialsName`, or empty when there is no `bmc`.
    pub fn credentials_name(&self) -> &str {
        self.spec.bmc.as_ref().map_or("", |b| &b.credentials_name)
    }

    /// The value of annotation `key`, if the host has it.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.metadata.annotations.get(key).map(String::as_str)
    }

    /// inspectionMode `disabled`, or the legacy annotation `inspect.metal3.io: disabled`.
    pub fn inspection_disabled(&self) -> bool {
        self.spec.inspection_mode == InspectionMode::Disabled
            || self.annotation(annotations::INSPECT) == Some(annotations::INSPECT_DISABLED_VALUE)
    }

    fn status_image_url(&self) -> &str {
        self.status
            .as_ref()
            .map_or("", |s| &s.provisioning.image.url)
    }

    /// spec.image has a URL and nothing has been provisioned yet.
    pub fn has_new_image(&self) -> bool {
        self.spec.image.as_ref().is_some_and(|i| !i.url.is_empty())
            && self.status_image_url().is_empty()
    }

    /// spec.customDeploy.method is set and differs from the one applied.
    pub fn has_new_custom_deploy(&self) -> bool {
        let applied = self
            .status
            .as_ref()
            .and_then(|s| s.provisioning.custom_deploy.as_ref());
        self.spec.custom_deploy.as_ref().is_some_and(|c| {
            !c.method.is_empty() && applied.is_none_or(|applied| applied.method != c.method)
        })
    }

    /// BMO's `NeedsProvisioning`: `spec.online`, and a new image or custom deploy to apply.
    pub fn needs_provisioning(&self) -> bool {
        self.spec.online && (self.has_new_image() || self.has_new_custom_deploy())
    }
}

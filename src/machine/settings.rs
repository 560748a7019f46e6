//! Hardware profiles, root device hints and RAID: what "preparing" applies.

use super::Pass;
use bmh_api::{RaidConfig, RootDeviceHints};
use std::sync::{Arc, LazyLock};

/// The root device hint of a hardware profile; `None` for an unknown profile name.
pub fn profile_root_device_hints(profile: &str) -> Option<RootDeviceHints> {
    profile_hints(profile).map(|h| (**h).clone())
}

/// The profiles' hints, built once and shared, so comparing them compares addresses.
fn profile_hints(profile: &str) -> Option<&'static Arc<RootDeviceHints>> {
    static PROFILES: LazyLock<[(&str, Arc<RootDeviceHints>); 6]> = LazyLock::new(|| {
        let hints = |device_name: &str, hctl: &str| {
            Arc::new(RootDeviceHints {
                device_name: device_name.into(),
                hctl: hctl.into(),
                ..Default::default()
            })
        };
        [
            ("unknown", hints("/dev/sda", "")),
            ("libvirt", hints("/dev/vda", "")),
            ("dell", hints("", "0:0:0:0")),
            ("dell-raid", hints("", "0:2:0:0")),
            ("openstack", hints("/dev/vdb", "")),
            ("empty", Arc::default()),
        ]
    });
    PROFILES
        .iter()
        .find(|(name, _)| *name == profile)
        .map(|(_, hints)| hints)
}

/// The root device hints wanted, borrowed: the spec's, or a profile's shared value.
#[derive(Clone, Copy)]
enum WantedHints<'a> {
    Spec(&'a RootDeviceHints),
    Profile(&'static Arc<RootDeviceHints>),
}

impl WantedHints<'_> {
    /// The hints to keep in the status: a profile's are shared, not copied.
    fn to_status(self) -> Arc<RootDeviceHints> {
        match self {
            Self::Spec(h) => Arc::new(h.clone()),
            Self::Profile(p) => p.clone(),
        }
    }
}

/// Whether the status holds `wanted` (no hints in both counts).
fn hints_held(wanted: Option<WantedHints>, status: Option<&Arc<RootDeviceHints>>) -> bool {
    match (wanted, status) {
        (None, s) => s.is_none(),
        (_, None) => false,
        (Some(WantedHints::Spec(h)), Some(s)) => *h == **s,
        (Some(WantedHints::Profile(p)), Some(s)) => Arc::ptr_eq(p, s) || **p == **s,
    }
}

/// Root device hints and RAID the spec asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProvisioningSettings {
    pub root_device_hints: Option<Arc<RootDeviceHints>>,
    pub raid: Option<RaidConfig>,
}

/// "No RAID requested": no `spec.raid` or both lists absent (`[]` is a request).
fn raid_is_empty(raid: &Option<Box<RaidConfig>>) -> bool {
    raid.as_ref()
        .is_none_or(|r| r.hardware_raid_volumes.is_none() && r.software_raid_volumes.is_none())
}

impl Pass<'_, '_> {
    /// The profile BMO matches: status, then spec, then `libvirt` for libvirt BMCs, else `unknown`.
    pub(crate) fn hardware_profile(&self) -> &str {
        let status = &self.status().hardware_profile;
        if !status.is_empty() {
            return status;
        }
        if !self.rec.host.spec.hardware_profile.is_empty() {
            return &self.rec.host.spec.hardware_profile;
        }
        if self.rec.host.bmc_address().starts_with("libvirt") {
            return "libvirt";
        }
        "unknown"
    }

    /// The hints to apply: none with a software RAID root, else the spec's, else the profile's.
    fn desired_hints(&self) -> Result<Option<WantedHints<'_>>, String> {
        let spec = &self.rec.host.spec;
        let software_root = spec
            .raid
            .as_ref()
            .and_then(|r| r.software_raid_volumes.as_ref())
            .is_some_and(|v| v.iter().any(|vol| vol.root_volume));
        if software_root {
            return Ok(None);
        }
        if let Some(h) = &spec.root_device_hints {
            return Ok(Some(WantedHints::Spec(h)));
        }
        // BMO's `updateRootDeviceHints` reads the status's profile only (`host.HardwareProfile()`).
        let profile = &self.status().hardware_profile;
        profile_hints(profile)
            .map(|h| Some(WantedHints::Profile(h)))
            .ok_or_else(|| {
                format!(
                    "could not determine the host provisioning settings: failed to update root \
                     device hints: no hardware profile named \"{profile}\""
                )
            })
    }

    /// BMO's `getHostProvisioningSettings`, and whether it differs from the status.
    pub(crate) fn desired_provisioning_settings(
        &self,
    ) -> Result<(bool, ProvisioningSettings), String> {
        let status = &self.status().provisioning;
        let wanted = self.desired_hints()?;
        let spec_raid = &self.rec.host.spec.raid;
        let raid = if raid_is_empty(spec_raid) {
            status.raid.as_ref().map(|current| RaidConfig {
                hardware_raid_volumes: current
                    .hardware_raid_volumes
                    .clone()
                    .filter(|v| !v.is_empty()),
                software_raid_volumes: Some(Vec::new()),
            })
        } else {
            spec_raid.as_deref().cloned()
        };
        let dirty = !hints_held(wanted, status.root_device_hints.as_ref()) || raid != status.raid;
        Ok((
            dirty,
            ProvisioningSettings {
                root_device_hints: wanted.map(WantedHints::to_status),
                raid,
            },
        ))
    }

    pub(crate) fn save_provisioning_settings(&mut self, s: ProvisioningSettings) {
        let p = &mut self.status_mut().provisioning;
        p.root_device_hints = s.root_device_hints;
        p.raid = s.raid;
    }

    /// BMO's `clearHostProvisioningSettings`: forces the next `available` to prepare again.
    pub(crate) fn clear_provisioning_settings(&mut self) {
        let p = &mut self.status_mut().provisioning;
        p.root_device_hints = None;
        if let Some(r) = p.raid.as_mut() {
            r.software_raid_volumes = None;
        }
        p.firmware = None;
    }

    /// BMO's `matchProfile`; returns whether anything changed.
    pub(crate) fn match_profile(&mut self) -> Result<bool, String> {
        let name = self.hardware_profile();
        if profile_hints(name).is_none() {
            return Err(format!("no hardware profile named \"{name}\""));
        }
        let mut changed = false;
        if self.status().hardware_profile != name {
            let name = name.to_string();
            self.event("ProfileSet", format!("Hardware profile set: {name}"));
            self.status_mut().hardware_profile = name;
            changed = true;
        }
        let wanted = self.desired_hints()?;
        let held = self.status().provisioning.root_device_hints.as_ref();
        if !hints_held(wanted, held) {
            let hints = wanted.map(WantedHints::to_status);
            self.status_mut().provisioning.root_device_hints = hints;
            changed = true;
        }
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The status holds the wanted hints by address (a profile's shared value) or by value (read
    /// back from a file, or the spec's); none wanted matches none held.
    #[test]
    fn hints_are_held_by_address_or_by_value() {
        let unknown = profile_hints("unknown").expect("the unknown profile");
        let same_value = Arc::new((**unknown).clone());
        let other = profile_hints("libvirt").expect("the libvirt profile");
        let profile = Some(WantedHints::Profile(unknown));
        assert!(hints_held(profile, Some(unknown)));
        assert!(hints_held(profile, Some(&same_value)));
        assert!(!hints_held(profile, Some(other)));
        assert!(!hints_held(profile, None));
        let spec = Some(WantedHints::Spec(other));
        assert!(hints_held(spec, Some(other)));
        assert!(!hints_held(spec, Some(unknown)));
        assert!(hints_held(None, None));
        assert!(!hints_held(None, Some(unknown)));
        assert!(Arc::ptr_eq(
            &WantedHints::Profile(unknown).to_status(),
            unknown
        ));
        assert_eq!(profile_root_device_hints("dell").unwrap().hctl, "0:0:0:0");
        assert!(profile_root_device_hints("nope").is_none());
    }
}

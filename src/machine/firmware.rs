//! A host's HostFirmwareSettings and HostFirmwareComponents: BMO's HFS and HFC controllers.

use super::Pass;
use bmh_api::firmware_conditions::{CHANGE_DETECTED, VALID};
use bmh_api::{
    Condition, FIRMWARE_SCHEMA_KIND, FirmwareComponentStatus, FirmwareSchema, FirmwareSchemaSpec,
    FirmwareUpdate, HOST_UPDATE_POLICY_KIND, HostUpdatePolicy, IntOrString, ObjectMeta,
    ProvisioningState as S, SchemaReference, SettingSchema, UPDATE_POLICY_ON_REBOOT,
};
use bmhctl_plugin_sdk::{ActualSettings, DesiredSettings, FirmwareSettingsOptions, Provisioner};
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

const TRUE: &str = "True";
const FALSE: &str = "False";
/// The HFS controller's condition reasons.
const REASON_SUCCESS: &str = "Success";
const REASON_CONFIGURATION_ERROR: &str = "ConfigurationError";
/// The HFC controller's condition reasons.
const REASON_VALID_COMPONENT: &str = "OK";
const REASON_INVALID_COMPONENT: &str = "InvalidComponent";

/// BMO's FirmwareSchema name: `schema-` and 8 hex digits of a SHA-256 over the schema.
pub fn schema_name(schema: &BTreeMap<String, bmhctl_plugin_sdk::SettingSchema>) -> String {
    let mut keys: Vec<String> = Vec::new();
    for (name, s) in schema {
        keys.push(name.clone());
        keys.push(s.attribute_type.clone());
        keys.extend(s.allowable_values.iter().cloned());
        for n in [s.lower_bound, s.upper_bound, s.min_length, s.max_length]
            .into_iter()
            .flatten()
        {
            keys.push(n.to_string());
        }
        if let Some(ro) = s.read_only {
            keys.push(ro.to_string());
        }
    }
    keys.sort();
    let text = format!("[{}]", keys.join(" "));
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("schema-{}", &hex[..8])
}

/// BMO's `meta.SetStatusCondition`; returns whether anything changed.
fn set_condition(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    generation: i64,
    now: &str,
) -> bool {
    let mut new = Condition {
        type_: type_.into(),
        status: status.into(),
        observed_generation: generation,
        last_transition_time: now.into(),
        reason: reason.into(),
        message: message.into(),
    };
    let Some(c) = conditions.iter_mut().find(|c| c.type_ == type_) else {
        conditions.push(new);
        return true;
    };
    if c.status == status {
        new.last_transition_time = c.last_transition_time.clone();
    }
    std::mem::replace(c, new) != *c
}

/// The controllers' `ChangeDetected` and `Valid` (`invalid`: why not); returns whether changed.
fn set_change_conditions(
    c: &mut Vec<Condition>,
    mismatch: bool,
    ok_reason: &str,
    invalid: Option<(&str, &str)>,
    generation: i64,
    now: &str,
) -> bool {
    if mismatch {
        let (valid, reason, message) =
            invalid.map_or((TRUE, ok_reason, ""), |(r, m)| (FALSE, r, m));
        set_condition(c, CHANGE_DETECTED, TRUE, ok_reason, "", generation, now)
            | set_condition(c, VALID, valid, reason, message, generation, now)
    } else {
        set_condition(c, VALID, TRUE, ok_reason, "", generation, now)
            | set_condition(c, CHANGE_DETECTED, FALSE, ok_reason, "", generation, now)
    }
}

/// Why the spec's settings cannot be applied (passwords, unknown settings, refused values).
fn setting_errors(
    spec: &BTreeMap<String, IntOrString>,
    current: &BTreeMap<String, String>,
    schema: &FirmwareSchema,
) -> Vec<String> {
    let mut errors = Vec::new();
    for (name, value) in spec {
        if name.contains("Password") {
            errors.push("cannot set Password field".to_string());
        } else if !current.contains_key(name) {
            errors.push(format!("setting {name} is not in the Status field"));
        } else if let Err(e) = schema.validate_setting(name, value) {
            errors.push(e);
        }
    }
    errors
}

/// BMO's `hostObjectHasChanges`: (changed, valid), or an error for a stale generation.
fn has_changes(conditions: &[Condition], generation: i64) -> Result<(bool, bool), String> {
    let Some(changed) = conditions.iter().find(|c| c.type_ == CHANGE_DETECTED) else {
        return Ok((false, false));
    };
    if changed.observed_generation != generation {
        return Err(format!(
            "generation {generation} != observed generation {}",
            changed.observed_generation
        ));
    }
    let valid = conditions
        .iter()
        .any(|c| c.type_ == VALID && c.status == TRUE);
    Ok((valid && changed.status == TRUE, valid))
}

/// BMO's `reconcilerRequeueDelay` and `reconcilerRequeueDelayChangeDetected`.
const READ_AGAIN: chrono::TimeDelta = chrono::TimeDelta::minutes(5);
const READ_AGAIN_CHANGE_DETECTED: chrono::TimeDelta = chrono::TimeDelta::minutes(1);

/// Whether BMO's HFS or HFC controller, last run at `read_at`, would have run again by `now`.
fn read_again(conditions: &[Condition], read_at: Option<&str>, now: DateTime<Utc>) -> bool {
    let changed = conditions
        .iter()
        .any(|c| c.type_ == CHANGE_DETECTED && c.status == TRUE);
    let every = if changed {
        READ_AGAIN_CHANGE_DETECTED
    } else {
        READ_AGAIN
    };
    read_at
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .is_none_or(|t| now - t.with_timezone(&Utc) >= every)
}

/// Whether an object's conditions were not computed for its current generation.
fn stale(conditions: &[Condition], generation: i64) -> bool {
    conditions
        .iter()
        .find(|c| c.type_ == CHANGE_DETECTED)
        .is_none_or(|c| c.observed_generation != generation)
}

/// BMO's `getUpdatesDifference`: spec updates missing from the status, or with another URL.
pub fn updates_difference(
    spec: &[FirmwareUpdate],
    status: &[FirmwareUpdate],
) -> Vec<FirmwareUpdate> {
    spec.iter()
        .filter(|u| {
            !status
                .iter()
                .any(|s| s.component == u.component && s.url == u.url)
        })
        .cloned()
        .collect()
}

fn from_sdk_components(
    components: Vec<bmhctl_plugin_sdk::FirmwareComponentStatus>,
) -> Vec<FirmwareComponentStatus> {
    components
        .into_iter()
        .map(|c| FirmwareComponentStatus {
            component: c.component,
            initial_version: c.initial_version,
            current_version: c.current_version,
            last_version_flashed: c.last_version_flashed,
            updated_at: Some(c.updated_at).filter(|t| !t.is_empty()),
        })
        .collect()
}

fn from_sdk_schema(s: &bmhctl_plugin_sdk::SettingSchema) -> SettingSchema {
    SettingSchema {
        attribute_type: s.attribute_type.clone(),
        allowable_values: s.allowable_values.clone(),
        lower_bound: s.lower_bound,
        upper_bound: s.upper_bound,
        min_length: s.min_length,
        max_length: s.max_length,
        read_only: s.read_only,
        unique: s.unique,
    }
}

/// What the firmware objects ask a prepare or servicing step to apply.
#[derive(Debug, Default)]
pub(crate) struct FirmwareChanges {
    pub settings_dirty: bool,
    pub components_dirty: bool,
    pub target_settings: DesiredSettings,
    pub actual_settings: ActualSettings,
    pub target_components: Vec<bmhctl_plugin_sdk::FirmwareUpdate>,
}

impl Pass<'_, '_> {
    /// BMO's HFS and HFC controllers: refresh their status when stale or pending.
    pub(super) fn reconcile_firmware(&mut self, prov: &mut dyn Provisioner, state: &S) {
        if self.rec.firmware_settings.is_none() && self.rec.firmware_components.is_none() {
            return;
        }
        // BMO's `skipReconcileSubresource`, plus: no node before registration nor on the way out.
        if matches!(
            state,
            S::None | S::Unmanaged | S::PoweringOffBeforeDelete | S::Deleting
        ) || self.rec.being_deleted()
            || self.status().provisioning.id.is_empty()
        {
            return;
        }
        let pending = self.rec.book.firmware.refresh_pending;
        let (now, book) = (self.now.at, &self.rec.book.firmware);
        let mut ok = true;
        if let Some(hfs) = &self.rec.firmware_settings {
            let conditions = hfs.status.as_ref().map_or(&[][..], |s| &s.conditions);
            if pending
                || stale(conditions, hfs.metadata.generation)
                || read_again(conditions, book.settings_read_at.as_deref(), now)
            {
                let read = self.refresh_firmware_settings(prov);
                if read {
                    self.rec.book.firmware.settings_read_at = Some(self.now.text().to_string());
                    self.bookkeeping_changed = true;
                }
                ok &= read;
            }
        }
        let book = &self.rec.book.firmware;
        if let Some(hfc) = &self.rec.firmware_components {
            let conditions = hfc.status.as_ref().map_or(&[][..], |s| &s.conditions);
            if pending
                || stale(conditions, hfc.metadata.generation)
                || read_again(conditions, book.components_read_at.as_deref(), now)
            {
                let read = self.refresh_firmware_components(prov);
                if read {
                    self.rec.book.firmware.components_read_at = Some(self.now.text().to_string());
                    self.bookkeeping_changed = true;
                }
                ok &= read;
            }
        }
        if pending && ok {
            self.rec.book.firmware.refresh_pending = false;
            self.bookkeeping_changed = true;
        }
    }

    /// Firmware changes went to the provisioner: read their status again next pass.
    pub(super) fn firmware_refresh_needed(&mut self) {
        if !self.rec.book.firmware.refresh_pending {
            self.rec.book.firmware.refresh_pending = true;
            self.bookkeeping_changed = true;
        }
    }

    /// The HFS controller's reconcile; false when the provisioner could not answer.
    fn refresh_firmware_settings(&mut self, prov: &mut dyn Provisioner) -> bool {
        let opts = FirmwareSettingsOptions {
            include_schema: true,
        };
        let Ok(current) = prov.get_firmware_settings(opts).inspect_err(|e| {
            tracing::info!(host = %self.rec.host.metadata.name, "could not read the firmware settings: {e}");
        }) else {
            return false;
        };
        let key = self.rec.host.metadata.key();
        let name = schema_name(&current.schema);
        let schema = self.firmware_schema(&name, &key.namespace, &current.schema);
        if self.rec.book.firmware.schema.as_deref() != Some(&schema) {
            self.rec.book.firmware.schema = Some(Box::new(schema.clone()));
            self.bookkeeping_changed = true;
        }

        let now = self.now.text().to_string();
        let hfs = self
            .rec
            .firmware_settings
            .as_ref()
            .expect("called with settings");
        let generation = hfs.metadata.generation;
        let old = hfs.status.clone().unwrap_or_default();
        let mut new = old.clone();
        new.firmware_schema = Some(SchemaReference {
            namespace: key.namespace.clone(),
            name,
        });
        new.settings = current
            .settings
            .into_iter()
            .filter(|(k, _)| !k.contains("Password"))
            .collect();
        let mut dirty = new.firmware_schema != old.firmware_schema || new.settings != old.settings;
        let mismatch = hfs
            .spec
            .settings
            .iter()
            .any(|(k, v)| new.settings.get(k) != Some(&v.as_string()));
        let errors = if mismatch {
            setting_errors(&hfs.spec.settings, &new.settings, &schema)
        } else {
            Vec::new()
        };
        let invalid =
            (!errors.is_empty()).then_some((REASON_CONFIGURATION_ERROR, "Invalid BIOS setting"));
        let c = &mut new.conditions;
        dirty |= set_change_conditions(c, mismatch, REASON_SUCCESS, invalid, generation, &now);
        if !new.settings.is_empty() {
            for e in errors {
                self.event("ValidationFailed", format!("Invalid BIOS setting: {e}"));
            }
        }
        if dirty {
            new.last_updated = Some(now);
            if let Some(hfs) = self.rec.firmware_settings.as_mut() {
                hfs.status = Some(new);
            }
            self.firmware_changed = true;
        }
        true
    }

    /// The FirmwareSchema of this name: the one kept, else a new one (passwords left out).
    fn firmware_schema(
        &self,
        name: &str,
        namespace: &str,
        schema: &BTreeMap<String, bmhctl_plugin_sdk::SettingSchema>,
    ) -> FirmwareSchema {
        if let Some(s) = &self.rec.book.firmware.schema
            && s.metadata.name == name
            && s.metadata.namespace == namespace
        {
            return (**s).clone();
        }
        let vendor = self
            .status()
            .hardware
            .as_ref()
            .and_then(|h| h.system_vendor.clone())
            .unwrap_or_default();
        FirmwareSchema {
            api_version: bmh_api::API_VERSION.into(),
            kind: FIRMWARE_SCHEMA_KIND.into(),
            metadata: ObjectMeta {
                name: name.to_string(),
                namespace: namespace.to_string(),
                ..Default::default()
            },
            spec: FirmwareSchemaSpec {
                hardware_vendor: vendor.manufacturer,
                hardware_model: vendor.product_name,
                schema: schema
                    .iter()
                    .filter(|(n, s)| !n.contains("Password") && s.attribute_type != "Password")
                    .map(|(n, s)| (n.clone(), from_sdk_schema(s)))
                    .collect(),
            },
        }
    }

    /// The HFC controller's reconcile; false when the provisioner could not answer.
    fn refresh_firmware_components(&mut self, prov: &mut dyn Provisioner) -> bool {
        let components = prov.get_firmware_components().map(from_sdk_components);
        let Ok(components) = components.inspect_err(|e| {
            tracing::info!(host = %self.rec.host.metadata.name, "could not read the firmware components: {e}");
        }) else {
            return false;
        };
        let now = self.now.text().to_string();
        let hfc = self
            .rec
            .firmware_components
            .as_ref()
            .expect("called with components");
        let generation = hfc.metadata.generation;
        let old = hfc.status.clone().unwrap_or_default();
        let mismatch = old.updates != hfc.spec.updates;
        let mut new = old.clone();
        let mut dirty = old.components != components;
        new.components = components;
        let invalid = mismatch
            .then(|| hfc.validate().err())
            .flatten()
            .map(|e| format!("Invalid Firmware Components: {e}"));
        let why = invalid.as_deref().map(|m| (REASON_INVALID_COMPONENT, m));
        let c = &mut new.conditions;
        dirty |= set_change_conditions(c, mismatch, REASON_VALID_COMPONENT, why, generation, &now);
        if let Some(e) = invalid {
            self.event("ValidationFailed", e);
        }
        if dirty {
            new.last_updated = Some(now);
            if let Some(hfc) = self.rec.firmware_components.as_mut() {
                hfc.status = Some(new);
            }
            self.firmware_changed = true;
        }
        true
    }

    /// Whether the HFS and HFC have changes to apply, with what a step is to be given.
    pub(super) fn firmware_changes(
        &self,
        settings: bool,
        components: bool,
    ) -> Result<FirmwareChanges, FirmwareError> {
        let mut ch = FirmwareChanges::default();
        // BMO's `getHostFirmwareSettings`: whether valid settings changes wait to be applied.
        if let Some(hfs) = self.rec.firmware_settings.as_ref().filter(|_| settings) {
            let status = hfs.status.clone().unwrap_or_default();
            let (changed, valid) = has_changes(&status.conditions, hfs.metadata.generation)
                .map_err(|e| format!("hostFirmwareSettings not ready yet: {e}"))
                .map_err(FirmwareError::Settings)?;
            if valid && changed {
                if status.settings.is_empty() {
                    let e = "host firmware status settings not available";
                    return Err(FirmwareError::Settings(e.into()));
                }
                ch.settings_dirty = true;
                ch.actual_settings = status.settings;
                ch.target_settings = (hfs.spec.settings.iter())
                    .map(|(k, v)| (k.clone(), v.as_json()))
                    .collect();
            }
        }
        // BMO's `getHostFirmwareComponents`: whether valid updates wait to be applied.
        if let Some(hfc) = self.rec.firmware_components.as_ref().filter(|_| components) {
            let conditions = hfc.status.as_ref().map_or(&[][..], |s| &s.conditions);
            let (changed, valid) = has_changes(conditions, hfc.metadata.generation)
                .map_err(|e| format!("hostFirmwareComponents not ready yet: {e}"))
                .map_err(FirmwareError::Components)?;
            if valid && changed {
                ch.components_dirty = true;
                let done = hfc
                    .status
                    .as_ref()
                    .map_or(&[][..], |s| s.updates.as_slice());
                ch.target_components = updates_difference(&hfc.spec.updates, done)
                    .into_iter()
                    .map(|u| bmhctl_plugin_sdk::FirmwareUpdate {
                        component: u.component,
                        url: u.url,
                    })
                    .collect();
            }
        }
        Ok(ch)
    }

    /// Whether the host has settings (or updates) in its firmware objects' specs at all.
    pub(super) fn has_firmware_spec(&self, settings: bool, components: bool) -> bool {
        let hfs = self.rec.firmware_settings.as_ref().filter(|_| settings);
        let hfc = self.rec.firmware_components.as_ref().filter(|_| components);
        hfs.is_some_and(|s| !s.spec.settings.is_empty())
            || hfc.is_some_and(|c| !c.spec.updates.is_empty())
    }

    /// BMO's `saveHostFirmwareComponents`: the spec's updates become the status'.
    pub(super) fn save_firmware_components(
        &mut self,
        prov: &mut dyn Provisioner,
    ) -> Result<(), String> {
        let Some(hfc) = &self.rec.firmware_components else {
            return Ok(());
        };
        let status = hfc.status.clone().unwrap_or_default();
        if status.updates == hfc.spec.updates {
            return Ok(());
        }
        let components = prov
            .get_firmware_components()
            .map_err(|e| e.to_string())
            .map(from_sdk_components)?;
        let updates = hfc.spec.updates.clone();
        let hfc = self
            .rec
            .firmware_components
            .as_mut()
            .expect("checked above");
        let st = hfc.status.get_or_insert_with(Default::default);
        st.updates = updates;
        st.components = components;
        self.firmware_changed = true;
        Ok(())
    }

    /// After a failed step: forget the updates handed over, so they are all tried again.
    pub(super) fn clear_firmware_component_updates(&mut self) {
        if let Some(st) = self
            .rec
            .firmware_components
            .as_mut()
            .and_then(|c| c.status.as_mut())
            && !st.updates.is_empty()
        {
            st.updates.clear();
            self.firmware_changed = true;
        }
    }

    /// The HostUpdatePolicy's (settings, updates) `onReboot` permissions; none without one.
    pub(super) fn live_firmware_changes_allowed(&self) -> (bool, bool) {
        let key = self.rec.host.metadata.key();
        let Some(policy) = self
            .m
            .objects
            .object(bmh_api::API_VERSION, HOST_UPDATE_POLICY_KIND, &key)
            .and_then(|v| serde_json::from_value::<HostUpdatePolicy>(v).ok())
        else {
            return (false, false);
        };
        (
            policy.spec.firmware_settings == UPDATE_POLICY_ON_REBOOT,
            policy.spec.firmware_updates == UPDATE_POLICY_ON_REBOOT,
        )
    }
}

/// Which firmware object could not be judged, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FirmwareError {
    Settings(String),
    Components(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(c: &str, u: &str) -> FirmwareUpdate {
        FirmwareUpdate {
            component: c.into(),
            url: u.into(),
        }
    }

    /// BMO's HFS/HFC `Reconcile` requeues after `reconcilerRequeueDelay` (5 min), or
    /// `reconcilerRequeueDelayChangeDetected` (1 min) while `ChangeDetected` is true.
    #[test]
    fn the_status_is_read_again_on_bmo_s_schedule() {
        let now = DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let detected = |status: &str| Condition {
            type_: CHANGE_DETECTED.into(),
            status: status.into(),
            ..Condition::default()
        };
        let quiet = [detected(FALSE)];
        let changed = [detected(TRUE)];
        assert!(read_again(&quiet, None, now));
        assert!(!read_again(&quiet, Some("2026-12-01T09:55:30Z"), now));
        assert!(read_again(&quiet, Some("2026-12-01T09:55:00Z"), now));
        assert!(!read_again(&changed, Some("2026-12-01T09:59:30Z"), now));
        assert!(read_again(&changed, Some("2026-12-01T09:59:00Z"), now));
    }

    #[test]
    fn updates_difference_keeps_new_components_and_changed_urls() {
        let spec = [
            update("bmc", "u1"),
            update("bios", "u2"),
            update("nic:a", "u3"),
        ];
        let status = [update("bmc", "u1"), update("bios", "old")];
        assert_eq!(
            updates_difference(&spec, &status),
            [update("bios", "u2"), update("nic:a", "u3")]
        );
        assert_eq!(updates_difference(&spec, &[]), spec);
    }

    #[test]
    fn schema_names_depend_on_content_only() {
        let mut a = BTreeMap::new();
        a.insert(
            "X".to_string(),
            bmhctl_plugin_sdk::SettingSchema {
                attribute_type: "Integer".into(),
                lower_bound: Some(1),
                ..Default::default()
            },
        );
        let n = schema_name(&a);
        assert!(n.starts_with("schema-") && n.len() == 15, "{n}");
        // "[1 Integer X]"
        let expect: String = Sha256::digest(b"[1 Integer X]")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(n, format!("schema-{}", &expect[..8]));
        a.get_mut("X").unwrap().lower_bound = Some(2);
        assert_ne!(schema_name(&a), n);
    }

    #[test]
    fn has_changes_follows_the_conditions() {
        let cond = |t: &str, s: &str, g: i64| Condition {
            type_: t.into(),
            status: s.into(),
            observed_generation: g,
            ..Default::default()
        };
        assert_eq!(has_changes(&[], 1), Ok((false, false)));
        assert_eq!(
            has_changes(&[cond(CHANGE_DETECTED, TRUE, 1)], 2),
            Err("generation 2 != observed generation 1".into())
        );
        assert_eq!(
            has_changes(&[cond(CHANGE_DETECTED, TRUE, 1), cond(VALID, FALSE, 1)], 1),
            Ok((false, false))
        );
        assert_eq!(
            has_changes(&[cond(CHANGE_DETECTED, TRUE, 1), cond(VALID, TRUE, 1)], 1),
            Ok((true, true))
        );
        assert_eq!(
            has_changes(&[cond(CHANGE_DETECTED, FALSE, 1), cond(VALID, TRUE, 1)], 1),
            Ok((false, true))
        );
    }
}

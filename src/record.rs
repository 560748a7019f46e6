//! A host as the state machine sees it, with the bookkeeping Kubernetes would keep.

use bmh_api::{
    BareMetalHost, BareMetalHostSpec, BareMetalHostStatus, DataImage, FirmwareSchema, HardwareData,
    HostFirmwareComponents, HostFirmwareSettings, annotations,
};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use std::sync::Arc;

/// bmhctl's per-host bookkeeping: what Kubernetes would hold for BMO.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Bookkeeping {
    /// Generated once; plays `metadata.uid` (Ironic's `instance_uuid`, the config drive's `uuid`).
    pub uid: String,
    /// Plays `metadata.generation`: bumped whenever the spec changes.
    pub generation: i64,
    /// A hash of the spec the generation was computed for.
    pub spec_hash: String,
    /// The spec as last seen, which update rules compare against; shared, copied at each save.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_snapshot: Option<Arc<SpecSnapshot>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
    /// Plays `metadata.creationTimestamp` (RFC 3339); none for a host recorded before it was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<String>,
    /// Plays `metadata.deletionTimestamp`: set by `bmhctl delete`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion_requested: Option<String>,
    /// Plays BMO's write of `spec.architecture` from HardwareData.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub architecture: String,
    /// Plays the HardwareData object of the same name.
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Boxed: a record is moved between threads on every pass, and most never have one.
    pub hardware_data: Option<Box<HardwareData>>,
    /// What the provisioner keeps for this host between passes; shared (hosts at a step alike).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioner_state: Option<Arc<serde_json::Value>>,
    /// What Kubernetes would keep for the host's HostFirmwareSettings and HostFirmwareComponents.
    #[serde(skip_serializing_if = "FirmwareBook::is_empty")]
    pub firmware: FirmwareBook,
    /// Plays the DataImage's finalizer: kept while an image may be attached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_image: Option<Box<DataImage>>,
    /// Why the host's passes wait on its provisioner; cleared by a pass that gets through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<String>,
    /// The error of the host's last pass while its passes fail (BMO only logs it); cleared by a
    /// pass that gets through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pass_error: Option<String>,
    /// The host's last events, oldest first, at most [`EVENTS_KEPT`] (file mode).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<RecordedEvent>,
    /// When BMO's delete path finished for the host, which stays in its file (file mode): the
    /// whole entry then, read back as no bookkeeping at all but for [`Loaded::deleted_at`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted: Option<String>,
    /// How this load found the host, for `get` and `describe`; never written back.
    #[serde(skip)]
    pub loaded: Loaded,
}

/// How a load found a host's bookkeeping: not part of its value (equal whatever it holds).
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// Nothing recorded of the host before this load: its creation time is this load's, which
    /// `get` and `describe` do not show as the host's.
    pub unrecorded: bool,
    /// When its delete path finished, read from a deleted host's entry ([`Bookkeeping::deleted`]).
    pub deleted_at: Option<String>,
}

impl PartialEq for Loaded {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Enough for `describe` (at most 20 kinds), bounded so that a sidecar does not grow.
pub const EVENTS_KEPT: usize = 20;

/// One event of a host, as its bookkeeping keeps it. Its fields never change once recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedEvent {
    /// When it was recorded (RFC 3339, UTC).
    pub time: String,
    pub reason: String,
    pub message: String,
    /// Its JSON in a sidecar, made at its first save and kept (events never change).
    #[serde(skip)]
    pub json: EventJson,
}

/// A [`RecordedEvent`]'s JSON once made, shared by copies; not part of the event's value.
#[derive(Clone, Default)]
pub struct EventJson(std::sync::OnceLock<Arc<[u8]>>);

impl EventJson {
    pub fn get_or_init(&self, make: impl FnOnce() -> Arc<[u8]>) -> &Arc<[u8]> {
        self.0.get_or_init(make)
    }
}

impl PartialEq for EventJson {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for EventJson {}

impl std::fmt::Debug for EventJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "made"
        } else {
            "not made"
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FirmwareBook {
    /// Plays the HostFirmwareSettings' `metadata.generation` (0: no such document).
    #[serde(skip_serializing_if = "bmh_api::is_default")]
    pub settings_generation: i64,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub settings_spec_hash: String,
    /// Plays the HostFirmwareComponents' `metadata.generation` (0: no such document).
    #[serde(skip_serializing_if = "bmh_api::is_default")]
    pub components_generation: i64,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub components_spec_hash: String,
    /// Plays the FirmwareSchema the settings' `status.schema` names (boxed: rarely there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<Box<FirmwareSchema>>,
    /// Firmware changes were handed to the provisioner: read its firmware status again.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub refresh_pending: bool,
    /// When the settings and the components were last read (RFC 3339): BMO's HFS and HFC
    /// controllers read them again after 5 minutes, after 1 while `ChangeDetected` holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings_read_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub components_read_at: Option<String>,
}

impl FirmwareBook {
    pub fn is_empty(&self) -> bool {
        *self == FirmwareBook::default()
    }
}

impl Bookkeeping {
    /// Appends `events`, recorded at `time`, dropping the oldest beyond [`EVENTS_KEPT`].
    pub fn remember_events(&mut self, time: &str, events: &[bmhctl_plugin_sdk::Event]) {
        self.events.extend(events.iter().map(|e| RecordedEvent {
            time: time.to_string(),
            reason: e.reason.clone(),
            message: e.message.clone(),
            json: EventJson::default(),
        }));
        let extra = self.events.len().saturating_sub(EVENTS_KEPT);
        self.events.drain(..extra);
    }
}

/// One host: the object from the user's file (or the store) and its bookkeeping.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostRecord {
    /// Boxed: a record is moved between the runner's slots, workers and results.
    pub host: Box<BareMetalHost>,
    pub book: Bookkeeping,
    pub firmware_settings: Option<Box<HostFirmwareSettings>>,
    pub firmware_components: Option<Box<HostFirmwareComponents>>,
    /// The host's DataImage (same namespace and name), if the files or the store hold one.
    pub data_image: Option<Box<DataImage>>,
}

impl HostRecord {
    pub fn status(&self) -> &BareMetalHostStatus {
        static EMPTY: std::sync::OnceLock<BareMetalHostStatus> = std::sync::OnceLock::new();
        self.host
            .status
            .as_ref()
            .unwrap_or_else(|| EMPTY.get_or_init(Default::default))
    }

    pub fn architecture(&self) -> &str {
        if self.host.spec.architecture.is_empty() {
            &self.book.architecture
        } else {
            &self.host.spec.architecture
        }
    }

    /// Whether a `bmhctl delete` has marked the host and its finalizer still holds it.
    pub fn being_deleted(&self) -> bool {
        self.book.deletion_requested.is_some()
    }

    /// The record, taking a deletion asked for in the host's own metadata (a file's document: beside a
    /// running `watch -f`, or as a kubectl user writes it) as the mark `delete` keeps.
    pub fn with_deletion_timestamp(mut self) -> Self {
        self.take_deletion_timestamp();
        self
    }

    /// [`Self::with_deletion_timestamp`], in place.
    pub fn take_deletion_timestamp(&mut self) {
        if self.book.deletion_requested.is_none() {
            self.book
                .deletion_requested
                .clone_from(&self.host.metadata.deletion_timestamp);
        }
    }

    pub fn has_host_finalizer(&self) -> bool {
        self.book
            .finalizers
            .iter()
            .any(|f| f == annotations::HOST_FINALIZER)
    }
}

/// A host's spec as last seen, kept as compact JSON text (a `Value` tree is ~1.5 KB a host).
/// Written as the text, verbatim: the bytes a `Value` of the same spec would write.
#[derive(Clone, Serialize)]
#[serde(transparent)]
pub struct SpecSnapshot(Box<RawValue>);

impl SpecSnapshot {
    pub fn of(spec: &Value) -> Self {
        // Not `RawValue::from_string`, which would parse the text again.
        Self(
            serde_json::value::to_raw_value(spec)
                .unwrap_or_else(|_| RawValue::from_string("null".into()).expect("valid JSON")),
        )
    }

    /// The spec, typed; `None` when the text is not a spec (a hand-edited sidecar).
    pub fn spec(&self) -> Option<BareMetalHostSpec> {
        serde_json::from_str(self.0.get()).ok()
    }

    pub fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }
}

impl PartialEq for SpecSnapshot {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Eq for SpecSnapshot {}

impl std::fmt::Debug for SpecSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.get())
    }
}

impl<'de> Deserialize<'de> for SpecSnapshot {
    /// Through a `Value`, so that the text kept is the compact form whatever the file's spacing.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(|v| Self::of(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::{Bookkeeping, EVENTS_KEPT};
    use bmhctl_plugin_sdk::Event;

    #[test]
    fn the_bookkeeping_keeps_only_the_last_events() {
        let mut book = Bookkeeping::default();
        let events: Vec<Event> = (0..EVENTS_KEPT + 5)
            .map(|i| Event {
                reason: format!("R{i}"),
                message: format!("event {i}"),
            })
            .collect();
        book.remember_events("2026-12-01T00:00:00Z", &events[..3]);
        assert_eq!(book.events.len(), 3);
        book.remember_events("2026-12-01T00:00:01Z", &events[3..]);
        assert_eq!(book.events.len(), EVENTS_KEPT);
        assert_eq!(book.events[0].reason, "R5");
        assert_eq!(
            book.events.last().unwrap().message,
            format!("event {}", EVENTS_KEPT + 4)
        );
        assert_eq!(book.events.last().unwrap().time, "2026-12-01T00:00:01Z");
    }
}

//! Hosts that live in the local store, as a [`HostSource`]: one commit group per host.

use super::Store;
use super::events::StoredEvent;
use super::hosts::{
    components_key, data_image_key, decode_host, encode_hardware, encode_host, hardware_key,
    host_key, last_applied, set_last_applied, settings_key,
};
use super::object_file::write_status;
use super::watcher::StoreWatcher;
use crate::clock::{Clock, format_time};
use crate::error::{Error, Result};
use crate::objects::ObjectMap;
use crate::persist::{Change, HostSource, SourceChange, Staged};
use crate::record::Bookkeeping;
use crate::record::HostRecord;
use bmh_api::{
    BareMetalHostStatus, DataImageStatus, HostFirmwareComponentsStatus, HostFirmwareSettingsStatus,
    ObjectKey,
};
use std::sync::{Arc, Mutex, RwLock};

#[derive(Default)]
struct Pending {
    staged: u64,
    status: Option<Option<BareMetalHostStatus>>,
    book: Option<Option<Bookkeeping>>,
    removed_annotations: Vec<String>,
    settings_status: Option<Option<HostFirmwareSettingsStatus>>,
    components_status: Option<Option<HostFirmwareComponentsStatus>>,
    data_image_status: Option<Option<DataImageStatus>>,
}

/// Stages each pass in memory and writes it into the host's objects at commit.
pub struct StoreSource {
    store: Store,
    /// What [`HostSource::changes`] compares with.
    watcher: Mutex<StoreWatcher>,
    /// Host `i`'s key and staged changes. Grows while `watch` runs ([`StoreSource::add_host`]).
    hosts: RwLock<Vec<(ObjectKey, Arc<Mutex<Pending>>)>>,
    clock: Arc<dyn Clock>,
    /// The objects last read, whose Secrets that cannot be read now are kept.
    objects_read: Mutex<Option<ObjectMap>>,
}

impl StoreSource {
    /// A source over the store's hosts, or only these (other changes are then not reported).
    pub fn new(
        store: Store,
        only: Option<std::collections::BTreeSet<ObjectKey>>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            watcher: Mutex::new(StoreWatcher::new(store.clone(), only)),
            store,
            hosts: RwLock::new(Vec::new()),
            clock,
            objects_read: Mutex::new(None),
        }
    }

    fn host(&self, i: usize) -> (ObjectKey, Arc<Mutex<Pending>>) {
        let hosts = self.hosts.read().expect("store source hosts");
        let (k, p) = &hosts[i];
        (k.clone(), p.clone())
    }
}

/// Keeps what a pass asks to write (`Some(None)`: remove) over what was staged before.
fn keep<T: Clone>(slot: &mut Option<Option<T>>, change: Change<&T>) {
    if let Some(v) = change.written() {
        *slot = Some(v.cloned());
    }
}

impl HostSource for StoreSource {
    fn event_subscriptions(&self) -> Result<Vec<bmh_api::BmcEventSubscription>> {
        super::bmc_event_subscriptions::list(&self.store)
    }

    fn write_event_subscription_status(
        &self,
        key: &ObjectKey,
        status: &bmh_api::BmcEventSubscriptionStatus,
    ) -> Result<bool> {
        let key = super::bmc_event_subscriptions::subscription_key(key);
        write_status(&self.store, &key, Some(status))
    }

    fn groups(&self) -> usize {
        self.hosts.read().expect("store source hosts").len()
    }

    fn group_of(&self, host: usize) -> usize {
        host
    }

    fn stage(&self, host: usize, staged: &Staged) -> Result<u64> {
        let (_, pending) = self.host(host);
        let mut p = pending.lock().expect("store group lock");
        keep(&mut p.status, staged.status);
        keep(&mut p.book, staged.bookkeeping);
        p.removed_annotations
            .extend(staged.removed_annotations.iter().cloned());
        keep(&mut p.settings_status, staged.firmware_settings_status);
        keep(&mut p.components_status, staged.firmware_components_status);
        keep(&mut p.data_image_status, staged.data_image_status);
        p.staged += 1;
        Ok(p.staged)
    }

    fn commit(&self, group: usize) -> Result<u64> {
        let (key, pending) = self.host(group);
        let (p, ticket) = {
            let mut g = pending.lock().expect("store group lock");
            let ticket = g.staged;
            let p = std::mem::take(&mut *g);
            g.staged = ticket;
            (p, ticket)
        };
        let key = &key;
        let store = &self.store;
        if matches!(p.book, Some(None)) {
            // The delete path finished: the host and what it owns are gone.
            store.delete(&settings_key(key))?;
            store.delete(&components_key(key))?;
            store.delete(&data_image_key(key))?;
            store.delete(&hardware_key(key))?;
            store.delete(&host_key(key))?;
            return Ok(ticket);
        }
        if p.status.is_some() || p.book.is_some() || !p.removed_annotations.is_empty() {
            store.update(&host_key(key), |current| {
                let Some(current) = current else {
                    return Err(Error::Conflict(format!(
                        "BareMetalHost {key} was removed from the store while bmhctl drove it"
                    )));
                };
                let (mut host, mut book) = decode_host(current)?;
                if let Some(status) = &p.status {
                    host.status = status.clone();
                }
                for a in &p.removed_annotations {
                    host.metadata.annotations.remove(a);
                }
                // The runner's part of the bookkeeping over what the store holds.
                if let Some(Some(ours)) = &p.book {
                    book.finalizers = ours.finalizers.clone();
                    book.architecture = ours.architecture.clone();
                    book.provisioner_state = ours.provisioner_state.clone();
                    book.hardware_data = ours.hardware_data.clone();
                    book.firmware.schema = ours.firmware.schema.clone();
                    book.firmware.refresh_pending = ours.firmware.refresh_pending;
                    book.data_image = ours.data_image.clone();
                }
                let mut value = encode_host(&host, &book)?;
                // The keys the last apply set stay with the host re-encoded.
                set_last_applied(&mut value, &last_applied(current));
                Ok(Some(value))
            })?;
        }
        if let Some(Some(ours)) = &p.book {
            match &ours.hardware_data {
                Some(hw) => {
                    let value = encode_hardware(key, hw)?;
                    store.update(&hardware_key(key), |current| {
                        // Keep what the store added (uid, generation) when the data is the same.
                        let same = current.is_some_and(|c| {
                            c.get("spec") == value.get("spec")
                                && c["metadata"]["name"] == value["metadata"]["name"]
                        });
                        Ok((!same).then(|| value.clone()))
                    })?;
                }
                None => {
                    store.delete(&hardware_key(key))?;
                }
            }
        }
        if let Some(s) = &p.settings_status {
            write_status(store, &settings_key(key), s.as_ref())?;
        }
        if let Some(s) = &p.components_status {
            write_status(store, &components_key(key), s.as_ref())?;
        }
        if let Some(s) = &p.data_image_status {
            write_status(store, &data_image_key(key), s.as_ref())?;
        }
        Ok(ticket)
    }

    fn record_events(&self, host: usize, events: &[bmhctl_plugin_sdk::Event]) -> Result<()> {
        let time = format_time(self.clock.now());
        let events: Vec<StoredEvent> = events
            .iter()
            .map(|e| StoredEvent {
                time: time.clone(),
                reason: e.reason.clone(),
                message: e.message.clone(),
            })
            .collect();
        self.store.record_events(&self.host(host).0, &events)
    }

    fn add_host(&self, key: ObjectKey) -> usize {
        let mut hosts = self.hosts.write().expect("store source hosts");
        hosts.push((key, Arc::new(Mutex::new(Pending::default()))));
        hosts.len() - 1
    }

    fn load(&self, key: &ObjectKey) -> Result<Option<HostRecord>> {
        self.store.load_host(key)
    }

    fn objects(&self) -> Result<ObjectMap> {
        let mut last = self.objects_read.lock().expect("store objects");
        let map = self.store.object_map_after(last.as_ref())?;
        *last = Some(map.clone());
        Ok(map)
    }

    fn changes(&self) -> Result<Vec<SourceChange>> {
        self.watcher.lock().expect("store watcher").scan()
    }
}

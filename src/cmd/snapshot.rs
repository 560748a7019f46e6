//! The hosts of a [`Place`] as read now, without a lock: what `get`, `describe`, `export`,
//! `wait` and the verbs look at, selected the same way for every command.

use super::options::Place;
use crate::error::Result;
use crate::persist::files::inventory::{self, Inventory, LoadMode};
use crate::persist::store::{Store, StoredEvent};
use crate::record::HostRecord;
use crate::selection::{Candidate, HostSelection};
use bmh_api::ObjectKey;

/// The hosts of a place, read once.
pub enum Snapshot {
    Files(Inventory),
    /// `None` when there is no store yet (no hosts then).
    Store(Option<Store>, Vec<HostRecord>),
}

impl Snapshot {
    pub fn read(place: &Place) -> Result<Snapshot> {
        match place {
            Place::Files(paths) => Ok(Snapshot::Files(inventory::load(paths, LoadMode::ReadOnly)?)),
            Place::Store(root) => match Store::open_existing(root)? {
                Some(store) => {
                    let records = store.load_hosts()?;
                    Ok(Snapshot::Store(Some(store), records))
                }
                None => Ok(Snapshot::Store(None, Vec::new())),
            },
        }
    }

    /// Every host, in file and document order, or by namespace and name.
    pub fn records(&self) -> Vec<&HostRecord> {
        match self {
            Snapshot::Files(inv) => inv.hosts.iter().map(|h| &h.record).collect(),
            Snapshot::Store(_, records) => records.iter().collect(),
        }
    }

    /// The host of this key, if any.
    pub fn record(&self, key: &ObjectKey) -> Option<&HostRecord> {
        self.records().into_iter().find(|r| key_of(r) == *key)
    }

    /// The indices (into [`records`](Self::records)) of the hosts `selection` names.
    pub fn select(&self, selection: &HostSelection, place: &Place) -> Result<Vec<usize>> {
        let records = self.records();
        let keys: Vec<ObjectKey> = records.iter().map(|r| key_of(r)).collect();
        selection.select(candidates(&records, &keys), place.name())
    }

    /// [`select`](Self::select), where selecting nothing is a usage error.
    pub fn select_some(&self, selection: &HostSelection, place: &Place) -> Result<Vec<usize>> {
        let records = self.records();
        let keys: Vec<ObjectKey> = records.iter().map(|r| key_of(r)).collect();
        selection.select_some(candidates(&records, &keys), place.name())
    }

    /// The keys of the hosts `selection` names; selecting nothing is a usage error.
    pub fn select_keys(&self, selection: &HostSelection, place: &Place) -> Result<Vec<ObjectKey>> {
        let records = self.records();
        Ok(self
            .select_some(selection, place)?
            .into_iter()
            .map(|i| key_of(records[i]))
            .collect())
    }

    /// The host's recent events: the store's log, or (files) the host's bookkeeping.
    pub fn events(&self, key: &ObjectKey) -> Result<Vec<StoredEvent>> {
        match self {
            Snapshot::Store(Some(store), _) => store.events(key),
            Snapshot::Files(_) => Ok(self
                .record(key)
                .map(|r| {
                    r.book
                        .events
                        .iter()
                        .map(|e| StoredEvent {
                            time: e.time.clone(),
                            reason: e.reason.clone(),
                            message: e.message.clone(),
                        })
                        .collect()
                })
                .unwrap_or_default()),
            Snapshot::Store(None, _) => Ok(Vec::new()),
        }
    }
}

/// The keys of the hosts `selection` names at `place`; selecting nothing is a usage error.
/// Reads no more than selecting needs (on the store, the hosts' labels only).
pub fn select_keys(place: &Place, selection: &HostSelection) -> Result<Vec<ObjectKey>> {
    match place {
        Place::Store(root) => {
            let hosts = match Store::open_existing(root)? {
                Some(store) => store.host_labels()?,
                None => Vec::new(),
            };
            Ok(selection
                .select_some(
                    hosts.iter().map(|(key, labels)| Candidate { key, labels }),
                    place.name(),
                )?
                .into_iter()
                .map(|i| hosts[i].0.clone())
                .collect())
        }
        Place::Files(_) => Snapshot::read(place)?.select_keys(selection, place),
    }
}

/// A host's `namespace/name`.
pub fn key_of(r: &HostRecord) -> ObjectKey {
    let m = &r.host.metadata;
    ObjectKey::new(m.namespace_or_default(), &m.name)
}

fn candidates<'a>(
    records: &'a [&'a HostRecord],
    keys: &'a [ObjectKey],
) -> impl Iterator<Item = Candidate<'a>> {
    records.iter().zip(keys).map(|(r, key)| Candidate {
        key,
        labels: &r.host.metadata.labels,
    })
}

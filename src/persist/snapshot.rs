//! The hosts of a [`Place`] as read now, without a lock, selected the same way for every command.

use super::Place;
use super::files::bmc_event_subscriptions::subscription_docs;
use super::files::inventory::{self, Inventory, LoadMode};
use super::store::{BadObject, Store, StoredEvent, secret_key};
use super::{InputPolicy, LoadOptions};
use crate::error::Result;
use crate::objects::{TypedKey, secret_object};
use crate::record::HostRecord;
use crate::selection::{Candidate, HostSelection};
use bmh_api::{BmcEventSubscription, HOST_UPDATE_POLICY_KIND, ObjectKey};
use serde_json::Value;
use std::collections::BTreeMap;

/// The hosts of a place, read once.
pub enum Snapshot {
    Files(Inventory),
    /// `None` when there is no store yet (no hosts then). The hosts that cannot be read last.
    Store(Option<Store>, Vec<HostRecord>, Vec<BadObject>),
}

/// The hosts a selection picked: those read, and those that cannot be.
pub struct Selected<'a> {
    pub records: Vec<&'a HostRecord>,
    pub bad: Vec<&'a BadObject>,
}

impl Selected<'_> {
    pub fn is_empty(&self) -> bool {
        self.records.is_empty() && self.bad.is_empty()
    }

    /// A host named on the command line that cannot be read is the command's error.
    pub fn refuse_named(&self, selection: &HostSelection) -> Result<()> {
        match self.bad.first() {
            Some(b) if !selection.names_none() => Err(refusal(b)),
            _ => Ok(()),
        }
    }

    /// Says on stderr why each host that cannot be read was left out; then exit 1 (partial output).
    pub fn report_bad(&self) -> Result<()> {
        for b in &self.bad {
            crate::eprintln_quiet!("bmhctl: {}", b.error.chain());
        }
        partial(self.bad.len())
    }
}

/// Exit 1 when `bad` hosts were left out of a command's output.
pub fn partial(bad: usize) -> Result<()> {
    if bad == 0 {
        return Ok(());
    }
    Err(crate::error::Unfinished::Unreadable { count: bad }.into())
}

impl Snapshot {
    pub fn read(place: &Place, input: InputPolicy) -> Result<Snapshot> {
        match place {
            Place::Files(paths) => Ok(Snapshot::Files(inventory::load_with(
                paths,
                LoadMode::ReadOnly,
                &LoadOptions::with_input(input),
            )?)),
            // A mistyped `--store` is an error, not an empty inventory.
            Place::Store(root) => {
                let store = super::requests::open_store(root)?;
                let listing = store.load_hosts()?;
                Ok(Snapshot::Store(Some(store), listing.objects, listing.bad))
            }
        }
    }

    /// Every host, in file and document order, or by namespace and name.
    pub fn records(&self) -> Vec<&HostRecord> {
        match self {
            Snapshot::Files(inv) => inv.hosts.iter().map(|h| &h.record).collect(),
            Snapshot::Store(_, records, _) => records.iter().collect(),
        }
    }

    pub fn bad(&self) -> &[BadObject] {
        match self {
            Snapshot::Files(_) => &[],
            Snapshot::Store(_, _, bad) => bad,
        }
    }

    /// The documents of kinds bmhctl does not read, as written: skipped in the files, or stored
    /// by `apply`.
    pub fn skipped_documents(&self) -> Result<Vec<Value>> {
        let unread = |v: &Value| {
            let (av, kind) = (v["apiVersion"].as_str(), v["kind"].as_str());
            crate::persist::files::kinds::unread(av.unwrap_or(""), kind.unwrap_or("")).is_some()
        };
        Ok(match self {
            Snapshot::Files(inv) => (inv.other_documents.iter())
                .map(|o| &o.value)
                .filter(|v| unread(v))
                .cloned()
                .collect(),
            Snapshot::Store(Some(store), ..) => (store.object_map()?.objects())
                .map(|(_, v)| v)
                .filter(|v| unread(v))
                .cloned()
                .collect(),
            Snapshot::Store(None, ..) => Vec::new(),
        })
    }

    pub fn record(&self, key: &ObjectKey) -> Option<&HostRecord> {
        self.records().into_iter().find(|r| key_of(r) == *key)
    }

    /// The hosts `selection` names, those that cannot be read among them.
    pub fn select(&self, selection: &HostSelection, place: &Place) -> Result<Selected<'_>> {
        self.choose(selection, place, false)
    }

    /// [`select`](Self::select), where selecting nothing is a usage error.
    pub fn select_some(&self, selection: &HostSelection, place: &Place) -> Result<Selected<'_>> {
        self.choose(selection, place, true)
    }

    /// The keys of the hosts `selection` names that can be read; selecting nothing, or naming a
    /// host that cannot be read, is an error.
    pub fn select_keys(&self, selection: &HostSelection, place: &Place) -> Result<Vec<ObjectKey>> {
        let picked = self.select_some(selection, place)?;
        usable(
            picked.records.iter().map(|r| key_of(r)).collect(),
            &picked.bad,
            selection,
        )
    }

    fn choose(&self, selection: &HostSelection, place: &Place, some: bool) -> Result<Selected<'_>> {
        let records = self.records();
        let (good, bad) = pick(&records, self.bad(), selection, place.name(), some)?;
        Ok(Selected {
            records: good.into_iter().map(|i| records[i]).collect(),
            bad,
        })
    }

    /// A Secret as an object (`data` base64), `None` when absent.
    pub fn secret(&self, key: &ObjectKey) -> Result<Option<Value>> {
        match self {
            Snapshot::Store(Some(s), _, _) => Ok(s.get(&secret_key(key))?.map(|s| s.value)),
            Snapshot::Store(None, _, _) => Ok(None),
            Snapshot::Files(inv) => Ok(inv.objects.get_secret(key).map(|s| secret_object(s))),
        }
    }

    pub fn update_policy(&self, key: &ObjectKey) -> Result<Option<Value>> {
        let tk = TypedKey::new(bmh_api::API_VERSION, HOST_UPDATE_POLICY_KIND, key.clone());
        match self {
            Snapshot::Store(Some(s), _, _) => Ok(s.get(&tk)?.map(|s| s.value)),
            Snapshot::Store(None, _, _) => Ok(None),
            Snapshot::Files(inv) => Ok(inv
                .other_documents
                .iter()
                .find(|d| {
                    d.api_version == tk.api_version
                        && d.kind == tk.kind
                        && d.namespace == key.namespace
                        && d.name == key.name
                })
                .map(|d| d.value.clone())),
        }
    }

    /// Every BMCEventSubscription where the hosts are, in no particular order.
    pub fn event_subscriptions(&self) -> Result<Vec<BmcEventSubscription>> {
        Ok(match self {
            Snapshot::Store(Some(store), _, _) => {
                super::store::bmc_event_subscriptions::list(store)?
            }
            Snapshot::Store(None, _, _) => Vec::new(),
            Snapshot::Files(inv) => subscription_docs(&inv.other_documents)
                .into_iter()
                .map(|d| d.sub)
                .collect(),
        })
    }

    /// The host's recent events: the store's log, or (files) the host's bookkeeping.
    pub fn events(&self, key: &ObjectKey) -> Result<Vec<StoredEvent>> {
        match self {
            Snapshot::Store(Some(store), _, _) => store.events(key),
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
            Snapshot::Store(None, _, _) => Ok(Vec::new()),
        }
    }
}

/// A host of `place` as it is now (read without a lock), `None` when it is not there.
pub fn read_host(place: &Place, key: &ObjectKey, input: InputPolicy) -> Result<Option<HostRecord>> {
    match place {
        Place::Store(root) => super::requests::open_store(root)?.load_host(key),
        Place::Files(_) => Ok(Snapshot::read(place, input)?.record(key).cloned()),
    }
}

/// The keys of the hosts `selection` names at `place`; selecting nothing is a usage error.
pub fn select_keys(
    place: &Place,
    selection: &HostSelection,
    input: InputPolicy,
) -> Result<Vec<ObjectKey>> {
    match place {
        Place::Store(root) => {
            let hosts = super::requests::open_store(root)?.host_labels()?;
            let labelled: Vec<_> = hosts.objects.iter().map(|(k, l)| (k.clone(), l)).collect();
            let (good, bad) = pick_labelled(&labelled, &hosts.bad, selection, place.name(), true)?;
            let keys = good.into_iter().map(|i| labelled[i].0.clone()).collect();
            usable(keys, &bad, selection)
        }
        Place::Files(_) => Snapshot::read(place, input)?.select_keys(selection, place),
    }
}

/// The store hosts `selection` names, for a command that drives or plans them: a named host that
/// cannot be read is the error, one only swept up is said on stderr and left out.
pub fn select_records(
    hosts: crate::persist::store::Listing<HostRecord>,
    selection: &HostSelection,
    place: &str,
) -> Result<Vec<HostRecord>> {
    let records: Vec<&HostRecord> = hosts.objects.iter().collect();
    let (good, bad) = pick(&records, &hosts.bad, selection, place, true)?;
    usable(
        good.iter().map(|&i| key_of(records[i])).collect(),
        &bad,
        selection,
    )?;
    let mut records: Vec<Option<HostRecord>> = hosts.objects.into_iter().map(Some).collect();
    Ok(good.into_iter().filter_map(|i| records[i].take()).collect())
}

/// The indices into `records` of the hosts `selection` names (`some`: one at least), and the
/// hosts of `bad` it names.
fn pick<'a>(
    records: &[&HostRecord],
    bad: &'a [BadObject],
    selection: &HostSelection,
    place: &str,
    some: bool,
) -> Result<(Vec<usize>, Vec<&'a BadObject>)> {
    let labelled: Vec<_> = records
        .iter()
        .map(|r| (key_of(r), &r.host.metadata.labels))
        .collect();
    pick_labelled(&labelled, bad, selection, place, some)
}

/// [`pick`] among hosts given by key and labels.
fn pick_labelled<'a>(
    hosts: &[(ObjectKey, &BTreeMap<String, String>)],
    bad: &'a [BadObject],
    selection: &HostSelection,
    place: &str,
    some: bool,
) -> Result<(Vec<usize>, Vec<&'a BadObject>)> {
    let n = hosts.len();
    // A host that cannot be read has no labels.
    let candidates = hosts
        .iter()
        .map(|(key, labels)| Candidate { key, labels })
        .chain(bad.iter().map(|b| Candidate {
            key: &b.key,
            labels: &NO_LABELS,
        }));
    let picked = if some {
        selection.select_some(candidates, place)?
    } else {
        selection.select(candidates, place)?
    };
    let (good, picked_bad): (Vec<usize>, Vec<usize>) = picked.into_iter().partition(|&i| i < n);
    Ok((good, picked_bad.into_iter().map(|i| &bad[i - n]).collect()))
}

static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

/// The selected hosts that can be read.
fn usable(
    keys: Vec<ObjectKey>,
    bad: &[&BadObject],
    selection: &HostSelection,
) -> Result<Vec<ObjectKey>> {
    let Some(first) = bad.first() else {
        return Ok(keys);
    };
    if !selection.names_none() || keys.is_empty() {
        return Err(refusal(first));
    }
    for b in bad {
        crate::eprintln_quiet!("bmhctl: skipped: {}", b.error.chain());
    }
    Ok(keys)
}

/// The error of a host that cannot be read, as a command that needs it ends with.
fn refusal(bad: &BadObject) -> crate::error::Error {
    use crate::error::Error;
    match &bad.error {
        Error::Invalid(d) => Error::Invalid(d.clone()),
        e => Error::Usage(e.chain()),
    }
}

pub fn key_of(r: &HostRecord) -> ObjectKey {
    let m = &r.host.metadata;
    ObjectKey::new(m.namespace_or_default(), &m.name)
}

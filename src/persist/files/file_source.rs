//! Hosts that live in the user's files, as a [`HostSource`]: one commit group per file.

use super::bmc_event_subscriptions::{SubscriptionDoc, not_in_a_host_file, subscription_docs};
use super::host_file::{HostFile, Stamp, host_status_text, status_of, status_yaml};
use super::inventory::{self, HostEntry, Inventory, LoadMode};
use super::lock::FileLock;
use super::paths::expand;
use super::sidecar;
use super::yaml_file::YamlFile;
use crate::error::{Error, Result};
use crate::objects::ObjectMap;
use crate::persist::{Change, HostSource, LoadOptions, SourceChange, Staged};
use crate::record::HostRecord;
use bmh_api::{
    BareMetalHostStatus, HostFirmwareComponentsStatus, HostFirmwareSettingsStatus, ObjectKey,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// How many times in a row one commit reads its file again after an edit before it gives up,
/// and how long it waits after a text it cannot read (an edit caught half-way).
const EDIT_TURNS: usize = 5;
const EDIT_SETTLE: std::time::Duration = std::time::Duration::from_millis(100);

#[derive(Default)]
struct Group {
    /// `None` once the file is gone from the paths.
    file: Option<HostFile>,
    /// Bumped on every stage; the commit that follows makes it durable.
    staged: u64,
    /// The file's hosts, as last loaded and staged since.
    hosts: HashMap<ObjectKey, Entry>,
    /// Read again after a refused commit: its hosts are reported changed, and these gone.
    reread: bool,
    gone: Vec<ObjectKey>,
}

impl Group {
    /// The group of a file just loaded, before its hosts are added.
    fn of(file: HostFile) -> Group {
        Group {
            file: Some(file),
            ..Group::default()
        }
    }
}

struct Entry {
    /// The host's document, and those of its HostFirmwareSettings and HostFirmwareComponents.
    doc: usize,
    settings_doc: Option<usize>,
    components_doc: Option<usize>,
    data_image_doc: Option<usize>,
    /// The host as its last pass left it (what [`HostSource::load`] answers); `None`: handed over.
    record: Option<Box<HostRecord>>,
    /// BMO's delete path finished: the host is gone until its file changes.
    deleted: bool,
    /// What this run staged for the host, staged again into a new text (`None`: nothing yet).
    held: Option<Box<Held>>,
}

/// Which statuses of a host's documents this run staged, and the annotations it consumed.
#[derive(Default)]
struct Held {
    status: bool,
    settings: bool,
    components: bool,
    removed: Vec<String>,
}

impl Held {
    /// Stages into `entry`'s documents of `file` (the new text) what this run staged for the host,
    /// as `old` (the text this run holds) has it at `before`'s documents.
    fn splice(
        &self,
        old: &YamlFile,
        before: &Entry,
        file: &mut HostFile,
        entry: &Entry,
    ) -> Result<()> {
        if self.status {
            restage::<BareMetalHostStatus>(old, Some(before.doc), file, Some(entry.doc))?;
        }
        if self.settings {
            restage::<HostFirmwareSettingsStatus>(
                old,
                before.settings_doc,
                file,
                entry.settings_doc,
            )?;
        }
        if self.components {
            restage::<HostFirmwareComponentsStatus>(
                old,
                before.components_doc,
                file,
                entry.components_doc,
            )?;
        }
        if !self.removed.is_empty() {
            let keys: Vec<&str> = self.removed.iter().map(String::as_str).collect();
            file.stage_removed_annotations(entry.doc, &keys)?;
        }
        Ok(())
    }
}

/// Stages into document `doc` of `file` the status document `was` of `old` has.
fn restage<T: DeserializeOwned + Serialize + PartialEq + Clone>(
    old: &YamlFile,
    was: Option<usize>,
    file: &mut HostFile,
    doc: Option<usize>,
) -> Result<()> {
    let (Some(was), Some(doc)) = (was, doc) else {
        return Ok(());
    };
    let s = status_of::<T>(old, was).map_err(|e| {
        Error::bug(format!(
            "internal error: cannot read back a status bmhctl wrote: {e}"
        ))
    })?;
    file.stage_status(doc, s.as_ref())
}

/// A companion document's status as a pass stages it, serialised before the file's lock.
type Prepared<'a, T> = Option<(Option<&'a T>, Option<String>)>;

fn prepare<T: Serialize>(change: Change<&T>) -> Result<Prepared<'_, T>> {
    change
        .written()
        .map(|s| Ok((s, status_yaml(s)?)))
        .transpose()
}

/// Stages a prepared status into the companion document `doc`; whether there was one to stage.
fn stage_companion<T: DeserializeOwned + PartialEq + Clone>(
    file: &mut HostFile,
    doc: Option<usize>,
    prepared: Prepared<'_, T>,
) -> Result<bool> {
    let (Some(doc), Some((status, text))) = (doc, prepared) else {
        return Ok(false);
    };
    file.stage_status_yaml(doc, status, text.as_deref())?;
    Ok(true)
}

impl Entry {
    /// The entry of a loaded host, keeping its record here (`keep`) or giving it back.
    fn new(h: HostEntry, keep: bool) -> (Self, Option<HostRecord>) {
        let (record, handed) = if keep {
            (Some(Box::new(h.record)), None)
        } else {
            (None, Some(h.record))
        };
        let entry = Entry {
            doc: h.doc,
            settings_doc: h.firmware_settings_doc,
            components_doc: h.firmware_components_doc,
            data_image_doc: h.data_image_doc,
            record,
            deleted: false,
            held: None,
        };
        (entry, handed)
    }
}

/// A runner's host, as its passes name it: shared, so that a pass takes it without copying.
struct HostKey {
    key: ObjectKey,
    /// Its key in the sidecar (`namespace/name`).
    sidecar: String,
}

/// The hosts of the files given on the command line.
pub struct FileSource {
    paths: Vec<PathBuf>,
    options: LoadOptions,
    groups: RwLock<Vec<Arc<Mutex<Group>>>>,
    index: RwLock<HashMap<ObjectKey, usize>>,
    /// The runner's hosts, in the order they were added, with the group each was last seen in.
    hosts: RwLock<Vec<(Arc<HostKey>, usize)>>,
    /// The files of the paths that hold no host, as last loaded: a change to one is a change too.
    others: Mutex<BTreeMap<PathBuf, Option<Stamp>>>,
    objects: RwLock<ObjectMap>,
    /// Whether [`HostSource::changes`] ran once (the first reports every host).
    scanned: AtomicBool,
    /// The last problem met loading the files again, logged once.
    last_problem: Mutex<Option<String>>,
    /// The BMCEventSubscription documents, as last loaded and written since.
    subscriptions: RwLock<Vec<SubscriptionDoc>>,
}

impl FileSource {
    /// A source over the files of `inv`, loaded in [`LoadMode::Write`] with `options`.
    pub fn new(inv: Inventory, options: &LoadOptions) -> Self {
        Self::build(inv, options, true).0
    }

    /// [`new`](Self::new) handing every host's record over to a caller that keeps them (the batch
    /// runner): a host is not [`load`](HostSource::load)ed until its file is read again.
    pub fn handing_over(inv: Inventory, options: &LoadOptions) -> (Self, Vec<HostRecord>) {
        let (source, records) = Self::build(inv, options, false);
        // The caller has every host already: its first look for changes reports only changes.
        source.scanned.store(true, Ordering::SeqCst);
        (source, records)
    }

    fn build(inv: Inventory, options: &LoadOptions, keep: bool) -> (Self, Vec<HostRecord>) {
        let Inventory {
            paths,
            files,
            hosts,
            objects,
            other_documents,
            ..
        } = inv;
        let subscriptions = RwLock::new(subscription_docs(&other_documents));
        let mut groups: Vec<Group> = files
            .into_iter()
            .map(|file| Group::of(loaded(file)))
            .collect();
        let mut index = HashMap::new();
        let mut handed = Vec::new();
        for h in hosts {
            let (file, key) = (h.file, h.key.clone());
            index.insert(key.clone(), file);
            let (e, record) = Entry::new(h, keep);
            groups[file].hosts.insert(key, e);
            handed.extend(record);
        }
        let groups: Vec<_> = groups
            .into_iter()
            .map(|g| Arc::new(Mutex::new(g)))
            .collect();
        let source = Self {
            others: Mutex::new(other_files(&paths, &groups).unwrap_or_default()),
            paths,
            options: options.clone(),
            groups: RwLock::new(groups),
            index: RwLock::new(index),
            hosts: RwLock::new(Vec::new()),
            objects: RwLock::new(objects),
            scanned: AtomicBool::new(false),
            last_problem: Mutex::new(None),
            subscriptions,
        };
        (source, handed)
    }

    /// Every host of the files, in file and document order.
    pub fn host_keys(&self) -> Vec<ObjectKey> {
        let mut keys: Vec<(usize, usize, ObjectKey)> = Vec::new();
        for (g, group) in self.all_groups().iter().enumerate() {
            let group = group.lock().expect("file group");
            keys.extend(group.hosts.iter().map(|(k, e)| (g, e.doc, k.clone())));
        }
        keys.sort();
        keys.into_iter().map(|(_, _, k)| k).collect()
    }

    fn subs(&self) -> std::sync::RwLockReadGuard<'_, Vec<SubscriptionDoc>> {
        self.subscriptions
            .read()
            .expect("file source subscriptions")
    }

    fn subs_mut(&self) -> std::sync::RwLockWriteGuard<'_, Vec<SubscriptionDoc>> {
        self.subscriptions
            .write()
            .expect("file source subscriptions")
    }

    fn all_groups(&self) -> Vec<Arc<Mutex<Group>>> {
        self.groups.read().expect("file groups").clone()
    }

    fn group(&self, g: usize) -> Arc<Mutex<Group>> {
        self.groups.read().expect("file groups")[g].clone()
    }

    fn key_of(&self, host: usize) -> Arc<HostKey> {
        self.hosts.read().expect("file source hosts")[host]
            .0
            .clone()
    }

    fn group_of_key(&self, key: &ObjectKey) -> Option<usize> {
        if self.groups() == 1 {
            return Some(0);
        }
        self.index
            .read()
            .expect("file source index")
            .get(key)
            .copied()
    }

    /// Reads one file again after a refused commit and takes its new text ([`take_new_text`]).
    fn reread(&self, group: &mut Group) -> Result<()> {
        let Some(file) = group.file.as_ref() else {
            return Ok(());
        };
        let path = file.path.clone();
        let mut inv = inventory::load_with(
            std::slice::from_ref(&path),
            LoadMode::ReadOnly,
            &self.options,
        )?;
        if inv.files.len() != 1 {
            return Err(Error::Conflict(format!(
                "{} no longer holds hosts",
                path.display()
            )));
        }
        let fresh = loaded(inv.files.remove(0));
        let subscriptions_now = subscription_docs(&inv.other_documents);
        let before: Vec<ObjectKey> = group.hosts.keys().cloned().collect();
        take_new_text(group, fresh, inv.hosts)?;
        // The file's subscriptions now, taken only with its new text (their documents are its).
        let mut subs = self.subs_mut();
        subs.retain(|d| d.file != path);
        subs.extend(subscriptions_now);
        drop(subs);
        group.reread = true;
        let gone = before.into_iter().filter(|k| !group.hosts.contains_key(k));
        group.gone.extend(gone);
        Ok(())
    }

    fn problem(&self, e: &Error) {
        let text = e.chain();
        let mut last = self.last_problem.lock().expect("file source problem");
        if last.as_deref() != Some(text.as_str()) {
            tracing::warn!("not reloading the files until they are fixed: {text}");
            *last = Some(text);
        }
    }

    /// Whether a file changed on disk since it was last read or written, or appeared or went.
    fn files_changed(&self) -> Result<bool> {
        let groups = self.all_groups();
        for group in &groups {
            let g = group.lock().expect("file group");
            if let Some(f) = &g.file
                && Stamp::of(f.real_path()) != f.disk_stamp
            {
                return Ok(true);
            }
        }
        let now = other_files(&self.paths, &groups)?;
        Ok(now != *self.others.lock().expect("file source others"))
    }

    fn reload(&self) -> Result<Vec<SourceChange>> {
        let inv = inventory::load_with(&self.paths, LoadMode::ReadOnly, &self.options)?;
        inventory::check_secret_references(&inv)?;
        let Inventory {
            files,
            hosts,
            objects,
            other_documents,
            ..
        } = inv;
        *self.subs_mut() = subscription_docs(&other_documents);
        let mut by_file: Vec<Vec<HostEntry>> = files.iter().map(|_| Vec::new()).collect();
        for h in hosts {
            by_file[h.file].push(h);
        }
        let mut changes = Vec::new();
        let mut groups = self.groups.write().expect("file groups");
        let mut seen: BTreeSet<usize> = BTreeSet::new();
        for (file, entries) in files.into_iter().zip(by_file) {
            self.reload_file(&mut groups, loaded(file), entries, &mut seen, &mut changes);
        }
        for (g, group) in groups.iter().enumerate() {
            if seen.contains(&g) {
                continue;
            }
            let mut group = group.lock().expect("file group");
            if group.file.take().is_some() {
                changes.extend(group.hosts.drain().map(|(k, _)| SourceChange::HostGone(k)));
            }
        }
        self.reindex(&groups, &mut changes);
        *self.others.lock().expect("file source others") =
            other_files(&self.paths, &groups).unwrap_or_default();
        *self.objects.write().expect("file source objects") = objects;
        changes.push(SourceChange::Objects);
        *self.last_problem.lock().expect("file source problem") = None;
        Ok(changes)
    }

    /// Takes a file read again (a known file's new text, or a new file, locked) with its hosts.
    fn reload_file(
        &self,
        groups: &mut Vec<Arc<Mutex<Group>>>,
        mut file: HostFile,
        entries: Vec<HostEntry>,
        seen: &mut BTreeSet<usize>,
        changes: &mut Vec<SourceChange>,
    ) {
        let existing = groups.iter().position(|g| {
            g.lock()
                .expect("file group")
                .file
                .as_ref()
                .is_some_and(|f| f.real_path() == file.real_path())
        });
        if let Some(g) = existing {
            seen.insert(g);
            let mut group = groups[g].lock().expect("file group");
            let old = group.file.as_mut().expect("a known file");
            if old.disk_stamp == file.disk_stamp && old.disk_stamp.is_some() {
                return;
            }
            for k in group.hosts.keys() {
                if !entries.iter().any(|e| e.key == *k) {
                    changes.push(SourceChange::HostGone(k.clone()));
                }
            }
            let keys: Vec<ObjectKey> = entries.iter().map(|h| h.key.clone()).collect();
            match take_new_text(&mut group, file, entries) {
                Ok(()) => changes.extend(keys.into_iter().map(SourceChange::Host)),
                // Its hosts stay as they were; its next commit is refused and says why.
                Err(e) => self.problem(&e),
            }
            return;
        }
        match FileLock::acquire(file.real_path(), file.path()) {
            Ok(lock) => file.lock = Some(lock),
            Err(e) => {
                self.problem(&e);
                return;
            }
        }
        let mut group = Group::of(file);
        for h in entries {
            changes.push(SourceChange::Host(h.key.clone()));
            group.hosts.insert(h.key.clone(), Entry::new(h, true).0);
        }
        groups.push(Arc::new(Mutex::new(group)));
        seen.insert(groups.len() - 1);
    }

    /// Indexes the hosts of `groups` by key; a host that moved to another file is not gone.
    fn reindex(&self, groups: &[Arc<Mutex<Group>>], changes: &mut Vec<SourceChange>) {
        let mut index = self.index.write().expect("file source index");
        index.clear();
        for (g, group) in groups.iter().enumerate() {
            for k in group.lock().expect("file group").hosts.keys() {
                index.insert(k.clone(), g);
            }
        }
        changes.retain(|c| match c {
            SourceChange::HostGone(k) => !index.contains_key(k),
            _ => true,
        });
    }
}

/// Takes a file's new text (edited during the run) in place of the group's: the lock and the
/// sidecar carry over, and the statuses this run holds are staged into the new documents (the
/// user's edit of everything else wins).
fn take_new_text(group: &mut Group, mut fresh: HostFile, entries: Vec<HostEntry>) -> Result<()> {
    // The text as this run holds it, parsed again: an edit met during a run is rare.
    let mut old: Option<YamlFile> = None;
    let mut hosts = HashMap::with_capacity(entries.len());
    for h in entries {
        let key = h.key.clone();
        let (mut entry, _) = Entry::new(h, true);
        if let Some(before) = group.hosts.get(&key) {
            if let (Some(held), Some(file)) = (&before.held, &group.file) {
                if old.is_none() {
                    let text = file.yaml().render();
                    old = Some(YamlFile::parse(text).map_err(|e| {
                        Error::bug(format!(
                            "internal error: {}: cannot parse the text bmhctl holds: {e}",
                            file.path().display()
                        ))
                    })?);
                }
                let old = old.as_ref().expect("parsed above");
                held.splice(old, before, &mut fresh, &entry)?;
            }
            if let (Some(rec), Some(was)) = (entry.record.as_mut(), before.record.as_ref()) {
                rec.host.status.clone_from(&was.host.status);
                rec.book.clone_from(&was.book);
                rec.take_deletion_timestamp();
                if let (Some(s), Some(w)) = (&mut rec.firmware_settings, &was.firmware_settings) {
                    s.status.clone_from(&w.status);
                }
                if let (Some(c), Some(w)) = (&mut rec.firmware_components, &was.firmware_components)
                {
                    c.status.clone_from(&w.status);
                }
            }
        }
        hosts.insert(key, entry);
    }
    for (key, entry) in &mut hosts {
        if let Some(before) = group.hosts.get_mut(key) {
            entry.held = before.held.take();
        }
    }
    if let Some(old) = group.file.as_mut() {
        fresh.lock = old.lock.take();
        fresh.said_no_exchange = old.said_no_exchange;
        std::mem::swap(&mut fresh.sidecar, &mut old.sidecar);
    }
    group.file = Some(fresh);
    group.hosts = hosts;
    // An editor's rename brought a new file: the lock moves to it.
    group.file.as_mut().map_or(Ok(()), HostFile::follow_lock)
}

/// The conflict `why` of a file that cannot be read again after it.
fn unreadable_again(why: &str, e: &Error) -> Error {
    Error::Conflict(format!("{why}: it cannot be read again: {}", e.chain()))
}

/// A file whose hosts are loaded: what its sidecar read is in their records now.
fn loaded(mut file: HostFile) -> HostFile {
    file.sidecar.forget_read();
    file
}

/// The files of `paths` but those of `groups`, with their stamps now.
fn other_files(
    paths: &[PathBuf],
    groups: &[Arc<Mutex<Group>>],
) -> Result<BTreeMap<PathBuf, Option<Stamp>>> {
    let known: BTreeSet<PathBuf> = groups
        .iter()
        .filter_map(|g| {
            let g = g.lock().expect("file group");
            g.file.as_ref().map(|f| f.real_path().to_path_buf())
        })
        .collect();
    Ok(expand(paths, &mut Vec::new())?
        .into_iter()
        .map(|(_, real)| real)
        .filter(|p| !known.contains(p))
        .map(|p| (p.clone(), Stamp::of(&p)))
        .collect())
}

impl HostSource for FileSource {
    fn groups(&self) -> usize {
        self.groups.read().expect("file groups").len()
    }

    fn group_of(&self, host: usize) -> usize {
        // Asked after every pass that saves: one file needs no look-up.
        if self.groups.read().expect("file groups").len() == 1 {
            return 0;
        }
        let hosts = self.hosts.read().expect("file source hosts");
        let (key, last) = &hosts[host];
        let last = *last;
        match self.group_of_key(&key.key) {
            Some(g) if g != last => {
                drop(hosts);
                self.hosts.write().expect("file source hosts")[host].1 = g;
                g
            }
            _ => last,
        }
    }

    fn stage(&self, host: usize, staged: &Staged) -> Result<u64> {
        // Serialised before the file's lock is taken: other passes of the file stage meanwhile.
        let status_text = staged.status.written().map(host_status_text).transpose()?;
        let settings = prepare(staged.firmware_settings_status)?;
        let components = prepare(staged.firmware_components_status)?;
        let data_image = prepare(staged.data_image_status)?;
        let host_key = self.key_of(host);
        // A host deleted keeps only when that was, for `get` and `describe` to say so.
        let book_json = staged.bookkeeping.written().map(|b| match b {
            Some(b) => Some(sidecar::encode(b)),
            None => Some(sidecar::encode(&crate::record::Bookkeeping {
                deleted: Some(
                    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                ),
                ..Default::default()
            })),
        });
        let gone = staged.bookkeeping.written().is_some_and(|b| b.is_none());
        let key = &host_key.key;
        // A host removed from its file during the run: its save has nowhere to go.
        let Some(g) = self.group_of_key(key) else {
            tracing::debug!("BareMetalHost {key} is no longer in the given files: not saved");
            return Ok(0);
        };
        let group = self.group(g);
        let mut guard = group.lock().expect("file group");
        let Group {
            file,
            staged: n,
            hosts,
            ..
        } = &mut *guard;
        let (Some(file), Some(entry)) = (file.as_mut(), hosts.get_mut(key)) else {
            tracing::debug!("BareMetalHost {key} is no longer in the given files: not saved");
            return Ok(0);
        };
        if let (Some(status), Some(text)) = (staged.status.written(), &status_text) {
            file.stage_host_status(entry.doc, status, text.as_ref())?;
        }
        let settings = stage_companion(file, entry.settings_doc, settings)?;
        let components = stage_companion(file, entry.components_doc, components)?;
        stage_companion(file, entry.data_image_doc, data_image)?;
        if !staged.removed_annotations.is_empty() {
            let keys: Vec<&str> = staged
                .removed_annotations
                .iter()
                .map(String::as_str)
                .collect();
            file.stage_removed_annotations(entry.doc, &keys)?;
        }
        let held = entry.held.get_or_insert_with(Default::default);
        held.status |= status_text.is_some();
        held.settings |= settings;
        held.components |= components;
        held.removed
            .extend(staged.removed_annotations.iter().cloned());
        let mut unneeded = None;
        if let Some(json) = book_json {
            unneeded = file.stage_bookkeeping_json(&host_key.sidecar, json)?;
            if gone {
                entry.deleted = true;
            }
        }
        if let Some(rec) = entry.record.as_mut() {
            staged.apply_to(rec);
        }
        *n += 1;
        let ticket = *n;
        // The entry replaced is freed once the file's other passes may stage again.
        drop(guard);
        drop(unneeded);
        Ok(ticket)
    }

    fn commit(&self, group: usize) -> Result<u64> {
        let group = self.group(group);
        let mut g = group.lock().expect("file group");
        let ticket = g.staged;
        // An edit met at the commit is taken (read again, statuses spliced) and the commit made
        // again; an editor saving again and again gets a few turns.
        let mut turns = 0;
        loop {
            let Some(file) = g.file.as_mut() else {
                return Ok(ticket);
            };
            match file.commit() {
                Ok(stats) => {
                    if stats.file_written {
                        // Counted by scripts/bench-fixture.py (BMHCTL_LOG).
                        tracing::debug!("{}: written", file.path().display());
                    }
                    for entry in g.hosts.values_mut() {
                        if let Some(held) = entry.held.as_mut() {
                            held.removed.clear();
                        }
                    }
                    return Ok(ticket);
                }
                Err(Error::Conflict(why)) if turns < EDIT_TURNS => {
                    turns += 1;
                    let path = file.path().display().to_string();
                    tracing::info!("{path} changed on disk during the run: reading it again");
                    if let Err(e) = self.reread(&mut g) {
                        if turns == EDIT_TURNS {
                            return Err(unreadable_again(&why, &e));
                        }
                        // Perhaps caught half-way through an edit written in place.
                        std::thread::sleep(EDIT_SETTLE);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn record_events(&self, _host: usize, _events: &[bmhctl_plugin_sdk::Event]) -> Result<()> {
        // The events go in the hosts' bookkeeping (the sidecar) instead.
        Ok(())
    }

    fn events_in_bookkeeping(&self) -> bool {
        true
    }

    fn add_host(&self, key: ObjectKey) -> usize {
        // A host is added when its file holds it: it has a group.
        let group = self.group_of_key(&key).unwrap_or_default();
        let sidecar = key.to_string();
        let mut hosts = self.hosts.write().expect("file source hosts");
        hosts.push((Arc::new(HostKey { key, sidecar }), group));
        hosts.len() - 1
    }

    fn load(&self, key: &ObjectKey) -> Result<Option<HostRecord>> {
        let Some(g) = self.group_of_key(key) else {
            return Ok(None);
        };
        let group = self.group(g);
        let g = group.lock().expect("file group");
        match g.hosts.get(key).filter(|e| !e.deleted) {
            None => Ok(None),
            Some(Entry {
                record: Some(r), ..
            }) => Ok(Some((**r).clone())),
            Some(_) => Err(Error::bug(format!(
                "internal error: BareMetalHost {key} was handed over to its runner"
            ))),
        }
    }

    fn objects(&self) -> Result<ObjectMap> {
        Ok(self.objects.read().expect("file source objects").clone())
    }

    fn event_subscriptions(&self) -> Result<Vec<bmh_api::BmcEventSubscription>> {
        Ok(self.subs().iter().map(|d| d.sub.clone()).collect())
    }

    fn write_event_subscription_status(
        &self,
        key: &ObjectKey,
        status: &bmh_api::BmcEventSubscriptionStatus,
    ) -> Result<bool> {
        let is_it = |d: &SubscriptionDoc| {
            d.sub.metadata.namespace_or_default() == key.namespace
                && d.sub.metadata.name == key.name
        };
        // Copied out: the subscriptions' lock is never held while a file group's is taken (a
        // refused commit reads its subscriptions again under the group's).
        let found = self.subs().iter().find(|d| is_it(d)).cloned();
        let Some(d) = found else {
            return Ok(false);
        };
        let group = self.all_groups().into_iter().find(|g| {
            let g = g.lock().expect("file group");
            g.file.as_ref().is_some_and(|f| f.path() == d.file)
        });
        let Some(group) = group else {
            return Err(not_in_a_host_file(&d, key));
        };
        let mut g = group.lock().expect("file group");
        let file = g.file.as_mut().expect("a file group with its file");
        match file
            .stage_status(d.doc, Some(status))
            .and_then(|()| file.commit())
        {
            Ok(_) => {
                drop(g);
                let mut subs = self.subs_mut();
                if let Some(d) = subs.iter_mut().find(|d| is_it(d)) {
                    d.sub.status = Some(status.clone());
                }
                Ok(true)
            }
            Err(Error::Conflict(why)) => {
                // The file changed on disk: the status is not written over the edit, and the file
                // is read again for the next reconcile.
                Err(match self.reread(&mut g) {
                    Ok(()) => Error::Conflict(why),
                    Err(again) => unreadable_again(&why, &again),
                })
            }
            Err(e) => Err(e),
        }
    }

    fn changes(&self) -> Result<Vec<SourceChange>> {
        if !self.scanned.swap(true, Ordering::SeqCst) {
            return Ok(self
                .host_keys()
                .into_iter()
                .map(SourceChange::Host)
                .collect());
        }
        // The hosts of files read again after a refused commit, and those no longer there.
        let mut reread = Vec::new();
        let mut present: Vec<(ObjectKey, usize)> = Vec::new();
        let mut gone: Vec<(ObjectKey, usize)> = Vec::new();
        for (i, group) in self.all_groups().iter().enumerate() {
            let mut guard = group.lock().expect("file group");
            let g = &mut *guard;
            if std::mem::take(&mut g.reread) {
                let mut keys: Vec<(usize, ObjectKey)> =
                    g.hosts.iter().map(|(k, e)| (e.doc, k.clone())).collect();
                keys.sort();
                present.extend(keys.iter().map(|(_, k)| (k.clone(), i)));
                reread.extend(keys.into_iter().map(|(_, k)| SourceChange::Host(k)));
                let left = g.gone.drain(..).filter(|k| !g.hosts.contains_key(k));
                gone.extend(left.map(|k| (k, i)));
            }
        }
        if !present.is_empty() || !gone.is_empty() {
            let mut index = self.index.write().expect("file source index");
            for (k, i) in gone {
                // Unless it moved to another file (a reload may have seen that first).
                if index.get(&k).is_none_or(|&j| j == i) {
                    index.remove(&k);
                    reread.push(SourceChange::HostGone(k));
                }
            }
            for (k, i) in present {
                index.insert(k, i);
            }
        }
        if !self.files_changed()? {
            return Ok(reread);
        }
        match self.reload() {
            Ok(changes) => {
                reread.retain(|c| !changes.contains(c));
                reread.extend(changes);
                Ok(reread)
            }
            Err(e @ (Error::Invalid(_) | Error::Conflict(_))) => {
                // A file half-way through an edit: looked at again next time.
                self.problem(&e);
                Ok(reread)
            }
            Err(e) => Err(e),
        }
    }
}

//! Hosts that live in the user's files, as a [`HostSource`]: one commit group per file (a
//! host's firmware objects are in its file, so they share its group).
//!
//! The source holds the lock of every file it may write (taken by the [`Inventory`] it is made
//! from, or when a new file appears in a watched directory). A pass's changes are staged into
//! the file's text and committed as one atomic write ([`HostFile::commit`]), which is refused
//! when the file changed on disk meanwhile: the file is then read again, so that the hosts'
//! next passes start from what it holds, as a controller whose status write met a newer object
//! does.
//!
//! [`HostSource::changes`] compares every file's size, modification time and inode with what
//! the source last read or wrote (files of Secrets and other objects too), and looks for files
//! that appeared in (or went from) the directories given; when anything differs, all paths are
//! loaded again, every host of a changed file is reported changed, the hosts no longer there
//! gone, and the objects changed.

use super::bmc_event_subscriptions::{
    SubscriptionDoc, not_in_a_host_file, subscription_docs, write_status,
};
use super::host_file::{HostFile, Stamp, status_yaml};
use super::inventory::{self, HostEntry, Inventory, LoadMode};
use super::lock::FileLock;
use super::paths::expand;
use super::sidecar;
use crate::error::{Error, Result};
use crate::objects::ObjectMap;
use crate::persist::{HostSource, LoadOptions, SourceChange, Staged};
use crate::record::HostRecord;
use bmh_api::ObjectKey;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

struct Group {
    /// `None` once the file is gone from the paths.
    file: Option<HostFile>,
    /// Bumped on every stage; the commit that follows makes it durable.
    staged: u64,
    /// The file's hosts, as last loaded and staged since.
    hosts: HashMap<ObjectKey, Entry>,
    /// Read again after a refused commit: its hosts are reported changed at the next look.
    reread: bool,
}

struct Entry {
    /// The host's document, and those of its HostFirmwareSettings and HostFirmwareComponents.
    doc: usize,
    settings_doc: Option<usize>,
    components_doc: Option<usize>,
    /// The host as its last pass left it (what [`HostSource::load`] answers); `None` once
    /// handed over ([`FileSource::handing_over`]).
    /// Boxed: the entries of a big file stay small once their records are handed over.
    record: Option<Box<HostRecord>>,
    /// BMO's delete path finished: the host is gone until its file changes.
    deleted: bool,
}

impl Entry {
    /// The entry of a loaded host, and its record when the caller keeps it.
    fn new(h: HostEntry, kept: Kept) -> (Self, Option<HostRecord>) {
        let (record, handed) = match kept {
            Kept::Here => (Some(Box::new(h.record)), None),
            Kept::ByCaller => (None, Some(h.record)),
        };
        let entry = Entry {
            doc: h.doc,
            settings_doc: h.firmware_settings_doc,
            components_doc: h.firmware_components_doc,
            record,
            deleted: false,
        };
        (entry, handed)
    }
}

/// Who keeps a host's record between passes.
#[derive(Clone, Copy)]
enum Kept {
    Here,
    ByCaller,
}

/// The hosts of the files given on the command line (see the module docs).
pub struct FileSource {
    paths: Vec<PathBuf>,
    options: LoadOptions,
    groups: RwLock<Vec<Arc<Mutex<Group>>>>,
    /// The group of each host, by key.
    index: RwLock<HashMap<ObjectKey, usize>>,
    /// The runner's hosts, in the order they were added, with the group each was last seen in
    /// (kept while its file is gone, so its commits still have a group).
    hosts: RwLock<Vec<(ObjectKey, usize)>>,
    /// The files of the paths that hold no host (Secrets, other objects), as last loaded: a
    /// change to one is a change too.
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
    /// A source over the files of `inv`, loaded from `paths` in [`LoadMode::Write`] with
    /// `options` (used to load them again when they change). No host is the runner's until
    /// [`HostSource::add_host`] adds it.
    pub fn new(inv: Inventory, paths: &[PathBuf], options: &LoadOptions) -> Self {
        Self::build(inv, paths, options, |h| Entry::new(h, Kept::Here)).0
    }

    /// [`new`](Self::new) for a caller that keeps the hosts' records between passes itself
    /// (the batch runner): the records of every host of `inv`, in its order, are handed over
    /// instead of being kept twice, and the source cannot [`load`](HostSource::load) a host
    /// until its file is read again.
    pub fn handing_over(
        inv: Inventory,
        paths: &[PathBuf],
        options: &LoadOptions,
    ) -> (Self, Vec<HostRecord>) {
        Self::build(inv, paths, options, |h| Entry::new(h, Kept::ByCaller))
    }

    fn build(
        inv: Inventory,
        paths: &[PathBuf],
        options: &LoadOptions,
        entry: impl Fn(HostEntry) -> (Entry, Option<HostRecord>),
    ) -> (Self, Vec<HostRecord>) {
        let Inventory {
            files,
            hosts,
            objects,
            other_documents,
            ..
        } = inv;
        let subscriptions = RwLock::new(subscription_docs(&other_documents));
        let mut groups: Vec<Group> = files
            .into_iter()
            .map(|file| Group {
                file: Some(loaded(file)),
                staged: 0,
                hosts: HashMap::new(),
                reread: false,
            })
            .collect();
        let mut index = HashMap::new();
        let mut handed = Vec::new();
        for h in hosts {
            let (file, key) = (h.file, h.key.clone());
            index.insert(key.clone(), file);
            let (e, record) = entry(h);
            groups[file].hosts.insert(key, e);
            handed.extend(record);
        }
        let known: BTreeSet<PathBuf> = groups
            .iter()
            .filter_map(|g| g.file.as_ref().map(|f| f.real_path().to_path_buf()))
            .collect();
        let others = Mutex::new(other_files(paths, &known));
        let source = Self {
            paths: paths.to_vec(),
            options: options.clone(),
            others,
            groups: RwLock::new(
                groups
                    .into_iter()
                    .map(|g| Arc::new(Mutex::new(g)))
                    .collect(),
            ),
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

    fn all_groups(&self) -> Vec<Arc<Mutex<Group>>> {
        self.groups.read().expect("file groups").clone()
    }

    fn group(&self, g: usize) -> Arc<Mutex<Group>> {
        self.groups.read().expect("file groups")[g].clone()
    }

    fn key_of(&self, host: usize) -> ObjectKey {
        self.hosts.read().expect("file source hosts")[host]
            .0
            .clone()
    }

    fn group_of_key(&self, key: &ObjectKey) -> Option<usize> {
        self.index
            .read()
            .expect("file source index")
            .get(key)
            .copied()
    }

    /// Reads one file again after a refused commit (its staged edits are dropped: the hosts'
    /// next passes start from what the file holds).
    fn reread(&self, group: &mut Group) {
        let Some(file) = group.file.as_mut() else {
            return;
        };
        let path = file.path.clone();
        match inventory::load_with(
            std::slice::from_ref(&path),
            LoadMode::ReadOnly,
            &self.options,
        ) {
            Ok(mut inv) if inv.files.len() == 1 => {
                // The file's subscriptions as it holds them now (an edit may have removed one).
                let mut subs = self
                    .subscriptions
                    .write()
                    .expect("file source subscriptions");
                subs.retain(|d| d.file != path);
                subs.extend(subscription_docs(&inv.other_documents));
                drop(subs);
                let mut fresh = loaded(inv.files.remove(0));
                fresh.lock = file.lock.take();
                *file = fresh;
                group.hosts = inv
                    .hosts
                    .into_iter()
                    .map(|h| (h.key.clone(), Entry::new(h, Kept::Here).0))
                    .collect();
                group.reread = true;
            }
            Ok(_) => {}
            Err(e) => tracing::debug!("{}: cannot read it again: {}", path.display(), e.chain()),
        }
    }

    fn problem(&self, e: &Error) {
        let text = e.chain();
        let mut last = self.last_problem.lock().expect("file source problem");
        if last.as_deref() != Some(text.as_str()) {
            tracing::warn!("not reloading the files until they are fixed: {text}");
            *last = Some(text);
        }
    }

    /// Whether a file changed on disk since it was last read or written, or a file appeared
    /// in or went from the paths.
    fn files_changed(&self) -> Result<bool> {
        let mut known: BTreeSet<PathBuf> = BTreeSet::new();
        for group in self.all_groups() {
            let g = group.lock().expect("file group");
            if let Some(f) = &g.file {
                if Stamp::of(f.real_path()) != f.disk_stamp {
                    return Ok(true);
                }
                known.insert(f.real_path().to_path_buf());
            }
        }
        let others = self.others.lock().expect("file source others");
        let now: Vec<PathBuf> = expand(&self.paths, &mut Vec::new())?
            .into_iter()
            .map(|(_, real)| real)
            .filter(|p| !known.contains(p))
            .collect();
        Ok(now.len() != others.len()
            || now
                .iter()
                .any(|p| others.get(p).is_none_or(|s| *s != Stamp::of(p))))
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
        *self
            .subscriptions
            .write()
            .expect("file source subscriptions") = subscription_docs(&other_documents);
        let mut by_file: Vec<Vec<HostEntry>> = files.iter().map(|_| Vec::new()).collect();
        for h in hosts {
            let f = h.file;
            by_file[f].push(h);
        }
        let mut changes = Vec::new();
        let mut groups = self.groups.write().expect("file groups");
        let mut seen: BTreeSet<usize> = BTreeSet::new();
        for (file, entries) in files.into_iter().zip(by_file) {
            let mut file = loaded(file);
            let existing = groups.iter().position(|g| {
                g.lock()
                    .expect("file group")
                    .file
                    .as_ref()
                    .is_some_and(|f| f.real_path() == file.real_path())
            });
            let g = match existing {
                Some(g) => {
                    seen.insert(g);
                    let mut group = groups[g].lock().expect("file group");
                    let old = group.file.as_mut().expect("a known file");
                    if old.disk_stamp == file.disk_stamp && old.disk_stamp.is_some() {
                        continue;
                    }
                    file.lock = old.lock.take();
                    for k in group.hosts.keys() {
                        if !entries.iter().any(|e| e.key == *k) {
                            changes.push(SourceChange::HostGone(k.clone()));
                        }
                    }
                    group.file = Some(file);
                    group.hosts.clear();
                    g
                }
                None => {
                    match FileLock::acquire(file.real_path(), file.path()) {
                        Ok(lock) => file.lock = Some(lock),
                        Err(e) => {
                            self.problem(&e);
                            continue;
                        }
                    }
                    groups.push(Arc::new(Mutex::new(Group {
                        file: Some(file),
                        staged: 0,
                        hosts: HashMap::new(),
                        reread: false,
                    })));
                    seen.insert(groups.len() - 1);
                    groups.len() - 1
                }
            };
            let mut group = groups[g].lock().expect("file group");
            for h in entries {
                changes.push(SourceChange::Host(h.key.clone()));
                group
                    .hosts
                    .insert(h.key.clone(), Entry::new(h, Kept::Here).0);
            }
        }
        for (g, group) in groups.iter().enumerate() {
            if seen.contains(&g) {
                continue;
            }
            let mut group = group.lock().expect("file group");
            if group.file.take().is_some() {
                for k in group.hosts.keys() {
                    changes.push(SourceChange::HostGone(k.clone()));
                }
                group.hosts.clear();
            }
        }
        let mut index = self.index.write().expect("file source index");
        index.clear();
        for (g, group) in groups.iter().enumerate() {
            for k in group.lock().expect("file group").hosts.keys() {
                index.insert(k.clone(), g);
            }
        }
        // A host that moved to another file is not gone.
        changes.retain(|c| match c {
            SourceChange::HostGone(k) => !index.contains_key(k),
            _ => true,
        });
        let known: BTreeSet<PathBuf> = groups
            .iter()
            .filter_map(|g| {
                let g = g.lock().expect("file group");
                g.file.as_ref().map(|f| f.real_path().to_path_buf())
            })
            .collect();
        *self.others.lock().expect("file source others") = other_files(&self.paths, &known);
        *self.objects.write().expect("file source objects") = objects;
        changes.push(SourceChange::Objects);
        *self.last_problem.lock().expect("file source problem") = None;
        Ok(changes)
    }
}

/// A file whose hosts are loaded: what its sidecar read is in their records now.
fn loaded(mut file: HostFile) -> HostFile {
    file.sidecar.forget_read();
    file
}

/// The files of `paths` but the `known` ones, with their stamps now.
fn other_files(paths: &[PathBuf], known: &BTreeSet<PathBuf>) -> BTreeMap<PathBuf, Option<Stamp>> {
    expand(paths, &mut Vec::new())
        .unwrap_or_default()
        .into_iter()
        .map(|(_, real)| real)
        .filter(|p| !known.contains(p))
        .map(|p| {
            let stamp = Stamp::of(&p);
            (p, stamp)
        })
        .collect()
}

impl HostSource for FileSource {
    fn groups(&self) -> usize {
        self.groups.read().expect("file groups").len()
    }

    fn group_of(&self, host: usize) -> usize {
        let (key, last) = self.hosts.read().expect("file source hosts")[host].clone();
        match self.group_of_key(&key) {
            Some(g) if g != last => {
                self.hosts.write().expect("file source hosts")[host].1 = g;
                g
            }
            _ => last,
        }
    }

    fn stage(&self, host: usize, staged: &Staged) -> Result<u64> {
        // Serialised before the file's lock is taken: passes of other hosts of the file stage
        // (and its commit runs) meanwhile.
        let status_text = staged.status.map(status_yaml).transpose()?;
        let settings_text = staged
            .firmware_settings_status
            .map(status_yaml)
            .transpose()?;
        let components_text = staged
            .firmware_components_status
            .map(status_yaml)
            .transpose()?;
        let book_json = staged.bookkeeping.map(|b| b.map(sidecar::encode));
        let key = self.key_of(host);
        let Some(g) = self.group_of_key(&key) else {
            return Err(Error::Conflict(format!(
                "BareMetalHost {key} is no longer in the given files"
            )));
        };
        let group = self.group(g);
        let mut guard = group.lock().expect("file group");
        let Group {
            file,
            staged: n,
            hosts,
            ..
        } = &mut *guard;
        let (Some(file), Some(entry)) = (file.as_mut(), hosts.get_mut(&key)) else {
            return Err(Error::Conflict(format!(
                "BareMetalHost {key} is no longer in the given files"
            )));
        };
        if let (Some(status), Some(text)) = (staged.status, &status_text) {
            file.stage_status_yaml(entry.doc, status, text.as_deref())?;
        }
        if let (Some(d), Some(status), Some(text)) = (
            entry.settings_doc,
            staged.firmware_settings_status,
            &settings_text,
        ) {
            file.stage_status_yaml(d, status, text.as_deref())?;
        }
        if let (Some(d), Some(status), Some(text)) = (
            entry.components_doc,
            staged.firmware_components_status,
            &components_text,
        ) {
            file.stage_status_yaml(d, status, text.as_deref())?;
        }
        if !staged.removed_annotations.is_empty() {
            let keys: Vec<&str> = staged
                .removed_annotations
                .iter()
                .map(String::as_str)
                .collect();
            file.stage_removed_annotations(entry.doc, &keys)?;
        }
        if let Some(json) = book_json {
            let gone = json.is_none();
            file.stage_bookkeeping_json(&key, json)?;
            if gone {
                entry.deleted = true;
            }
        }
        if let Some(rec) = entry.record.as_mut() {
            staged.apply_to(rec);
        }
        *n += 1;
        Ok(*n)
    }

    fn commit(&self, group: usize) -> Result<u64> {
        let group = self.group(group);
        let mut g = group.lock().expect("file group");
        let ticket = g.staged;
        let Some(file) = g.file.as_mut() else {
            return Ok(ticket);
        };
        match file.commit() {
            Ok(stats) => {
                if stats.file_written {
                    // Counted by scripts/bench-fixture.py (BMHCTL_LOG).
                    tracing::debug!("{}: written", file.path().display());
                }
                Ok(ticket)
            }
            Err(e) => {
                if matches!(e, Error::Conflict(_)) {
                    self.reread(&mut g);
                }
                Err(e)
            }
        }
    }

    fn record_events(&self, _host: usize, _events: &[bmhctl_plugin_sdk::Event]) -> Result<()> {
        // Files keep no events (there is nowhere in them to put them).
        Ok(())
    }

    fn add_host(&self, key: ObjectKey) -> usize {
        // A host is added when its file holds it: it has a group.
        let group = self.group_of_key(&key).unwrap_or_default();
        let mut hosts = self.hosts.write().expect("file source hosts");
        hosts.push((key, group));
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
        Ok(self
            .subscriptions
            .read()
            .expect("file source subscriptions")
            .iter()
            .map(|d| d.sub.clone())
            .collect())
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
        // refused commit reads its file again, subscriptions included, under the group's).
        let found = self
            .subscriptions
            .read()
            .expect("file source subscriptions")
            .iter()
            .find(|d| is_it(d))
            .cloned();
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
        match write_status(file, d.doc, status) {
            Ok(()) => {
                drop(g);
                let mut subs = self
                    .subscriptions
                    .write()
                    .expect("file source subscriptions");
                if let Some(d) = subs.iter_mut().find(|d| is_it(d)) {
                    d.sub.status = Some(status.clone());
                }
                Ok(true)
            }
            Err(e) => {
                if matches!(e, Error::Conflict(_)) {
                    self.reread(&mut g);
                }
                Err(e)
            }
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
        // The hosts of files read again after a refused commit (the edit that refused it is
        // seen there, not by comparing stamps).
        let mut reread = Vec::new();
        for group in self.all_groups() {
            let mut g = group.lock().expect("file group");
            if std::mem::take(&mut g.reread) {
                let mut keys: Vec<(usize, ObjectKey)> =
                    g.hosts.iter().map(|(k, e)| (e.doc, k.clone())).collect();
                keys.sort();
                reread.extend(keys.into_iter().map(|(_, k)| SourceChange::Host(k)));
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

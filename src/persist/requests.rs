//! What a verb asks of the hosts where they live: an annotation, a deletion.

use super::files::beside;
use super::files::inventory::{self, Inventory, LoadMode};
use super::snapshot::select_keys;
use super::store::{Store, Written};
use super::{InputPolicy, LoadOptions, Place};
use crate::error::{Error, Result};
use crate::record::HostRecord;
use crate::selection::{Candidate, HostSelection};
use bmh_api::ObjectKey;
use std::path::{Path, PathBuf};

/// Sets (`Some`) or removes (`None`) annotation `name` on the hosts `selection` picks.
pub fn annotate(
    place: &Place,
    selection: &HostSelection,
    name: &str,
    value: Option<&str>,
    input: InputPolicy,
    mut done: impl FnMut(&ObjectKey, bool, Option<&HostRecord>),
) -> Result<Vec<ObjectKey>> {
    match place {
        Place::Store(root) => in_store(root, selection, input, |store, key| {
            let written = store.set_host_annotation(key, name, value)?;
            // A host whose companion objects or Secrets cannot be read is still annotated.
            let now = store.load_host(key).ok().flatten();
            done(key, written != Written::Unchanged, now.as_ref());
            Ok(())
        }),
        Place::Files(paths) => {
            if let Some(pid) = beside::held_by(paths)? {
                let edit = beside::annotation(name, value);
                return edit_beside(paths, selection, input, pid, &edit, |key, changed, rec| {
                    let mut rec = rec.clone();
                    let annotations = &mut rec.host.metadata.annotations;
                    match value {
                        Some(v) => annotations.insert(name.to_string(), v.to_string()),
                        None => annotations.remove(name),
                    };
                    done(key, changed, Some(&rec));
                    Ok(())
                });
            }
            let mut inv = load_for_writing(paths, input)?;
            let picked = select_in_files(&inv, selection, paths)?;
            let mut keys = Vec::with_capacity(picked.len());
            for i in picked {
                let doc = inv.hosts[i].doc;
                let changed = inv.file_of(i).write_annotation(doc, name, value)?;
                let host = &mut inv.hosts[i];
                let annotations = &mut host.record.host.metadata.annotations;
                match value {
                    Some(v) => annotations.insert(name.to_string(), v.to_string()),
                    None => annotations.remove(name),
                };
                done(&host.key, changed, Some(&host.record));
                keys.push(host.key.clone());
            }
            Ok(keys)
        }
    }
}

/// Requests the deletion of the hosts `selection` picks, as of `now`.
pub fn request_deletion(
    place: &Place,
    selection: &HostSelection,
    now: &str,
    input: InputPolicy,
    mut done: impl FnMut(&ObjectKey, bool) -> Result<()>,
) -> Result<Vec<ObjectKey>> {
    match place {
        Place::Store(root) => in_store(root, selection, input, |store, key| {
            let written = store.request_host_deletion(key, now)?;
            done(key, written == Written::Unchanged)
        }),
        Place::Files(paths) => {
            if let Some(pid) = beside::held_by(paths)? {
                let edit = beside::deletion(now);
                return edit_beside(paths, selection, input, pid, &edit, |key, changed, _| {
                    done(key, !changed)
                });
            }
            let mut inv = load_for_writing(paths, input)?;
            let selected = select_in_files(&inv, selection, paths)?;
            mark_deleted(&mut inv, &selected, now)?;
            let mut keys = Vec::with_capacity(selected.len());
            for i in selected {
                let h = &inv.hosts[i];
                done(&h.key, h.record.book.deletion_requested.is_some())?;
                keys.push(h.key.clone());
            }
            Ok(keys)
        }
    }
}

/// Asks BMO to deprovision the hosts `selection` picks: their `spec.image` and
/// `spec.customDeploy` removed where they live (files another bmhctl drives, or the store).
pub fn request_deprovision(
    place: &Place,
    selection: &HostSelection,
    input: InputPolicy,
    mut done: impl FnMut(&ObjectKey, bool) -> Result<()>,
) -> Result<Vec<ObjectKey>> {
    match place {
        Place::Store(root) => in_store(root, selection, input, |store, key| {
            let written = store.remove_host_spec_fields(key, &DEPROVISIONED)?;
            done(key, written != Written::Unchanged)
        }),
        Place::Files(paths) => {
            let pid = beside::held_by(paths)?.unwrap_or(0);
            let edit = beside::deprovision();
            edit_beside(paths, selection, input, pid, &edit, |key, changed, _| {
                done(key, changed)
            })
        }
    }
}

/// Makes `write` on each host `selection` picks in the store at `root`, one store write each.
fn in_store(
    root: &Path,
    selection: &HostSelection,
    input: InputPolicy,
    mut write: impl FnMut(&Store, &ObjectKey) -> Result<()>,
) -> Result<Vec<ObjectKey>> {
    let store = open_store(root)?;
    let keys = select_keys(&Place::Store(root.to_path_buf()), selection, input)?;
    for key in &keys {
        write(&store, key)?;
    }
    Ok(keys)
}

/// The spec fields whose absence makes BMO deprovision a host.
const DEPROVISIONED: [&str; 2] = ["image", "customDeploy"];

/// Makes `edit` on the hosts `selection` picks in files whose lock process `pid` holds (a
/// `bmhctl watch -f`): as an editor would, for that process to act on.
fn edit_beside(
    paths: &[PathBuf],
    selection: &HostSelection,
    input: InputPolicy,
    pid: u32,
    edit: &beside::Edit,
    mut done: impl FnMut(&ObjectKey, bool, &HostRecord) -> Result<()>,
) -> Result<Vec<ObjectKey>> {
    let inv = inventory::load_with(paths, LoadMode::ReadOnly, &LoadOptions::with_input(input))?;
    let picked = select_in_files(&inv, selection, paths)?;
    if pid != 0 && !input.quiet {
        crate::eprintln_quiet!(
            "note: bmhctl (pid {pid}) drives {}: the request is written into the file for it \
             to act on",
            Place::Files(paths.to_vec()).describe()
        );
    }
    let mut keys = Vec::with_capacity(picked.len());
    for i in picked {
        let h = &inv.hosts[i];
        let file = &inv.files[h.file];
        let written: serde_json::Value =
            serde_saphyr::from_str(file.yaml().document_text(h.doc)).unwrap_or_default();
        let at = beside::HostDoc {
            real: file.real_path(),
            shown: file.path(),
            key: &h.key,
            namespace: written["metadata"]["namespace"]
                .as_str()
                .map(str::to_string),
        };
        let changed = beside::edit_host(&at, edit)?;
        done(&h.key, changed, &h.record)?;
        keys.push(h.key.clone());
    }
    Ok(keys)
}

/// Records the deletion mark of these hosts in their files' bookkeeping, on disk.
pub fn mark_deleted(inv: &mut Inventory, selected: &[usize], now: &str) -> Result<()> {
    for &i in selected {
        let key = inv.hosts[i].key.clone();
        let mut book = inv.hosts[i].record.book.clone();
        book.deletion_requested
            .get_or_insert_with(|| now.to_string());
        inv.file_of(i).stage_bookkeeping(&key, Some(&book))?;
    }
    inv.commit_all()?;
    Ok(())
}

/// Indices of the hosts of the files that `selection` picks, in file order (none: a usage error).
pub fn select_in_files(
    inv: &Inventory,
    selection: &HostSelection,
    paths: &[PathBuf],
) -> Result<Vec<usize>> {
    if inv.hosts.is_empty() {
        return Err(Error::Usage(super::files::paths::no_hosts_in(paths)));
    }
    selection.select_some(
        inv.hosts.iter().map(|h| Candidate {
            key: &h.key,
            labels: &h.record.host.metadata.labels,
        }),
        "the given files",
    )
}

fn load_for_writing(paths: &[PathBuf], input: InputPolicy) -> Result<Inventory> {
    inventory::load_with(paths, LoadMode::Write, &LoadOptions::with_input(input))
}

/// A usage error when `place` is a store that does not exist.
pub fn must_exist(place: &Place) -> Result<()> {
    match place {
        Place::Store(root) => open_store(root).map(drop),
        Place::Files(_) => Ok(()),
    }
}

/// The store at `root`; none there is a usage error, saying how one is made.
pub fn open_store(root: &Path) -> Result<Store> {
    Store::open_existing(root)?.ok_or_else(|| {
        Error::Usage(format!(
            "no store at {dir} (`bmhctl apply -f FILE --store {dir}` makes one)",
            dir = root.display()
        ))
    })
}

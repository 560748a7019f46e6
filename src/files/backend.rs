//! The runner's persistence for hosts that live in the user's files: one commit group per file.
//! A host's firmware objects are in its file, so they share its group.

use crate::error::Result;
use crate::files::inventory::{HostFile, Inventory};
use crate::runner::{Backend, Staged};
use bmh_api::ObjectKey;
use std::sync::Mutex;

struct Group {
    file: HostFile,
    /// Bumped on every stage; the commit that follows makes it durable.
    staged: u64,
}

/// Stages status, annotation removals and bookkeeping into the host's file and commits each
/// file as a whole.
pub struct FileBackend {
    groups: Vec<Mutex<Group>>,
    /// For each runner host: (group, document, key).
    hosts: Vec<(usize, usize, ObjectKey)>,
    /// For each runner host: the documents of its HostFirmwareSettings and
    /// HostFirmwareComponents (same group).
    firmware_docs: Vec<(Option<usize>, Option<usize>)>,
}

impl FileBackend {
    /// `entries[i]` is the inventory host index of runner host `i`.
    pub fn new(inv: Inventory, entries: &[usize]) -> Self {
        let hosts = entries
            .iter()
            .map(|&e| {
                let h = &inv.hosts[e];
                let m = &h.record.host.metadata;
                (
                    h.file,
                    h.doc,
                    ObjectKey::new(m.namespace_or_default(), &m.name),
                )
            })
            .collect();
        let firmware_docs = entries
            .iter()
            .map(|&e| {
                let h = &inv.hosts[e];
                (h.firmware_settings_doc, h.firmware_components_doc)
            })
            .collect();
        let groups = inv
            .files
            .into_iter()
            .map(|file| Mutex::new(Group { file, staged: 0 }))
            .collect();
        Self {
            groups,
            hosts,
            firmware_docs,
        }
    }
}

impl Backend for FileBackend {
    fn groups(&self) -> usize {
        self.groups.len()
    }

    fn group_of(&self, host: usize) -> usize {
        self.hosts[host].0
    }

    fn stage(&self, host: usize, staged: &Staged) -> Result<u64> {
        let (group, doc, key) = &self.hosts[host];
        let mut g = self.groups[*group].lock().expect("file group lock");
        if let Some(status) = staged.status {
            g.file.stage_status(*doc, status)?;
        }
        let (settings_doc, components_doc) = self.firmware_docs[host];
        if let (Some(d), Some(status)) = (settings_doc, staged.firmware_settings_status) {
            g.file.stage_status(d, status)?;
        }
        if let (Some(d), Some(status)) = (components_doc, staged.firmware_components_status) {
            g.file.stage_status(d, status)?;
        }
        if !staged.removed_annotations.is_empty() {
            let keys: Vec<&str> = staged
                .removed_annotations
                .iter()
                .map(String::as_str)
                .collect();
            g.file.stage_removed_annotations(*doc, &keys)?;
        }
        if let Some(book) = staged.bookkeeping {
            g.file.stage_bookkeeping(key, book)?;
        }
        g.staged += 1;
        Ok(g.staged)
    }

    fn commit(&self, group: usize) -> Result<u64> {
        let mut g = self.groups[group].lock().expect("file group lock");
        let ticket = g.staged;
        g.file.commit()?;
        Ok(ticket)
    }
}

//! A host's recent events: `<store>/events/<namespace>/<name>.jsonl`, one JSON object per line.

use super::Store;
use crate::error::{Error, Result};
use crate::persist::atomic::{unless_missing, write_atomic_mode};
use bmh_api::ObjectKey;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How many events a host's log keeps.
pub const EVENTS_KEPT: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredEvent {
    pub time: String,
    pub reason: String,
    pub message: String,
}

impl Store {
    fn events_path(&self, key: &ObjectKey) -> PathBuf {
        self.keyed_path(Path::new("events"), key, "jsonl")
    }

    /// Appends events to the host's log, keeping the last [`EVENTS_KEPT`].
    pub fn record_events(&self, key: &ObjectKey, events: &[StoredEvent]) -> Result<()> {
        self.record_events_bounded(key, events, EVENTS_KEPT)
    }

    pub(crate) fn record_events_bounded(
        &self,
        key: &ObjectKey,
        events: &[StoredEvent],
        kept: usize,
    ) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        super::check_key("BareMetalHost", key)?;
        let path = self.events_path(key);
        let dir = path.parent().expect("an events path has a directory");
        super::private_dirs(dir)?;
        let lock_path = self.keyed_path(Path::new(".locks/events"), key, "lock");
        let lock_dir = lock_path.parent().expect("a lock path has a directory");
        super::private_dirs(lock_dir)?;
        let lock = super::open_private(&lock_path)?;
        lock.lock().map_err(|e| Error::io(&lock_path, e))?;
        let mut all = self.events(key)?;
        all.extend_from_slice(events);
        let skip = all.len().saturating_sub(kept);
        let mut text = Vec::new();
        for e in &all[skip..] {
            serde_json::to_writer(&mut text, e)
                .map_err(|e| Error::internal("cannot encode an event as JSON", e))?;
            text.push(b'\n');
        }
        write_atomic_mode(&path, &text, Some(0o600)).map_err(|e| Error::io(&path, e))
    }

    /// The host's recent events, oldest first (unreadable lines are skipped).
    pub fn events(&self, key: &ObjectKey) -> Result<Vec<StoredEvent>> {
        let path = self.events_path(key);
        let text =
            unless_missing(std::fs::read_to_string(&path)).map_err(|e| Error::io(&path, e))?;
        Ok(text
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect())
    }
}

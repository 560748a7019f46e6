//! The changes of a host source as the scheduler hears them.

use crate::objects::{ObjectMap, ObjectSource, ResolvedSecret};
use crate::persist::SourceChange;
use bmh_api::ObjectKey;
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::mpsc;

/// What the host source tells the scheduler (a controller, or a batch taking edits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveChange {
    /// A host appeared or changed: read it again and reconcile it now.
    Host(ObjectKey),
    /// A host is gone from the store.
    Gone(ObjectKey),
}

/// Companion objects read from a host source, replaced when they change there.
#[derive(Default)]
pub struct LiveObjects(RwLock<Arc<ObjectMap>>);

impl LiveObjects {
    fn current(&self) -> Arc<ObjectMap> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn replace(&self, map: ObjectMap) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(map);
    }
}

impl ObjectSource for LiveObjects {
    fn secret(&self, key: &ObjectKey) -> Option<Arc<ResolvedSecret>> {
        self.current().secret(key)
    }

    fn object(&self, api_version: &str, kind: &str, key: &ObjectKey) -> Option<serde_json::Value> {
        self.current().object(api_version, kind, key)
    }
}

/// Polls `source` every `poll`, sending the changes of the hosts in `only` on `tx`; tells
/// `loaded` how many hosts the first scan that could be read announced.
pub(super) fn scan(
    source: Arc<dyn crate::persist::HostSource>,
    only: Option<BTreeSet<ObjectKey>>,
    poll: Duration,
    objects: Option<Arc<LiveObjects>>,
    tx: mpsc::UnboundedSender<LiveChange>,
    mut stop: tokio::sync::watch::Receiver<bool>,
    mut loaded: Option<super::live::Loaded>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let wanted = |k: &ObjectKey| only.as_ref().is_none_or(|o| o.contains(k));
        loop {
            let scanned = source.clone();
            let result = tokio::task::spawn_blocking(move || scanned.changes())
                .await
                .expect("a scan does not panic");
            match result {
                Ok(changes) => {
                    let first = loaded.take().map(|loaded| {
                        let hosts: BTreeSet<&ObjectKey> = changes
                            .iter()
                            .filter_map(|c| match c {
                                SourceChange::Host(k) if wanted(k) => Some(k),
                                _ => None,
                            })
                            .collect();
                        (loaded, hosts.len())
                    });
                    for c in changes {
                        let sent = match c {
                            SourceChange::Host(k) if wanted(&k) => tx.send(LiveChange::Host(k)),
                            SourceChange::HostGone(k) if wanted(&k) => tx.send(LiveChange::Gone(k)),
                            SourceChange::Host(_) | SourceChange::HostGone(_) => Ok(()),
                            SourceChange::Objects => {
                                let read = objects
                                    .as_ref()
                                    .map(|o| source.objects().map(|m| o.replace(m)));
                                if let Some(Err(e)) = read {
                                    tracing::warn!("cannot read the objects: {}", e.chain());
                                }
                                Ok(())
                            }
                        };
                        if sent.is_err() {
                            return;
                        }
                    }
                    // Told once every host of the first scan is on its way to the scheduler.
                    if let Some((loaded, hosts)) = first {
                        loaded(hosts);
                    }
                }
                Err(e) => tracing::warn!("cannot look for changes: {}", e.chain()),
            }
            tokio::select! {
                _ = tokio::time::sleep(poll) => {}
                _ = stop.changed() => return,
                _ = tx.closed() => return,
            }
        }
    })
}

//! The hosts a run drives or plans: read, checked, selected and, to provision, admitted.

use super::files::inventory::{self, Inventory, LoadMode};
use super::requests::{open_store, select_in_files};
use super::{LoadOptions, Place};
use crate::error::Result;
use crate::objects::ObjectSource;
use crate::record::HostRecord;
use crate::selection::HostSelection;
use std::path::PathBuf;
use std::sync::Arc;

/// The files' hosts and the indices of those `selection` picks.
pub fn from_files(
    paths: &[PathBuf],
    mode: LoadMode,
    options: &LoadOptions,
    selection: &HostSelection,
    admit: bool,
) -> Result<(Inventory, Vec<usize>)> {
    let inv = inventory::load_with(paths, mode, options)?;
    inventory::check_secret_references(&inv)?;
    let selected = select_in_files(&inv, selection, paths)?;
    if admit {
        super::files::admission::check_hosts(&inv, &selected)?;
    }
    Ok((inv, selected))
}

/// The selected hosts of `place` as they are now (no lock), admitted, and the objects they use.
pub fn snapshot(
    place: &Place,
    selection: &HostSelection,
    options: &LoadOptions,
) -> Result<(Vec<HostRecord>, Arc<dyn ObjectSource>)> {
    match place {
        Place::Files(paths) => {
            let (inv, selected) = from_files(paths, LoadMode::ReadOnly, options, selection, true)?;
            let records = selected
                .iter()
                .map(|&i| inv.hosts[i].record.clone())
                .collect();
            Ok((records, Arc::new(inv.objects.clone())))
        }
        Place::Store(root) => {
            let store = open_store(root)?;
            let records =
                super::snapshot::select_records(store.load_hosts()?, selection, place.name())?;
            Ok((records, Arc::new(store.object_map()?)))
        }
    }
}

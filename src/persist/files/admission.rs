//! BMO's admission rules applied to the hosts of the user's files, located at their fields.

use super::inventory::Inventory;
use super::yaml_file::PathSeg;
use crate::diagnostic::{Diagnostic, Diagnostics, Position};
use crate::error::Error;
use crate::validate::{BmcAccess, FieldPath, Seg, ValidationError, bmc_access, validate};
use bmh_api::BareMetalHost;
use serde::Serialize;

/// The host as bmhctl last saw it: its last saved spec with its current metadata and status.
pub fn old_object(inv: &Inventory, host: usize) -> Option<BareMetalHost> {
    let entry = &inv.hosts[host];
    let book = inv.files[entry.file]
        .sidecar()
        .get(&entry.key.to_string())?;
    let spec = book.spec_snapshot.as_deref()?.spec()?;
    let mut old = entry.record.host.clone();
    old.spec = spec;
    Some(*old)
}

/// A host's validation with what `bmhctl validate` shows besides the errors.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostValidation {
    pub name: String,
    pub namespace: String,
    pub file: String,
    pub valid: bool,
    pub errors: Vec<ValidationError>,
    /// Not admission errors: bmhctl's extensions, problems BMO finds only later (credentials).
    pub warnings: Vec<crate::validate::Warning>,
    /// Whether an old spec was known, so that the update rules ran too.
    pub update_checked: bool,
    pub bmc: Option<BmcAccess>,
}

/// Validates one host of `inv` and resolves its BMC access.
pub fn validate_entry(inv: &Inventory, host: usize) -> HostValidation {
    let entry = &inv.hosts[host];
    let h = &entry.record.host;
    let old = old_object(inv, host);
    let errors = validate(h, old.as_ref());
    let (bmc, warnings) = bmc_access(h, &inv.objects);
    HostValidation {
        name: entry.key.name.clone(),
        namespace: entry.key.namespace.clone(),
        file: inv.files[entry.file].path.display().to_string(),
        valid: errors.is_empty(),
        errors,
        warnings,
        update_checked: old.is_some(),
        bmc,
    }
}

/// Where `field` is in the host's document: the deepest part of the path the file has.
pub fn position(inv: &Inventory, host: usize, field: &FieldPath) -> Position {
    let entry = &inv.hosts[host];
    let file = &inv.files[entry.file];
    let segs: Vec<PathSeg> = field
        .0
        .iter()
        .map(|s| match s {
            Seg::Key(k) => PathSeg::Key(k),
            Seg::Index(i) => PathSeg::Index(*i),
        })
        .collect();
    let yaml = file.yaml();
    let (line, column) = (0..=segs.len())
        .rev()
        .find_map(|n| yaml.locate(entry.doc, &segs[..n]))
        .map(|p| (p.line, p.column))
        .unwrap_or((yaml.document_start_line(entry.doc), 1));
    Position::new(&file.path, line, column)
}

/// A broken rule of host `host`, located in its file.
pub fn diagnostic(inv: &Inventory, host: usize, e: &ValidationError) -> Diagnostic {
    Diagnostic::new(e.text())
        .at(position(inv, host, &e.field))
        .object(bmh_api::host::KIND, &inv.hosts[host].key)
        .field(e.field.to_string())
}

/// One [`Diagnostic`] per problem: `file:line:column: BareMetalHost ns/name: field: message`.
pub fn diagnostics(inv: &Inventory, host: usize, errors: &[ValidationError]) -> Vec<Diagnostic> {
    errors.iter().map(|e| diagnostic(inv, host, e)).collect()
}

/// What `bmhctl validate` warns about the selected hosts, as `BareMetalHost ns/name: warning`.
pub fn warnings(inv: &Inventory, selected: &[usize]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for &i in selected {
        let (_, found) = bmc_access(&inv.hosts[i].record.host, &inv.objects);
        for w in found {
            let line = format!("{} {}: {w}", bmh_api::host::KIND, inv.hosts[i].key);
            if seen.insert(line.clone()) {
                out.push(line);
            }
        }
    }
    out
}

/// Refuses the selected hosts if any is invalid: [`Error::Invalid`] listing every problem.
pub fn check_hosts(inv: &Inventory, selected: &[usize]) -> Result<(), Error> {
    let mut found = Diagnostics::default();
    for &i in selected {
        let old = old_object(inv, i);
        let errors = validate(&inv.hosts[i].record.host, old.as_ref());
        found.0.extend(diagnostics(inv, i, &errors));
    }
    super::inventory::bad_input(found)
}

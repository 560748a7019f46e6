//! BMO's admission validation of BareMetalHosts (its validating webhook and the CRD schema the
//! API server checks first), for `bmhctl validate` and for every command that must refuse an
//! invalid host before acting on it (`provision` now; `apply` and `watch` later).
//!
//! * [`validate_create`]: the webhook's create rules ([`rules`], spec §5.1), in BMO's order,
//!   with BMO's messages;
//! * [`validate_update`]: those on the new object plus the update rules old → new (§5.2);
//! * [`validate_schema`]: the CRD schema's constraints (§5.3), with the API server's messages.
//!
//! bmhctl has no API server keeping the previous object. The "old" object of an update is the
//! spec bmhctl last saw for the host (`specSnapshot` in the file's `.bmhctl/<file>.state.json`,
//! written whenever bmhctl saves the host's bookkeeping) with the host's current metadata and
//! status (a spec edit does not change the status, as in Kubernetes): see [`old_object`]. A host
//! bmhctl has never saved has no old object and is checked as a create.
//!
//! [`check_hosts`] is what commands call: every error of the selected hosts as one bad-input
//! error, one line per problem, `file:line:column: BareMetalHost ns/name: field: message`, as
//! the loader reports its own problems.

mod gojson;
mod golib;
mod rules;
mod schema;
#[cfg(test)]
mod tests;

use crate::diagnostic::{Diagnostic, Diagnostics, Position};
use crate::error::Error;
use crate::objects::ObjectMap;
use crate::persist::files::inventory::Inventory;
use crate::persist::files::yaml_file::PathSeg;
use bmh_api::{BareMetalHost, BareMetalHostSpec, ObjectKey};
use serde::Serialize;
use std::fmt;

pub use golib::parse_mac;
pub use rules::inspection_disabled;

/// One segment of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Where in the host a problem lies: `spec.raid.hardwareRAIDVolumes[0].controller`,
/// `metadata.annotations[reboot.metal3.io]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Seg>);

impl FieldPath {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn key(mut self, k: &str) -> Self {
        self.0.push(Seg::Key(k.to_string()));
        self
    }

    pub fn index(mut self, i: usize) -> Self {
        self.0.push(Seg::Index(i));
        self
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Key(k) if k.contains(['.', '/']) => write!(f, "[{k}]")?,
                Seg::Key(k) if n == 0 => f.write_str(k)?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

impl Serialize for FieldPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Which admission stage a rule belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Origin {
    /// The CRD schema (API server).
    Schema,
    /// The webhook's create rules.
    Webhook,
    /// The webhook's update rules (old → new).
    Update,
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValidationError {
    pub field: FieldPath,
    /// BMO's message (for [`Origin::Schema`], the API server's text after `<field>: `).
    pub message: String,
    pub origin: Origin,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Drops repeated messages, keeping the first (BMO's aggregate error shows each text once;
/// this hides the address rule's duplicate).
pub fn dedup(errors: Vec<ValidationError>) -> Vec<ValidationError> {
    let mut seen = std::collections::HashSet::new();
    errors
        .into_iter()
        .filter(|e| seen.insert((e.origin == Origin::Schema, e.to_string_key())))
        .collect()
}

impl ValidationError {
    fn to_string_key(&self) -> String {
        match self.origin {
            Origin::Schema => self.to_string(),
            _ => self.message.clone(),
        }
    }
}

/// The webhook's aggregate message: one text alone, several as `[m1, m2, ...]`.
pub fn aggregate(errors: &[ValidationError]) -> String {
    let texts: Vec<String> = dedup(errors.to_vec())
        .into_iter()
        .map(|e| e.message)
        .collect();
    match texts.len() {
        1 => texts[0].clone(),
        _ => format!("[{}]", texts.join(", ")),
    }
}

/// The webhook's create rules, repeated messages dropped.
pub fn validate_create(host: &BareMetalHost) -> Vec<ValidationError> {
    dedup(rules::create_rules(host))
}

/// The webhook's update: the create rules on `new`, then the rules comparing `old` and `new`.
pub fn validate_update(old: &BareMetalHost, new: &BareMetalHost) -> Vec<ValidationError> {
    let mut errors = rules::create_rules(new);
    errors.extend(rules::update_rules(old, new));
    dedup(errors)
}

/// The CRD schema's constraints.
pub fn validate_schema(host: &BareMetalHost) -> Vec<ValidationError> {
    schema::schema_errors(host)
}

/// Everything admission says about a host: schema, then the webhook (as an update when `old`
/// is known).
pub fn validate(host: &BareMetalHost, old: Option<&BareMetalHost>) -> Vec<ValidationError> {
    let mut errors = validate_schema(host);
    errors.extend(match old {
        Some(old) => validate_update(old, host),
        None => validate_create(host),
    });
    errors
}

/// The host as bmhctl last saw it: its last saved spec with its current metadata and status.
pub fn old_object(inv: &Inventory, host: usize) -> Option<BareMetalHost> {
    let entry = &inv.hosts[host];
    let book = inv.files[entry.file]
        .sidecar()
        .get(&entry.key.to_string())?;
    let spec: BareMetalHostSpec = serde_json::from_value(book.spec_snapshot.clone()?).ok()?;
    let mut old = entry.record.host.clone();
    old.spec = spec;
    Some(old)
}

/// How the host's BMC will be reached, as `-o json` shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BmcAccess {
    pub address: String,
    /// BMO's BMC type: the scheme as written, lower-cased (`redfish-virtualmedia+https`).
    #[serde(rename = "type")]
    pub bmc_type: String,
    /// The registered scheme it resolved to (`redfish-virtualmedia`).
    pub scheme: &'static str,
    /// Not a BMO scheme: bmhctl's own (`fake-hardware`).
    pub extension: bool,
    /// The Ironic hardware type.
    pub driver: &'static str,
    pub interfaces: bmh_bmc::Interfaces,
    /// What the node is created with, every password replaced by `<redacted>`.
    pub driver_info: serde_json::Map<String, serde_json::Value>,
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
    pub warnings: Vec<String>,
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

/// The BMC access of a host whose address resolves, and the warnings that go with it.
pub fn bmc_access(host: &BareMetalHost, objects: &ObjectMap) -> (Option<BmcAccess>, Vec<String>) {
    let mut warnings = Vec::new();
    let Some(bmc) = host.spec.bmc.as_ref().filter(|b| !b.address.is_empty()) else {
        return (None, warnings);
    };
    let Ok(access) = bmh_bmc::parse(&bmc.address) else {
        return (None, warnings);
    };
    if access.is_extension() {
        warnings.push(format!(
            "{}:// is bmhctl's own BMC scheme (Ironic's {} driver), not BMO's: a metal3 \
             cluster refuses it (Unknown BMC type '{}' for address {})",
            access.profile().name,
            access.driver(),
            access.bmc_type(),
            access.address()
        ));
    }
    let key = ObjectKey::new(host.metadata.namespace_or_default(), &bmc.credentials_name);
    let credentials = match objects.get_secret(&key) {
        Some(secret) => bmh_bmc::Credentials::new(
            secret.get_str("username").unwrap_or_default(),
            secret.get_str("password").unwrap_or_default(),
        ),
        None => bmh_bmc::Credentials::default(),
    };
    if bmc.credentials_name.is_empty() {
        warnings.push("spec.bmc.credentialsName is empty: registration will fail".into());
    } else if let Err(e) = credentials.validate() {
        warnings.push(format!("Secret {key}: {e}"));
    }
    let fast = host.spec.inspection_mode == bmh_api::InspectionMode::Fast;
    let interfaces = access
        .interfaces(fast)
        .or_else(|_| access.interfaces(false))
        .unwrap_or_default();
    let driver_info = bmh_bmc::redact_driver_info(
        &access.driver_info(&credentials, bmc.disable_certificate_verification),
    );
    let report = BmcAccess {
        address: bmc.address.clone(),
        bmc_type: access.bmc_type().to_string(),
        scheme: access.profile().name,
        extension: access.is_extension(),
        driver: access.driver(),
        interfaces,
        driver_info,
    };
    (Some(report), warnings)
}

/// Where `field` is in the host's document: the deepest part of the path the file has (a
/// missing field points at its parent), else the document's start.
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
    Diagnostic::new(e.message.clone())
        .at(position(inv, host, &e.field))
        .object(bmh_api::host::KIND, &inv.hosts[host].key)
        .field(e.field.to_string())
}

/// One [`Diagnostic`] per problem: `file:line:column: BareMetalHost ns/name: field: message`.
pub fn diagnostics(inv: &Inventory, host: usize, errors: &[ValidationError]) -> Vec<Diagnostic> {
    errors.iter().map(|e| diagnostic(inv, host, e)).collect()
}

/// Refuses the selected hosts if any is invalid: [`Error::Invalid`] listing every problem.
pub fn check_hosts(inv: &Inventory, selected: &[usize]) -> Result<(), Error> {
    let mut found = Diagnostics::default();
    for &i in selected {
        let old = old_object(inv, i);
        let errors = validate(&inv.hosts[i].record.host, old.as_ref());
        found.0.extend(diagnostics(inv, i, &errors));
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid(found))
    }
}

//! BMO's admission validation of BareMetalHosts (its webhook's create and update rules, spec
//! §5.1-5.2, and the CRD schema, §5.3), with BMO's and the API server's messages. Pure: hosts
//! in, broken rules out. An update's "old" object is the spec bmhctl last saved for the host
//! with its current metadata and status; a host never saved is checked as a create.

pub(crate) mod gojson;
mod golib;
pub mod object_meta;
mod rules;
mod schema;
#[cfg(test)]
mod tests;
pub mod warning;

use crate::objects::ObjectMap;
use bmh_api::{BareMetalHost, ObjectKey};
use serde::Serialize;
use std::fmt;

pub use golib::parse_mac;
pub use rules::inspection_disabled;
pub use warning::{Warning, WarningClass};

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
    /// bmhctl's word on what was probably meant (`did you mean ...?`), shown after BMO's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl ValidationError {
    /// BMO's message, then the hint in parentheses.
    pub fn text(&self) -> String {
        match &self.hint {
            Some(h) => format!("{} ({h})", self.message),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.text())
    }
}

/// The broken rules of one admission stage, in the order found.
struct Errors {
    origin: Origin,
    list: Vec<ValidationError>,
}

impl Errors {
    fn new(origin: Origin) -> Self {
        Self {
            origin,
            list: Vec::new(),
        }
    }

    fn push(&mut self, field: FieldPath, message: impl Into<String>) {
        self.push_hinted(field, message, None);
    }

    fn push_hinted(&mut self, field: FieldPath, message: impl Into<String>, hint: Option<String>) {
        self.list.push(ValidationError {
            field,
            message: message.into(),
            origin: self.origin,
            hint,
        });
    }
}

/// `spec.<path>`.
fn spec(path: &[&str]) -> FieldPath {
    path.iter()
        .fold(FieldPath::new().key("spec"), |p, k| p.key(k))
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
            Origin::Schema => format!("{}: {}", self.field, self.message),
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

/// The BMC access of a host whose address resolves, and the warnings that go with it.
pub fn bmc_access(host: &BareMetalHost, objects: &ObjectMap) -> (Option<BmcAccess>, Vec<Warning>) {
    let mut warnings = Vec::new();
    let Some(bmc) = host.spec.bmc.as_ref().filter(|b| !b.address.is_empty()) else {
        return (None, warnings);
    };
    let access = match bmh_bmc::parse(&bmc.address) {
        Ok(a) => a,
        Err(_) => return (None, warnings),
    };
    if let Some(fixed) = bmh_bmc::missing_scheme_separator(&bmc.address) {
        warnings.push(Warning::new(
            WarningClass::BmcAddress,
            format!(
                "spec.bmc.address: {:?} has no \"://\" after its type: BMO reads it as an IPMI \
                 address of host {:?}; write {fixed}",
                bmc.address,
                access.parsed().hostname()
            ),
        ));
    }
    warnings.extend(address_warnings(access.parsed()));
    if access.is_extension() {
        warnings.push(Warning::new(
            WarningClass::FakeHardware,
            format!(
                "{}:// is bmhctl's own BMC scheme (Ironic's {} driver), not BMO's: a metal3 \
                 cluster refuses it (Unknown BMC type '{}' for address {})",
                access.profile().name,
                access.driver(),
                access.bmc_type(),
                access.address()
            ),
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
    let credentials_warning = |m: String| Warning::new(WarningClass::BmcCredentials, m);
    if bmc.credentials_name.is_empty() {
        warnings.push(credentials_warning(
            "spec.bmc.credentialsName is empty: registration will fail".into(),
        ));
    } else if let Err(e) = credentials.validate() {
        warnings.push(credentials_warning(format!("Secret {key}: {e}")));
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

/// `; did you mean ...?` for a BMC type no scheme has: the closest type, else every type of the
/// closest vendor (`idrak` → `idrac-redfish://` or `idrac-virtualmedia://`).
pub fn bmc_type_suggestion(bmc_type: &str) -> Option<String> {
    let types = bmh_bmc::registered_types();
    if let Some(t) = crate::diagnostic::did_you_mean(bmc_type, types.iter().map(String::as_str)) {
        return Some(format!("did you mean {t}://?"));
    }
    let vendor = |t: &str| t.split(['-', '+']).next().unwrap_or("").to_string();
    let vendors: Vec<String> = bmh_bmc::PROFILES.iter().map(|p| vendor(p.name)).collect();
    let wanted = vendor(bmc_type);
    let close = crate::diagnostic::did_you_mean(&wanted, vendors.iter().map(String::as_str))?;
    let family: Vec<String> = bmh_bmc::PROFILES
        .iter()
        .filter(|p| vendor(p.name) == close)
        .map(|p| format!("{}://", p.name))
        .collect();
    Some(format!("did you mean {}?", family.join(" or ")))
}

/// What BMO accepts in a BMC address but cannot work: no host, a port beyond 65535 (BMO's URL
/// parser only checks that the port is digits).
fn address_warnings(parsed: &bmh_bmc::ParsedAddress) -> Vec<Warning> {
    let mut out = Vec::new();
    if parsed.hostname().is_empty() {
        out.push("spec.bmc.address: no host: the BMC cannot be reached".to_string());
    }
    let port = parsed.port();
    if !port.is_empty() && !port.parse::<u16>().is_ok_and(|p| p > 0) {
        out.push(format!(
            "spec.bmc.address: port {port} is out of range (1-65535): the BMC cannot be reached"
        ));
    }
    out.into_iter()
        .map(|m| Warning::new(WarningClass::BmcAddress, m))
        .collect()
}

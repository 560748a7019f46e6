//! Exact input, as kubectl's default `--validate=strict` has it.

use super::yaml_file::PathSeg;
use crate::diagnostic::{Diagnostic, Position, did_you_mean};
use crate::persist::{FieldValidation, InputPolicy};
use bmh_api::{BareMetalHost, DataImage, HostFirmwareComponents, HostFirmwareSettings, ObjectKey};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A path into a document, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// `value` as a `T`, with the paths of the keys serde dropped on the way.
pub(super) fn deserialize<T: DeserializeOwned>(
    value: &Value,
    ignored: &mut Vec<Vec<Seg>>,
) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
    serde_path_to_error::deserialize(serde_ignored::Deserializer::new(
        value,
        &mut noting(ignored),
    ))
}

/// [`deserialize`] without the path of an error (cheaper, for a first try).
pub(super) fn deserialize_untracked<T: DeserializeOwned>(
    value: &Value,
    ignored: &mut Vec<Vec<Seg>>,
) -> Result<T, serde_json::Error> {
    T::deserialize(serde_ignored::Deserializer::new(
        value,
        &mut noting(ignored),
    ))
}

/// Notes the path of each key serde drops in `ignored`.
fn noting(ignored: &mut Vec<Vec<Seg>>) -> impl FnMut(serde_ignored::Path) + '_ {
    |path| {
        let mut segs = Vec::new();
        segments(&path, &mut segs);
        ignored.push(segs);
    }
}

fn segments(path: &serde_ignored::Path, out: &mut Vec<Seg>) {
    use serde_ignored::Path;
    match path {
        Path::Root => {}
        Path::Seq { parent, index } => {
            segments(parent, out);
            out.push(Seg::Index(*index));
        }
        Path::Map { parent, key } => {
            segments(parent, out);
            out.push(Seg::Key(key.clone()));
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => segments(parent, out),
    }
}

/// The keys a typed object keeps in its `extra` maps: fields its schema does not know.
pub(super) trait Extras {
    fn extras(&self, out: &mut Vec<Vec<Seg>>);
}

fn extra_keys(at: &[&str], extra: &bmh_api::meta::Extra, out: &mut Vec<Vec<Seg>>) {
    unknown_keys(extra.keys(), &[], at, out);
}

/// The paths (under `at`) of the `keys` not among `known`.
fn unknown_keys<'a>(
    keys: impl Iterator<Item = &'a String>,
    known: &[&str],
    at: &[&str],
    out: &mut Vec<Vec<Seg>>,
) {
    let unknown = keys.filter(|k| !known.contains(&k.as_str()));
    out.extend(unknown.map(|k| at.iter().copied().chain([k.as_str()]).map(key).collect()));
}

/// Kubernetes' ObjectMeta fields bmhctl keeps without modelling them.
const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

pub(super) fn meta_extras(meta: &bmh_api::ObjectMeta, out: &mut Vec<Vec<Seg>>) {
    unknown_keys(meta.extra.keys(), OBJECT_META_FIELDS, &["metadata"], out);
}

impl Extras for BareMetalHost {
    fn extras(&self, out: &mut Vec<Vec<Seg>>) {
        extra_keys(&[], &self.extra, out);
        meta_extras(&self.metadata, out);
        extra_keys(&["spec"], &self.spec.extra, out);
        if let Some(bmc) = &self.spec.bmc {
            extra_keys(&["spec", "bmc"], &bmc.extra, out);
        }
        // `spec.networkInterfaces[]` extras are read by the schema checks: known, not modelled.
        if let Some(status) = &self.status {
            extra_keys(&["status"], &status.extra, out);
            extra_keys(&["status", "provisioning"], &status.provisioning.extra, out);
        }
    }
}

/// The objects whose only unmodelled fields are at the top, in `metadata`, `spec` and `status`.
macro_rules! spec_and_status_extras {
    ($($t:ty),*) => {$(
        impl Extras for $t {
            fn extras(&self, out: &mut Vec<Vec<Seg>>) {
                extra_keys(&[], &self.extra, out);
                meta_extras(&self.metadata, out);
                extra_keys(&["spec"], &self.spec.extra, out);
                if let Some(status) = &self.status {
                    extra_keys(&["status"], &status.extra, out);
                }
            }
        }
    )*};
}

spec_and_status_extras!(
    HostFirmwareSettings,
    DataImage,
    HostFirmwareComponents,
    bmh_api::BmcEventSubscription
);

const SECRET_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "data",
    "stringData",
    "type",
    "immutable",
];

/// The unknown top-level fields of a Secret (its `data` and `stringData` are free-form).
pub(super) fn secret_unknown_fields(value: &Value) -> Vec<Vec<Seg>> {
    let mut out = Vec::new();
    let top = value.as_object().into_iter().flat_map(|m| m.keys());
    unknown_keys(top, SECRET_FIELDS, &[], &mut out);
    let meta = value.get("metadata").and_then(Value::as_object);
    let meta = meta.into_iter().flat_map(|m| m.keys());
    unknown_keys(meta, OBJECT_META_FIELDS, &["metadata"], &mut out);
    out
}

/// The field names known at a path (indices written `*`), for the did-you-mean.
fn siblings(kind: &str, parent: &str) -> &'static [&'static str] {
    match (kind, parent) {
        ("Secret", "") => SECRET_FIELDS,
        (_, "") => &["apiVersion", "kind", "metadata", "spec", "status"],
        (_, "metadata") => OBJECT_META_FIELDS,
        ("Secret", _) => &[],
        ("BareMetalHost", _) => host_siblings(parent),
        ("BMCEventSubscription", "spec") => {
            &["hostName", "destination", "context", "httpHeadersRef"]
        }
        ("BMCEventSubscription", "spec.httpHeadersRef") => &["name", "namespace"],
        ("BMCEventSubscription", "status") => &["subscriptionID", "error"],
        ("HostFirmwareSettings", "spec") => &["settings"],
        ("HostFirmwareSettings", "status") => &["schema", "settings", "lastUpdated", "conditions"],
        ("DataImage", "spec") => &["url"],
        ("DataImage", "status") => &["lastReconciled", "attachedImage", "error"],
        ("HostFirmwareComponents", "spec") => &["updates"],
        ("HostFirmwareComponents", "spec.updates.*") => &["component", "url"],
        ("HostFirmwareComponents", "status") => {
            &["updates", "components", "lastUpdated", "conditions"]
        }
        _ => &[],
    }
}

/// [`siblings`] in a BareMetalHost.
fn host_siblings(parent: &str) -> &'static [&'static str] {
    match parent {
        "spec" => HOST_SPEC_FIELDS,
        "spec.bmc" => &[
            "address",
            "credentialsName",
            "disableCertificateVerification",
        ],
        "spec.rootDeviceHints" | "status.provisioning.rootDeviceHints" => &[
            "deviceName",
            "hctl",
            "model",
            "vendor",
            "serialNumber",
            "minSizeGigabytes",
            "wwn",
            "wwnWithExtension",
            "wwnVendorExtension",
            "rotational",
        ],
        "spec.raid" | "status.provisioning.raid" => &["hardwareRAIDVolumes", "softwareRAIDVolumes"],
        "spec.raid.hardwareRAIDVolumes.*" => &[
            "sizeGibibytes",
            "level",
            "name",
            "rotational",
            "numberOfPhysicalDisks",
            "controller",
            "physicalDisks",
        ],
        "spec.raid.softwareRAIDVolumes.*" => {
            &["rootVolume", "sizeGibibytes", "level", "physicalDisks"]
        }
        "spec.firmware" | "status.provisioning.firmware" => &[
            "virtualizationEnabled",
            "simultaneousMultithreadingEnabled",
            "sriovEnabled",
        ],
        "spec.image" | "status.provisioning.image" | "status.lastAttemptedImage" => &[
            "url",
            "checksum",
            "checksumType",
            "format",
            "ociAuthSecretName",
        ],
        "spec.customDeploy" | "status.provisioning.customDeploy" => &["method"],
        "spec.userData" | "spec.networkData" | "spec.metaData" => &["name", "namespace"],
        "status" => HOST_STATUS_FIELDS,
        "status.provisioning" => &[
            "state",
            "ID",
            "image",
            "rootDeviceHints",
            "bootMode",
            "raid",
            "firmware",
            "customDeploy",
        ],
        _ => &[],
    }
}

const HOST_SPEC_FIELDS: &[&str] = &[
    "taints",
    "bmc",
    "raid",
    "firmware",
    "hardwareProfile",
    "rootDeviceHints",
    "bootMode",
    "bootMACAddress",
    "online",
    "consumerRef",
    "image",
    "userData",
    "preprovisioningNetworkDataName",
    "networkData",
    "metaData",
    "description",
    "externallyProvisioned",
    "automatedCleaningMode",
    "customDeploy",
    "architecture",
    "disablePowerOff",
    "inspectionMode",
    "networkInterfaces",
];

const HOST_STATUS_FIELDS: &[&str] = &[
    "operationalStatus",
    "errorType",
    "lastUpdated",
    "hardwareProfile",
    "hardware",
    "provisioning",
    "goodCredentials",
    "triedCredentials",
    "errorMessage",
    "poweredOn",
    "operationHistory",
    "errorCount",
    "provisioningFailCount",
    "lastAttemptedImage",
    "conditions",
];

fn dotted(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if s.is_empty() => s.push_str(k),
            Seg::Key(k) => s.push_str(&format!(".{k}")),
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// The parent path as [`siblings`] names it: keys dotted, indices `*`.
fn pattern(path: &[Seg]) -> String {
    path.iter()
        .map(|s| match s {
            Seg::Key(k) => k.as_str(),
            Seg::Index(_) => "*",
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// One diagnostic per unknown field, an error or a warning as `policy` and the place say.
#[allow(clippy::too_many_arguments)]
pub(super) fn report_unknown_fields(
    mut unknown: Vec<Vec<Seg>>,
    kind: &str,
    object: &ObjectKey,
    policy: InputPolicy,
    at: &dyn Fn(&[PathSeg]) -> Position,
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) {
    if policy.fields == FieldValidation::Ignore {
        return;
    }
    unknown.sort_by_key(|p| dotted(p));
    unknown.dedup();
    for path in unknown {
        let Some((Seg::Key(name), parent)) = path.split_last() else {
            continue;
        };
        let in_status = matches!(path.first(), Some(Seg::Key(k)) if k == "status");
        let mut message = "unknown field".to_string();
        if let Some(s) = did_you_mean(name, siblings(kind, &pattern(parent)).iter().copied()) {
            message.push_str(&format!(" (did you mean {s}?)"));
        }
        if in_status {
            message.push_str(
                "; kept as written (a status may come from a newer BMO than bmhctl knows)",
            );
        }
        let segs: Vec<PathSeg> = path
            .iter()
            .map(|s| match s {
                Seg::Key(k) => PathSeg::Key(k),
                Seg::Index(i) => PathSeg::Index(*i),
            })
            .collect();
        let d = Diagnostic::new(message)
            .at(at(&segs))
            .object(kind, object)
            .field(dotted(&path));
        if policy.fields == FieldValidation::Strict && !in_status {
            errors.push(d);
        } else {
            warnings.push(d);
        }
    }
}

/// Why `name` is not a DNS-1123 subdomain (as the API server checks object names).
pub fn dns1123_subdomain(name: &str) -> Option<String> {
    const MAX: usize = 253;
    if name.len() > MAX {
        return Some(format!("must be no more than {MAX} characters"));
    }
    let ok = !name.is_empty() && name.split('.').all(label_chars_ok);
    (!ok).then(|| {
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' \
         or '.', and must start and end with an alphanumeric character (e.g. 'example.com')"
            .to_string()
    })
}

/// Why `name` is not a DNS-1123 label (as the API server checks namespaces).
pub fn dns1123_label(name: &str) -> Option<String> {
    const MAX: usize = 63;
    if name.len() > MAX {
        return Some(format!("must be no more than {MAX} characters"));
    }
    (!label_chars_ok(name)).then(|| {
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', \
         and must start and end with an alphanumeric character (e.g. 'my-name')"
            .to_string()
    })
}

fn label_chars_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && b.len() <= 63
        && alnum(&b[0])
        && alnum(&b[b.len() - 1])
        && b.iter().all(|c| alnum(c) || *c == b'-')
}

/// Why a name breaks a rule, `None` when it does not.
type NameRule = fn(&str) -> Option<String>;

/// The metadata problems of an object: its name, namespace, labels and annotations.
pub(super) fn metadata_problems(
    value: &Value,
    kind: &str,
    object: &ObjectKey,
    at: &dyn Fn(&[PathSeg]) -> Position,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let meta = value.get("metadata");
    let checks: [(&str, NameRule); 2] = [("name", dns1123_subdomain), ("namespace", dns1123_label)];
    for (field, check) in checks {
        let Some(text) = meta.and_then(|m| m.get(field)).and_then(Value::as_str) else {
            continue;
        };
        if field == "namespace" && text.is_empty() {
            continue;
        }
        if let Some(why) = check(text) {
            out.push(
                Diagnostic::new(format!("invalid {field} {text:?}: {why}"))
                    .at(at(&[PathSeg::Key("metadata"), PathSeg::Key(field)]))
                    .object(kind, object)
                    .field(format!("metadata.{field}")),
            );
        }
    }
    out.extend(label_problems(value, kind, object, at));
    out
}

/// The labels and annotations the API server would refuse (non-strings are the typed parse's).
pub(super) fn label_problems(
    value: &Value,
    kind: &str,
    object: &ObjectKey,
    at: &dyn Fn(&[PathSeg]) -> Position,
) -> Vec<Diagnostic> {
    use crate::validate::object_meta::{self, MetaMap, MetaPart};
    let meta = value.get("metadata");
    let entries = |map: MetaMap| -> Vec<(&str, &str)> {
        meta.and_then(|m| m.get(map.field()))
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut problems = object_meta::label_problems(entries(MetaMap::Labels));
    problems.extend(object_meta::annotation_problems(entries(
        MetaMap::Annotations,
    )));
    problems
        .into_iter()
        .map(|p| {
            let map = p.map.field();
            let (segs, field) = match &p.part {
                MetaPart::Key(k) | MetaPart::Value(k) => {
                    // A problem with the key itself is located at the key, not its value.
                    let entry = match p.part {
                        MetaPart::Key(_) => PathSeg::KeyOf(k),
                        _ => PathSeg::Key(k),
                    };
                    let segs = vec![PathSeg::Key("metadata"), PathSeg::Key(map), entry];
                    (segs, format!("metadata.{map}[{}]", shown_key(k)))
                }
                MetaPart::Whole => (
                    vec![PathSeg::Key("metadata"), PathSeg::Key(map)],
                    format!("metadata.{map}"),
                ),
            };
            Diagnostic::new(p.message)
                .at(at(&segs))
                .object(kind, object)
                .field(field)
        })
        .collect()
}

/// The labels and annotations that are not strings, in an object no type checks.
pub(super) fn label_type_problems(
    value: &Value,
    kind: &str,
    object: &ObjectKey,
    at: &dyn Fn(&[PathSeg]) -> Position,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(meta) = value.get("metadata") else {
        return out;
    };
    for map in ["labels", "annotations"] {
        let problem = |segs: &[PathSeg], field: String, message: &str| {
            Diagnostic::new(message)
                .at(at(segs))
                .object(kind, object)
                .field(field)
        };
        match meta.get(map) {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (k, v) in m {
                    if !v.is_string() {
                        out.push(problem(
                            &[PathSeg::Key("metadata"), PathSeg::Key(map), PathSeg::Key(k)],
                            format!("metadata.{map}[{}]", shown_key(k)),
                            "must be a string (quote it: `yes`, `true` and numbers are not \
                             strings in YAML)",
                        ));
                    }
                }
            }
            Some(_) => out.push(problem(
                &[PathSeg::Key("metadata"), PathSeg::Key(map)],
                format!("metadata.{map}"),
                "must be a mapping of keys to strings",
            )),
        }
    }
    out
}

/// A map key as a field path shows it: quoted, and cut short when long.
fn shown_key(k: &str) -> String {
    const MAX: usize = 80;
    match k.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{:?}... ({} characters)", &k[..cut], k.chars().count()),
        None => format!("{k:?}"),
    }
}

/// A YAML error in bmhctl's words where the parser's would give advice about its own options.
pub(super) fn yaml_message(e: &serde_saphyr::Error) -> Option<String> {
    match e.without_snippet() {
        serde_saphyr::Error::DuplicateMappingKey { key, .. } => Some(match key {
            Some(k) => format!("duplicate key {k:?}: a key may appear only once in a mapping"),
            None => "duplicate key: a key may appear only once in a mapping".to_string(),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_finds_case_slips_and_typos_but_not_other_words() {
        let spec = siblings("BareMetalHost", "spec");
        assert_eq!(
            did_you_mean("bootMacAddress", spec.iter().copied()),
            Some("bootMACAddress")
        );
        assert_eq!(
            did_you_mean("externalyProvisioned", spec.iter().copied()),
            Some("externallyProvisioned")
        );
        assert_eq!(did_you_mean("colour", spec.iter().copied()), None);
    }

    #[test]
    fn names_follow_dns_1123() {
        assert_eq!(dns1123_subdomain("worker-0.rack1"), None);
        assert!(dns1123_subdomain("UPPER_case").is_some());
        assert!(dns1123_subdomain("-x").is_some());
        assert!(dns1123_subdomain(&"a".repeat(254)).is_some());
        assert_eq!(dns1123_label("metal3"), None);
        assert!(dns1123_label("a.b").is_some());
    }
}

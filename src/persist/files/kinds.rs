//! The kinds of document the file loader knows, one row each.

use super::strict::{self, Extras};
use super::yaml_file::PathSeg;
use crate::diagnostic::{Diagnostic, Position, did_you_mean};
use crate::objects::{ResolvedSecret, SECRET_API_VERSION, SECRET_KIND};
use crate::persist::InputPolicy;
use crate::persist::store::object_file::{DataProblem, decode_data};
use bmh_api::{
    API_VERSION, BMC_EVENT_SUBSCRIPTION_KIND, BareMetalHost, BmcEventSubscription, DATA_IMAGE_KIND,
    DataImage, HOST_FIRMWARE_COMPONENTS_KIND, HOST_FIRMWARE_SETTINGS_KIND, HOST_UPDATE_POLICY_KIND,
    HostFirmwareComponents, HostFirmwareSettings, ObjectKey,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub(super) struct Kind {
    pub(super) api_version: &'static str,
    pub(super) kind: &'static str,
    /// How a document of the kind is typed and checked; `None`: it is kept as it is written.
    pub(super) decode: Option<fn(&mut Doc<'_>) -> Typed>,
    /// Whether one without `metadata.name` is refused while parsing.
    pub(super) named: bool,
    /// Whether bmhctl writes its `status:` back (so its document must be in block style).
    pub(super) status_written: bool,
}

impl Kind {
    /// A kind typed while parsing, named, its status written back.
    const fn typed(
        api_version: &'static str,
        kind: &'static str,
        decode: fn(&mut Doc<'_>) -> Typed,
    ) -> Kind {
        Kind {
            api_version,
            kind,
            decode: Some(decode),
            named: true,
            status_written: true,
        }
    }

    /// A kind kept as it is written (its labels are checked when the files are linked).
    const fn kept(api_version: &'static str, kind: &'static str) -> Kind {
        Kind {
            api_version,
            kind,
            decode: None,
            named: false,
            status_written: false,
        }
    }
}

/// The kinds bmhctl reads, in the order its messages name them.
pub(super) const KINDS: &[Kind] = &[
    Kind::typed(bmh_api::host::API_VERSION, bmh_api::host::KIND, host),
    Kind {
        status_written: false,
        ..Kind::typed(SECRET_API_VERSION, SECRET_KIND, secret)
    },
    Kind::typed(API_VERSION, HOST_FIRMWARE_SETTINGS_KIND, settings),
    Kind::typed(API_VERSION, HOST_FIRMWARE_COMPONENTS_KIND, components),
    Kind::kept(API_VERSION, HOST_UPDATE_POLICY_KIND),
    Kind::kept(API_VERSION, "HardwareData"),
    Kind::kept(API_VERSION, "FirmwareSchema"),
    Kind::typed(API_VERSION, DATA_IMAGE_KIND, data_image),
    Kind {
        named: false,
        ..Kind::typed(API_VERSION, BMC_EVENT_SUBSCRIPTION_KIND, subscription)
    },
];

/// The row of a document's apiVersion and kind.
pub(super) fn find(api_version: &str, kind: &str) -> Option<&'static Kind> {
    KINDS
        .iter()
        .find(|k| k.api_version == api_version && k.kind == kind)
}

/// BMO's other kinds (its CRDs in `metal3.io`): kept in their files and skipped, not refused.
pub const BMO_KINDS_NOT_READ: &[&str] = &[
    "BareMetalSwitch",
    "HostClaim",
    "HostDeployPolicy",
    "HostNetworkAttachment",
    "PreprovisioningImage",
];

/// What becomes of a document of a kind bmhctl does not read.
#[derive(Debug, PartialEq, Eq)]
pub enum Unread {
    /// Left in its file and skipped, with one note per kind: a kind of BMO's that bmhctl does
    /// not drive, a Kubernetes kind, or a kind of another API group (`Machine`, ...).
    Skipped,
    /// Refused as bad input (the field to blame, and why): a near miss of a kind bmhctl reads
    /// or of its apiVersion, or a kind `metal3.io` does not have.
    Refused(&'static str, String),
}

/// What becomes of a document of this apiVersion and kind; `None`: bmhctl reads it.
pub fn unread(api_version: &str, kind: &str) -> Option<Unread> {
    if find(api_version, kind).is_some() {
        return None;
    }
    let refused = |field, why: String| Some(Unread::Refused(field, why));
    if kind.is_empty() {
        return refused("kind", "document without a kind".to_string());
    }
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    if group == "metal3.io" && BMO_KINDS_NOT_READ.contains(&kind) {
        return Some(Unread::Skipped);
    }
    if let Some(Kind { api_version: v, .. }) = KINDS.iter().find(|k| k.kind == kind) {
        return refused(
            "apiVersion",
            format!(
                "apiVersion {api_version:?} is not one bmhctl reads for kind {kind} (expected {v})"
            ),
        );
    }
    let near = did_you_mean(kind, KINDS.iter().map(|k| k.kind));
    if near.is_none() && group != "metal3.io" {
        return Some(Unread::Skipped);
    }
    let mut message = format!("unknown kind {kind:?}");
    if let Some(k) = near {
        message.push_str(&format!(" (did you mean {k}?)"));
    } else {
        message.push_str(" in metal3.io");
    }
    let names: Vec<&str> = KINDS.iter().map(|k| k.kind).collect();
    message.push_str(&format!(
        "; bmhctl reads {} (--skip-unknown-kinds skips it)",
        names.join(", ")
    ));
    refused("kind", message)
}

/// A document being typed, and where its problems go.
pub(super) struct Doc<'a> {
    pub(super) value: &'a Value,
    pub(super) key: &'a ObjectKey,
    pub(super) at: &'a dyn Fn(&[PathSeg]) -> Position,
    pub(super) policy: InputPolicy,
    pub(super) errors: &'a mut Vec<Diagnostic>,
    /// Problems that do not stop a run (see [`strict`]).
    pub(super) warnings: &'a mut Vec<Diagnostic>,
}

/// A document typed and checked: `None` (or `false`) when a problem was recorded.
pub(super) enum Typed {
    Host(Option<Box<BareMetalHost>>),
    Secret(Option<ResolvedSecret>),
    /// A document that belongs to the host of its name, in its file.
    Companion(Option<FirmwareObject>),
    /// Checked, then kept as it is written.
    Checked(bool),
}

impl Typed {
    /// Whether the document was typed and checked without a problem.
    pub(super) fn is_ok(&self) -> bool {
        match self {
            Typed::Host(h) => h.is_some(),
            Typed::Secret(s) => s.is_some(),
            Typed::Companion(o) => o.is_some(),
            Typed::Checked(ok) => *ok,
        }
    }
}

/// A typed HostFirmwareSettings, HostFirmwareComponents or DataImage (belonging to its host).
pub(super) enum FirmwareObject {
    Settings(Box<HostFirmwareSettings>),
    Components(Box<HostFirmwareComponents>),
    DataImage(Box<DataImage>),
}

fn host(d: &mut Doc<'_>) -> Typed {
    Typed::Host(d.typed::<BareMetalHost>(bmh_api::host::KIND).map(Box::new))
}

fn settings(d: &mut Doc<'_>) -> Typed {
    let o = d.typed::<HostFirmwareSettings>(HOST_FIRMWARE_SETTINGS_KIND);
    Typed::Companion(o.map(|o| FirmwareObject::Settings(Box::new(o))))
}

fn components(d: &mut Doc<'_>) -> Typed {
    let o = d.typed::<HostFirmwareComponents>(HOST_FIRMWARE_COMPONENTS_KIND);
    Typed::Companion(o.map(|o| FirmwareObject::Components(Box::new(o))))
}

fn data_image(d: &mut Doc<'_>) -> Typed {
    let image = d.typed::<DataImage>(DATA_IMAGE_KIND).filter(|image| {
        let problem = data_image_url_problem(&image.spec.url);
        if let Some(p) = &problem {
            d.errors.push(
                Diagnostic::new(p.clone())
                    .at((d.at)(&[PathSeg::Key("spec"), PathSeg::Key("url")]))
                    .object(DATA_IMAGE_KIND, d.key)
                    .field("spec.url"),
            );
        }
        problem.is_none()
    });
    Typed::Companion(image.map(|i| FirmwareObject::DataImage(Box::new(i))))
}

/// Typed, then checked with BMO's admission rules (see [`super::bmc_event_subscriptions`]).
fn subscription(d: &mut Doc<'_>) -> Typed {
    let sub = d.typed::<BmcEventSubscription>(BMC_EVENT_SUBSCRIPTION_KIND);
    if let Some(sub) = &sub {
        d.errors.extend(admission(sub, d.key, d.at));
    }
    Typed::Checked(sub.is_some())
}

/// A Secret's names, labels and fields checked, and its data decoded.
fn secret(d: &mut Doc<'_>) -> Typed {
    let (value, key, at) = (d.value, d.key, d.at);
    let mut problems = strict::metadata_problems(value, SECRET_KIND, key, at);
    problems.extend(strict::label_type_problems(value, SECRET_KIND, key, at));
    strict::report_unknown_fields(
        strict::secret_unknown_fields(value),
        SECRET_KIND,
        key,
        d.policy,
        at,
        &mut problems,
        d.warnings,
    );
    let data = decode_data(value, &["data", "stringData"], |field, problem| {
        let msg = match problem {
            DataProblem::NotAMapping => "must be a mapping of keys to strings",
            DataProblem::NotAString => "must be a string (quote it; the value is not shown)",
            DataProblem::NotBase64 => {
                "not valid base64 (data values are base64-encoded; use stringData for plain text)"
            }
        };
        let segs: Vec<PathSeg> = field.iter().map(|k| PathSeg::Key(k)).collect();
        problems.push(
            Diagnostic::new(msg.to_string())
                .at(at(&segs))
                .object(SECRET_KIND, key)
                .field(field.join(".")),
        );
    });
    let secret = problems
        .is_empty()
        .then(|| ResolvedSecret::new(key.clone(), data));
    d.errors.append(&mut problems);
    Typed::Secret(secret)
}

impl Doc<'_> {
    /// The document as a `T`; a problem is recorded at the field's position.
    fn typed<T: DeserializeOwned + Extras>(&mut self, kind: &str) -> Option<T> {
        let mut unknown = Vec::new();
        let names = strict::metadata_problems(self.value, kind, self.key, self.at);
        let bad_names = !names.is_empty();
        self.errors.extend(names);
        // Typed without tracking the path first (tracking allocates every key).
        let typed = strict::deserialize_untracked::<T>(self.value, &mut unknown).or_else(|_| {
            unknown.clear();
            strict::deserialize::<T>(self.value, &mut unknown)
        });
        match typed {
            Ok(o) => {
                o.extras(&mut unknown);
                let before = self.errors.len();
                strict::report_unknown_fields(
                    unknown,
                    kind,
                    self.key,
                    self.policy,
                    self.at,
                    self.errors,
                    self.warnings,
                );
                (self.errors.len() == before && !bad_names).then_some(o)
            }
            Err(e) => {
                self.errors.push(type_error(&e, kind, self.key, self.at));
                None
            }
        }
    }
}

/// BMO's DataImage webhook (`validateDataImage`): the URL must parse with one of these schemes.
fn data_image_url_problem(url: &str) -> Option<String> {
    const SCHEMES: &[&str] = &["http", "https", "ftp", "gopher", "oci"];
    match bmh_bmc::parse_request_uri(url) {
        Err(e) => Some(format!("URL \"{url}\" is invalid: {e}")),
        Ok(scheme) if !SCHEMES.contains(&scheme.as_str()) => Some(format!(
            "URL \"{url}\" is invalid: invalid scheme in URL, \"{scheme}\" not allowed"
        )),
        Ok(_) => None,
    }
}

/// BMO's admission rules for a subscription document, at the field each names.
fn admission(
    sub: &BmcEventSubscription,
    key: &ObjectKey,
    at: &dyn Fn(&[PathSeg]) -> Position,
) -> Vec<Diagnostic> {
    sub.validate()
        .into_iter()
        .map(|(field, message)| {
            let segs: Vec<PathSeg> = field.split('.').map(PathSeg::Key).collect();
            Diagnostic::new(message)
                .at(at(&segs))
                .object(BMC_EVENT_SUBSCRIPTION_KIND, key)
                .field(field)
        })
        .collect()
}

/// A value of the wrong type, at its field (none when the document as a whole is wrong).
fn type_error(
    e: &serde_path_to_error::Error<serde_json::Error>,
    kind: &str,
    key: &ObjectKey,
    at: &dyn Fn(&[PathSeg]) -> Position,
) -> Diagnostic {
    let segs = path_segs(e.path());
    let d = Diagnostic::new(e.inner().to_string())
        .at(at(&segs))
        .object(kind, key);
    if segs.is_empty() {
        d
    } else {
        d.field(e.path().to_string())
    }
}

fn path_segs(path: &serde_path_to_error::Path) -> Vec<PathSeg<'_>> {
    use serde_path_to_error::Segment;
    path.iter()
        .map_while(|s| match s {
            Segment::Map { key } => Some(PathSeg::Key(key)),
            Segment::Enum { variant } => Some(PathSeg::Key(variant)),
            Segment::Seq { index } => Some(PathSeg::Index(*index)),
            Segment::Unknown => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_api_versions_are_checked_apart() {
        assert_eq!(unread("metal3.io/v1alpha1", "BareMetalHost"), None);
        assert_eq!(unread("metal3.io/v1alpha1", "DataImage"), None);
        let refused = |v, k| match unread(v, k) {
            Some(Unread::Refused(field, m)) => (field, m),
            other => panic!("{v} {k}: {other:?}"),
        };
        let (field, m) = refused("metal3.io/v1beta1", "BareMetalHost");
        assert_eq!(field, "apiVersion");
        assert!(m.contains("expected metal3.io/v1alpha1"), "{m}");
        let (field, m) = refused("metal3.io/v1alpha1", "BaremetalHost");
        assert_eq!(field, "kind");
        assert!(m.contains("did you mean BareMetalHost?"), "{m}");
    }

    #[test]
    fn kinds_of_others_are_skipped_and_near_misses_refused() {
        for (v, k) in [
            ("metal3.io/v1alpha1", "PreprovisioningImage"),
            ("metal3.io/v1alpha1", "HostClaim"),
            ("metal3.io/v1alpha1", "HostDeployPolicy"),
            ("metal3.io/v1alpha1", "HostNetworkAttachment"),
            ("metal3.io/v1alpha1", "BareMetalSwitch"),
            ("cluster.x-k8s.io/v1beta1", "Machine"),
            ("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Machine"),
            ("v1", "ConfigMap"),
            ("v1", "Namespace"),
        ] {
            assert_eq!(unread(v, k), Some(Unread::Skipped), "{v} {k}");
        }
        for (v, k, hint) in [
            (
                "metal3.io/v1alpha1",
                "BareMetalHots",
                "did you mean BareMetalHost?",
            ),
            (
                "metal3.io/v1alpha1",
                "baremetalhost",
                "did you mean BareMetalHost?",
            ),
            ("v1", "Secrets", "did you mean Secret?"),
            ("metal3.io/v1alpha1", "HostPolicy", "in metal3.io"),
            ("v1", "", "document without a kind"),
        ] {
            match unread(v, k) {
                Some(Unread::Refused("kind", m)) => assert!(m.contains(hint), "{k}: {m}"),
                other => panic!("{v} {k}: {other:?}"),
            }
        }
    }
}

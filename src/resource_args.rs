//! kubectl's resource arguments, as every command that takes names reads them: a leading type
//! (`bmh`, `baremetalhosts`, `baremetalhost.metal3.io`, ...) followed by names, or
//! `TYPE/NAME` for each name; `NAMESPACE/NAME` as bmhctl always took it.
//!
//! The rule for `A/B`: when `A` is a form of a kind bmhctl lists it is the type (so `-o name`
//! output reads back), otherwise it is a namespace. A namespace spelt like a type is reached
//! with `TYPE/NAMESPACE/NAME` (`bmh/bmh/worker-0`) or `-n`.

use crate::error::{Error, Result};

/// The kinds `get` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    BareMetalHost,
    DataImage,
    BmcEventSubscription,
}

/// A kind's names as kubectl takes them (with or without `.metal3.io`, any case).
struct Forms {
    kind: Kind,
    singular: &'static str,
    plural: &'static str,
    short: &'static [&'static str],
}

const KINDS: [Forms; 3] = [
    Forms {
        kind: Kind::BareMetalHost,
        singular: "baremetalhost",
        plural: "baremetalhosts",
        short: &["bmh", "bmhost"],
    },
    Forms {
        kind: Kind::DataImage,
        singular: "dataimage",
        plural: "dataimages",
        short: &[],
    },
    Forms {
        kind: Kind::BmcEventSubscription,
        singular: "bmceventsubscription",
        plural: "bmceventsubscriptions",
        short: &["bes", "bmcevent", "bmcevents"],
    },
];

/// Types of Kubernetes and metal3 that bmhctl has no command for: named as types, never read as
/// a host or a namespace that is not there.
const OTHER_TYPES: &[&str] = &[
    "pod",
    "pods",
    "po",
    "node",
    "nodes",
    "no",
    "service",
    "services",
    "svc",
    "deployment",
    "deployments",
    "deploy",
    "namespace",
    "namespaces",
    "ns",
    "configmap",
    "configmaps",
    "cm",
    "secret",
    "secrets",
    "replicaset",
    "replicasets",
    "rs",
    "statefulset",
    "statefulsets",
    "sts",
    "daemonset",
    "daemonsets",
    "ds",
    "job",
    "jobs",
    "cronjob",
    "cronjobs",
    "cj",
    "event",
    "events",
    "ev",
    "persistentvolume",
    "persistentvolumes",
    "pv",
    "persistentvolumeclaim",
    "persistentvolumeclaims",
    "pvc",
    "ingress",
    "ingresses",
    "ing",
    "serviceaccount",
    "serviceaccounts",
    "sa",
    "machine",
    "machines",
    "hostfirmwaresettings",
    "hfs",
    "hostfirmwarecomponents",
    "hfc",
    "hardwaredata",
    "hd",
    "firmwareschema",
    "firmwareschemas",
    "preprovisioningimage",
    "preprovisioningimages",
    "ppimg",
    "hostupdatepolicy",
    "hostupdatepolicies",
];

impl Kind {
    /// The resource `-o name` prints, `RESOURCE/NAME`.
    pub fn resource(self) -> &'static str {
        match self {
            Kind::BareMetalHost => "baremetalhost.metal3.io",
            Kind::DataImage => "dataimage.metal3.io",
            Kind::BmcEventSubscription => "bmceventsubscription.metal3.io",
        }
    }

    /// The name kubectl's messages use, `baremetalhosts.metal3.io`.
    fn plural(self) -> String {
        let f = KINDS.iter().find(|f| f.kind == self).expect("every kind");
        format!("{}.metal3.io", f.plural)
    }
}

/// `baremetalhost.metal3.io/NAME`: how kubectl names a host in `-o name` and in what it says.
pub fn host_resource(name: &str) -> String {
    format!("{}/{name}", Kind::BareMetalHost.resource())
}

/// The kind `word` names as a resource type, if any.
pub fn kind_of(word: &str) -> Option<Kind> {
    let w = word.to_ascii_lowercase();
    let w = w.strip_suffix(".metal3.io").unwrap_or(&w);
    KINDS
        .iter()
        .find(|f| f.singular == w || f.plural == w || f.short.contains(&w))
        .map(|f| f.kind)
}

/// What the arguments name: one kind and its names (`NAME` or `NAMESPACE/NAME`), type prefixes
/// removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub kind: Kind,
    /// Whether a type was given (`bmh`, `bmh/x`): `bmh` alone names no one in particular.
    pub typed: bool,
    pub names: Vec<String>,
}

/// Reads `args` as kubectl reads `get`'s; several kinds at once are refused (one at a time).
pub fn parse(args: &[String]) -> Result<Named> {
    if let Some((first, rest)) = args.split_first()
        && !first.contains('/')
        && let Some(kind) = kind_of(first)
    {
        if let Some(typed) = rest.iter().find(|n| type_prefix(n).is_some()) {
            return Err(Error::Usage(format!(
                "there is no need to specify a resource type as a separate argument when \
                 passing arguments in resource/name form (e.g. '{first} NAME' or '{typed}', not \
                 '{first} {typed}')"
            )));
        }
        return Ok(Named {
            kind,
            typed: true,
            names: rest.to_vec(),
        });
    }
    let mut kinds = Vec::new();
    let mut names = Vec::new();
    for arg in args {
        match type_prefix(arg) {
            Some((kind, name)) => {
                kinds.push(kind);
                names.push(name.to_string());
            }
            None => {
                kinds.push(Kind::BareMetalHost);
                names.push(arg.clone());
            }
        }
    }
    let kind = kinds.first().copied().unwrap_or(Kind::BareMetalHost);
    if let Some(other) = kinds.iter().find(|k| **k != kind) {
        return Err(Error::Usage(format!(
            "one resource type at a time: {} and {} given",
            kind.plural(),
            other.plural()
        )));
    }
    Ok(Named {
        kind,
        typed: args.iter().any(|a| type_prefix(a).is_some()),
        names,
    })
}

/// [`parse`] for the commands that act on hosts only: the host names.
pub fn host_names(args: &[String]) -> Result<Vec<String>> {
    let named = parse(args)?;
    if named.kind != Kind::BareMetalHost {
        return Err(Error::Usage(format!(
            "this command acts on baremetalhosts.metal3.io, not {}",
            named.kind.plural()
        )));
    }
    Ok(named.names)
}

/// `TYPE/REST` with `TYPE` a kind bmhctl lists: the kind and `REST`.
fn type_prefix(arg: &str) -> Option<(Kind, &str)> {
    let (prefix, rest) = arg.split_once('/')?;
    Some((kind_of(prefix)?, rest))
}

/// When a name that names no host reads as a resource type bmhctl does not have (`pods`,
/// `pod/x`, `baremetalhots/x`), kubectl's words for it; `first` says whether `name` came first
/// (where kubectl expects the type) with no type before it.
pub fn not_a_type(name: &str, first: bool) -> Option<String> {
    let word = match name.split_once('/') {
        Some((prefix, _)) => prefix,
        None if first => name,
        None => return None,
    };
    let lower = word.to_ascii_lowercase();
    let known: Vec<String> = KINDS
        .iter()
        .flat_map(|f| {
            [f.singular, f.plural]
                .into_iter()
                .chain(f.short.iter().copied())
        })
        .flat_map(|form| [form.to_string(), format!("{form}.metal3.io")])
        .collect();
    let hint = crate::diagnostic::did_you_mean(&lower, known.iter().map(String::as_str))
        .filter(|_| word.len() >= 5 || word.contains('.'));
    if !OTHER_TYPES.contains(&lower.as_str()) && hint.is_none() {
        return None;
    }
    Some(match hint {
        Some(h) => format!("bmhctl doesn't have a resource type {word:?} (did you mean {h}?)"),
        None => format!(
            "bmhctl doesn't have a resource type {word:?}: it has baremetalhosts (bmh), \
             dataimages and bmceventsubscriptions (bes)"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn named(a: &[&str]) -> Named {
        parse(&args(a)).unwrap()
    }

    #[test]
    fn a_leading_type_in_any_of_its_forms_is_the_type() {
        for t in [
            "bmh",
            "BMH",
            "baremetalhost",
            "baremetalhosts",
            "baremetalhost.metal3.io",
            "baremetalhosts.metal3.io",
        ] {
            let n = named(&[t, "w0", "lab/w1"]);
            assert_eq!(n.kind, Kind::BareMetalHost, "{t}");
            assert!(n.typed);
            assert_eq!(n.names, ["w0", "lab/w1"]);
            assert_eq!(named(&[t]).names, Vec::<String>::new());
        }
        for t in [
            "dataimage",
            "DataImages",
            "dataimage.metal3.io",
            "dataimages.metal3.io",
        ] {
            assert_eq!(named(&[t]).kind, Kind::DataImage, "{t}");
        }
        assert_eq!(kind_of("di"), None);
        assert_eq!(kind_of("worker-0"), None);
        assert_eq!(named(&["bes", "s0"]).kind, Kind::BmcEventSubscription);
    }

    #[test]
    fn type_slash_name_is_the_type_and_other_prefixes_are_namespaces() {
        let n = named(&["baremetalhost.metal3.io/w0", "bmh/lab/w1", "lab/w2", "w3"]);
        assert_eq!(n.kind, Kind::BareMetalHost);
        assert_eq!(n.names, ["w0", "lab/w1", "lab/w2", "w3"]);
        assert!(n.typed);
        let n = named(&["lab/w2", "w3"]);
        assert!(!n.typed);
        assert_eq!(n.names, ["lab/w2", "w3"]);
        assert_eq!(named(&["dataimage.metal3.io/d0"]).kind, Kind::DataImage);
    }

    #[test]
    fn mixed_or_doubled_types_are_refused() {
        let e = parse(&args(&["bmh/w0", "dataimage/d0"])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "one resource type at a time: baremetalhosts.metal3.io and dataimages.metal3.io given"
        );
        assert_eq!(
            parse(&args(&["bmh", "bmh/w0"])).unwrap_err().to_string(),
            "there is no need to specify a resource type as a separate argument when passing \
             arguments in resource/name form (e.g. 'bmh NAME' or 'bmh/w0', not 'bmh bmh/w0')"
        );
        assert_eq!(
            host_names(&args(&["dataimages"])).unwrap_err().to_string(),
            "this command acts on baremetalhosts.metal3.io, not dataimages.metal3.io"
        );
    }

    #[test]
    fn other_types_are_named_as_types() {
        assert_eq!(
            not_a_type("pods", true).unwrap(),
            "bmhctl doesn't have a resource type \"pods\": it has baremetalhosts (bmh), \
             dataimages and bmceventsubscriptions (bes)"
        );
        assert_eq!(
            not_a_type("baremetalhots/w0", false).unwrap(),
            "bmhctl doesn't have a resource type \"baremetalhots\" (did you mean baremetalhost?)"
        );
        assert!(not_a_type("pod/x", false).is_some());
        // A host name that is no type, or a type word not where kubectl expects one.
        assert_eq!(not_a_type("worker-0", true), None);
        assert_eq!(not_a_type("bmh2", true), None);
        assert_eq!(not_a_type("pods", false), None);
        assert_eq!(not_a_type("lab/w0", false), None);
    }
}

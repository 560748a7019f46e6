//! Which hosts a command acts on: names (`NAME`, `NAMESPACE/NAME`, and kubectl's resource
//! forms, read by [`crate::resource_args`]) and a label selector.

use crate::error::{Error, Result};
use crate::selector::Selector;
use bmh_api::ObjectKey;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostSelection {
    names: Vec<String>,
    selector: Option<Selector>,
    namespace: Option<String>,
    /// The first name was given first with no type before it, where kubectl expects a type.
    first_untyped: bool,
}

pub struct Candidate<'a> {
    pub key: &'a ObjectKey,
    pub labels: &'a BTreeMap<String, String>,
}

impl HostSelection {
    /// The hosts `args` name (kubectl's resource forms read); a selector that does not parse
    /// is a usage error.
    pub fn new(args: &[String], selector: Option<&str>) -> Result<Self> {
        let selector = selector
            .map(Selector::parse)
            .transpose()
            .map_err(|e| Error::Usage(e.to_string()))?;
        let names = crate::resource_args::host_names(args)?;
        Ok(Self {
            first_untyped: args.first() == names.first(),
            names,
            selector,
            namespace: None,
        })
    }

    /// The same selection among the hosts of `namespace` only (kubectl's `-n`).
    pub fn in_namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.to_string());
        self
    }

    /// Whether no host is named (every host is a candidate).
    pub fn names_none(&self) -> bool {
        self.names.is_empty()
    }

    /// The indices of the selected hosts among `hosts`, in their order (`place` for messages).
    pub fn select<'a>(
        &self,
        hosts: impl IntoIterator<Item = Candidate<'a>>,
        place: &str,
    ) -> Result<Vec<usize>> {
        let all: Vec<Candidate> = hosts.into_iter().collect();
        // Indices into `all` of the hosts in scope (the namespace's, or every host).
        let scope: Vec<usize> = (0..all.len())
            .filter(|&i| {
                self.namespace
                    .as_deref()
                    .is_none_or(|ns| all[i].key.namespace == ns)
            })
            .collect();
        let hosts: Vec<&Candidate> = scope.iter().map(|&i| &all[i]).collect();
        let mut named: Vec<bool> = vec![self.names.is_empty(); hosts.len()];
        let mut unknown = Vec::new();
        for (n, name) in self.names.iter().enumerate() {
            match resolve(&hosts, name)? {
                Some(i) => named[i] = true,
                None => {
                    let first = n == 0 && self.first_untyped;
                    if let Some(said) = crate::resource_args::not_a_type(name, first) {
                        return Err(Error::Usage(said));
                    }
                    unknown.push(name.as_str())
                }
            }
        }
        if !unknown.is_empty() {
            let place = match &self.namespace {
                Some(ns) => format!("namespace {ns} of {place}"),
                None => place.to_string(),
            };
            return Err(Error::Usage(format!(
                "no BareMetalHost named {} in {place}",
                unknown.join(", ")
            )));
        }
        Ok(hosts
            .iter()
            .enumerate()
            .filter(|(i, h)| {
                named[*i] && self.selector.as_ref().is_none_or(|s| s.matches(h.labels))
            })
            .map(|(i, _)| scope[i])
            .collect())
    }

    /// [`select`](Self::select), where selecting nothing is a usage error.
    pub fn select_some<'a>(
        &self,
        hosts: impl IntoIterator<Item = Candidate<'a>>,
        place: &str,
    ) -> Result<Vec<usize>> {
        let hosts: Vec<Candidate> = hosts.into_iter().collect();
        if hosts.is_empty() {
            return Err(Error::Usage(format!("no BareMetalHost in {place}")));
        }
        let picked = self.select(hosts, place)?;
        if picked.is_empty() {
            return Err(Error::Usage(format!(
                "no BareMetalHost in {place} matches the selection"
            )));
        }
        Ok(picked)
    }
}

fn resolve(hosts: &[&Candidate], name: &str) -> Result<Option<usize>> {
    if let Some((ns, n)) = name.split_once('/') {
        return Ok(hosts
            .iter()
            .position(|h| h.key.namespace == ns && h.key.name == n));
    }
    let matching: Vec<usize> = (0..hosts.len())
        .filter(|&i| hosts[i].key.name == name)
        .collect();
    match matching.as_slice() {
        [] => Ok(None),
        [only] => Ok(Some(*only)),
        several => match several
            .iter()
            .find(|&&i| hosts[i].key.namespace == bmh_api::DEFAULT_NAMESPACE)
        {
            Some(&i) => Ok(Some(i)),
            None => Err(Error::Usage(format!(
                "several BareMetalHosts are named {name}: give NAMESPACE/NAME"
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Host(ObjectKey, BTreeMap<String, String>);

    fn host(ns: &str, name: &str, labels: &[(&str, &str)]) -> Host {
        Host(
            ObjectKey::new(ns, name),
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn lab() -> Vec<Host> {
        vec![
            host("default", "w0", &[("rack", "r1")]),
            host("lab", "w0", &[("rack", "r2")]),
            host("lab", "w1", &[("rack", "r1")]),
            host("a", "x", &[]),
            host("b", "x", &[]),
        ]
    }

    fn select(names: &[&str], selector: Option<&str>) -> Result<Vec<usize>> {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let hosts = lab();
        HostSelection::new(&names, selector)?.select(
            hosts.iter().map(|h| Candidate {
                key: &h.0,
                labels: &h.1,
            }),
            "the store",
        )
    }

    fn message(r: Result<Vec<usize>>) -> (i32, String) {
        let e = r.unwrap_err();
        (e.exit_code(), e.to_string())
    }

    #[test]
    fn no_names_select_every_host_the_selector_matches() {
        assert_eq!(select(&[], None).unwrap(), [0, 1, 2, 3, 4]);
        assert_eq!(select(&[], Some("rack=r1")).unwrap(), [0, 2]);
        assert_eq!(select(&[], Some("rack=r9")).unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn a_name_is_the_host_in_default_else_the_only_one_of_that_name() {
        assert_eq!(select(&["w0"], None).unwrap(), [0]);
        assert_eq!(select(&["lab/w0"], None).unwrap(), [1]);
        assert_eq!(select(&["w1"], None).unwrap(), [2]);
        assert_eq!(select(&["a/x", "b/x"], None).unwrap(), [3, 4]);
        // In the hosts' order, each once.
        assert_eq!(select(&["w1", "w0", "w1"], None).unwrap(), [0, 2]);
        // Names and the selector both hold.
        assert_eq!(select(&["w0", "lab/w1"], Some("rack=r1")).unwrap(), [0, 2]);
        assert_eq!(
            select(&["lab/w0"], Some("rack=r1")).unwrap(),
            Vec::<usize>::new()
        );
    }

    #[test]
    fn an_unknown_or_ambiguous_name_is_a_usage_error() {
        let e = message(select(&["nope", "w0", "lab/nope"], None));
        assert_eq!(
            e,
            (
                2,
                "no BareMetalHost named nope, lab/nope in the store".into()
            )
        );
        assert_eq!(
            message(select(&["x"], None)),
            (
                2,
                "several BareMetalHosts are named x: give NAMESPACE/NAME".into()
            )
        );
        assert_eq!(message(select(&[], Some("a in (b"))).0, 2);
    }

    #[test]
    fn a_namespace_narrows_the_candidates_and_where_names_resolve() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let hosts = lab();
        let pick = |n: &[&str], ns: &str| {
            HostSelection::new(&names(n), None)
                .unwrap()
                .in_namespace(ns)
                .select(
                    hosts.iter().map(|h| Candidate {
                        key: &h.0,
                        labels: &h.1,
                    }),
                    "the store",
                )
        };
        assert_eq!(pick(&[], "lab").unwrap(), [1, 2]);
        assert_eq!(pick(&["w0"], "lab").unwrap(), [1]);
        assert_eq!(pick(&["x"], "b").unwrap(), [4]);
        assert_eq!(
            message(pick(&["w1"], "default")),
            (
                2,
                "no BareMetalHost named w1 in namespace default of the store".into()
            )
        );
    }

    #[test]
    fn select_some_refuses_an_empty_selection() {
        let hosts = lab();
        let candidates = || {
            hosts.iter().map(|h| Candidate {
                key: &h.0,
                labels: &h.1,
            })
        };
        let sel = HostSelection::new(&[], Some("rack=r9")).unwrap();
        assert_eq!(
            sel.select_some(candidates(), "the given files")
                .unwrap_err()
                .to_string(),
            "no BareMetalHost in the given files matches the selection"
        );
        assert_eq!(
            HostSelection::default()
                .select_some(std::iter::empty(), "the store")
                .unwrap_err()
                .to_string(),
            "no BareMetalHost in the store"
        );
    }
}

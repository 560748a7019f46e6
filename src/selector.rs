//! Kubernetes label selectors, as `kubectl -l` takes them.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector(Vec<Requirement>);

/// A part of a selector that Kubernetes would refuse, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid selector {requirement:?}: {problem}")]
pub struct SelectorError {
    pub requirement: String,
    pub problem: String,
}

impl Selector {
    /// Parses `text` as apimachinery's `labels.Parse` does, refusing what it refuses (a key that
    /// is no qualified name, a value that is no label value, an unknown operator).
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        let mut reqs = Vec::new();
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            reqs.push(parse_requirement(part).map_err(|problem| SelectorError {
                requirement: part.to_string(),
                problem,
            })?);
        }
        Ok(Selector(reqs))
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => labels.get(k) == Some(v),
            Requirement::NotEquals(k, v) => labels.get(k) != Some(v),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::NotExists(k) => !labels.contains_key(k),
            Requirement::In(k, vs) => labels.get(k).is_some_and(|v| vs.contains(v)),
            Requirement::NotIn(k, vs) => labels.get(k).is_none_or(|v| !vs.contains(v)),
        })
    }
}

fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The key, or what is wrong with it (a label key is a qualified name).
fn key(k: &str) -> Result<String, String> {
    match crate::validate::object_meta::qualified_name_errors(k).first() {
        None => Ok(k.to_string()),
        Some(e) => Err(format!("key {k:?}: {e}")),
    }
}

fn value(v: &str) -> Result<String, String> {
    match crate::validate::object_meta::label_value_errors(v).first() {
        None => Ok(v.to_string()),
        Some(e) => Err(format!("value {v:?}: {e}")),
    }
}

fn parse_set(rest: &str) -> Result<Vec<String>, String> {
    let rest = rest.trim();
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("values {rest:?}: a set is given in parentheses: (v1,v2)"))?;
    inner.split(',').map(|v| value(v.trim())).collect()
}

const OPERATORS: &str = "=, ==, !=, in, notin, or KEY alone and !KEY for existence";

fn parse_requirement(part: &str) -> Result<Requirement, String> {
    if let Some(k) = part.strip_prefix('!') {
        return Ok(Requirement::NotExists(key(k.trim())?));
    }
    for (op, neg) in [("!=", true), ("==", false), ("=", false)] {
        if let Some((k, v)) = part.split_once(op) {
            let (k, v) = (key(k.trim())?, value(v.trim())?);
            return Ok(if neg {
                Requirement::NotEquals(k, v)
            } else {
                Requirement::Equals(k, v)
            });
        }
    }
    let mut words = part.splitn(2, char::is_whitespace);
    let k = words.next().unwrap_or_default().trim();
    let Some(rest) = words.next().map(str::trim) else {
        return Ok(Requirement::Exists(key(k)?));
    };
    let k = key(k)?;
    let op_end = rest.find(|c: char| c == '(' || c.is_whitespace());
    let (op, set) = rest.split_at(op_end.unwrap_or(rest.len()));
    match op {
        "notin" => Ok(Requirement::NotIn(k, parse_set(set)?)),
        "in" => Ok(Requirement::In(k, parse_set(set)?)),
        _ => Err(format!("operator {op:?} is none of {OPERATORS}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn equality_and_existence_requirements_all_must_hold() {
        let s = Selector::parse("rack=r1,role!=spare,lab,!broken").unwrap();
        assert!(s.matches(&labels(&[("rack", "r1"), ("lab", "")])));
        assert!(!s.matches(&labels(&[("rack", "r1"), ("lab", ""), ("broken", "y")])));
        assert!(!s.matches(&labels(&[("rack", "r1"), ("role", "spare"), ("lab", "")])));
        assert!(!s.matches(&labels(&[("rack", "r2"), ("lab", "")])));
    }

    #[test]
    fn set_requirements() {
        let s = Selector::parse("rack in (r1, r2),env notin (prod)").unwrap();
        assert!(s.matches(&labels(&[("rack", "r2")])));
        assert!(!s.matches(&labels(&[("rack", "r3")])));
        assert!(!s.matches(&labels(&[("rack", "r1"), ("env", "prod")])));
    }

    fn refusal(text: &str) -> String {
        Selector::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn malformed_selectors_are_refused() {
        for bad in [
            "a=b=c",
            "in (x)",
            "a in x",
            "=b",
            "a b",
            "a in (b",
            "rack=r1,x=-y",
        ] {
            assert!(Selector::parse(bad).is_err(), "{bad}");
        }
    }

    /// Kubernetes' rules for keys and values, the bad part named with apimachinery's words.
    #[test]
    fn what_kubernetes_refuses_is_named() {
        assert_eq!(
            refusal("rack=-bad-"),
            "invalid selector \"rack=-bad-\": value \"-bad-\": a valid label must be an empty \
             string or consist of alphanumeric characters, '-', '_' or '.', and must start and \
             end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', \
             regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        );
        assert_eq!(
            refusal("rack=r1, -rack in (r1)"),
            "invalid selector \"-rack in (r1)\": key \"-rack\": name part must consist of \
             alphanumeric characters, '-', '_' or '.', and must start and end with an \
             alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used \
             for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
        assert_eq!(
            refusal("rack ~ r1"),
            "invalid selector \"rack ~ r1\": operator \"~\" is none of =, ==, !=, in, notin, or \
             KEY alone and !KEY for existence"
        );
        assert_eq!(
            refusal("rack in r1"),
            "invalid selector \"rack in r1\": values \"r1\": a set is given in parentheses: \
             (v1,v2)"
        );
        // What Kubernetes takes: an empty value, a prefixed key, a set without spaces.
        let s = Selector::parse("example.com/rack=,role in(a,b)").unwrap();
        assert!(s.matches(&labels(&[("example.com/rack", ""), ("role", "b")])));
    }
}

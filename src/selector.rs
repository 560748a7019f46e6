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

/// A part of a selector that is no requirement kubectl knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid label selector requirement {requirement:?}")]
pub struct SelectorError {
    pub requirement: String,
}

impl Selector {
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        let mut reqs = Vec::new();
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            reqs.push(parse_requirement(part).ok_or_else(|| SelectorError {
                requirement: part.to_string(),
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

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
}

fn valid_value(v: &str) -> bool {
    v.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

fn parse_set(rest: &str) -> Option<Vec<String>> {
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    let values: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).collect();
    values.iter().all(|v| valid_value(v)).then_some(values)
}

fn parse_requirement(part: &str) -> Option<Requirement> {
    if let Some(k) = part.strip_prefix('!') {
        let k = k.trim();
        return valid_key(k).then(|| Requirement::NotExists(k.into()));
    }
    for (op, neg) in [("!=", true), ("==", false), ("=", false)] {
        if let Some((k, v)) = part.split_once(op) {
            let (k, v) = (k.trim(), v.trim());
            if !valid_key(k) || !valid_value(v) {
                return None;
            }
            return Some(if neg {
                Requirement::NotEquals(k.into(), v.into())
            } else {
                Requirement::Equals(k.into(), v.into())
            });
        }
    }
    let mut words = part.splitn(2, char::is_whitespace);
    let key = words.next()?.trim();
    match words.next().map(str::trim) {
        None => valid_key(key).then(|| Requirement::Exists(key.into())),
        Some(rest) => match (rest.strip_prefix("notin"), rest.strip_prefix("in")) {
            (Some(set), _) => Some(Requirement::NotIn(key.into(), parse_set(set)?)),
            (None, Some(set)) => Some(Requirement::In(key.into(), parse_set(set)?)),
            (None, None) => None,
        },
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

    #[test]
    fn malformed_selectors_are_refused() {
        for bad in ["a=b=c", "in (x)", "a in x", "=b", "a b"] {
            assert!(Selector::parse(bad).is_err(), "{bad}");
        }
    }
}

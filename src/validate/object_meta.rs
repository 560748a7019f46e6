//! The API server's rules for the labels and annotations of every object (apimachinery's
//! `ValidateLabels` and `ValidateAnnotations`), with its messages. Pure: entries in, broken
//! rules out; the loader says where they are.

/// Which map of `metadata` a problem is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaMap {
    Labels,
    Annotations,
}

impl MetaMap {
    /// The field name under `metadata`.
    pub fn field(self) -> &'static str {
        match self {
            MetaMap::Labels => "labels",
            MetaMap::Annotations => "annotations",
        }
    }
}

/// What in the map is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetaPart {
    /// The key of this entry.
    Key(String),
    /// The value of the entry of this key.
    Value(String),
    /// The map as a whole (the annotations' total size).
    Whole,
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaProblem {
    pub map: MetaMap,
    pub part: MetaPart,
    pub message: String,
}

/// The most the keys and values of an object's annotations may hold together, in bytes.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

const LABEL_VALUE_MAX_LENGTH: usize = 63;
const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', \
                                      and must start and end with an alphanumeric character";
const LABEL_VALUE_ERR_MSG: &str = "a valid label must be an empty string or consist of \
                                   alphanumeric characters, '-', '_' or '.', and must start and \
                                   end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower \
                                         case alphanumeric characters, '-' or '.', and must start \
                                         and end with an alphanumeric character";

/// apimachinery's `RegexError`, spacing and all, so that its texts can be searched for.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    let examples = examples.join(" or ");
    format!("{msg} (e.g. {examples}regex used for validation is '{fmt}')")
}

fn max_len_error(max: usize) -> String {
    format!("must be no more than {max} characters")
}

fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    let edge = |c: u8| c.is_ascii_alphanumeric();
    !b.is_empty()
        && edge(b[0])
        && edge(b[b.len() - 1])
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn is_dns1123_subdomain(s: &str) -> bool {
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        let edge = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty()
            && edge(b[0])
            && edge(b[b.len() - 1])
            && b.iter().all(|&c| edge(c) || c == b'-')
    };
    s.split('.').all(label_ok)
}

/// apimachinery's `IsDNS1123Subdomain`.
fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !is_dns1123_subdomain(s) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// apimachinery's `IsQualifiedName`: an optional DNS subdomain prefix and `/`, then a name.
pub fn qualified_name_errors(value: &str) -> Vec<String> {
    let examples = ["MyName", "my.name", "123-abc"];
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. \
                 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, &examples)
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(QUALIFIED_NAME_MAX_LENGTH)
        ));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, &examples)
        ));
    }
    errs
}

/// apimachinery's `IsValidLabelValue`.
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(format!(
            "{} (it has {})",
            max_len_error(LABEL_VALUE_MAX_LENGTH),
            value.len()
        ));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR_MSG,
            &format!("({QUALIFIED_NAME_FMT})?"),
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `errs` about the key or value `part` as one problem, when there are any.
fn problem(map: MetaMap, part: MetaPart, errs: Vec<String>) -> Option<MetaProblem> {
    let what = if matches!(part, MetaPart::Value(_)) {
        "value"
    } else {
        "key"
    };
    let message = format!("invalid {what}: {}", errs.join("; "));
    (!errs.is_empty()).then_some(MetaProblem { map, part, message })
}

/// apimachinery's `ValidateLabels`: keys are qualified names, values label values.
pub fn label_problems<'a>(
    labels: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<MetaProblem> {
    let mut out = Vec::new();
    for (k, v) in labels {
        let key = qualified_name_errors(k);
        out.extend(problem(MetaMap::Labels, MetaPart::Key(k.into()), key));
        let value = label_value_errors(v);
        out.extend(problem(MetaMap::Labels, MetaPart::Value(k.into()), value));
    }
    out
}

/// apimachinery's `ValidateAnnotations`: keys are qualified names whatever their case, and the
/// keys and values together hold at most [`TOTAL_ANNOTATION_SIZE_LIMIT`] bytes.
pub fn annotation_problems<'a>(
    annotations: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<MetaProblem> {
    let mut out = Vec::new();
    let mut total = 0usize;
    for (k, v) in annotations {
        total += k.len() + v.len();
        let key = qualified_name_errors(&k.to_lowercase());
        out.extend(problem(MetaMap::Annotations, MetaPart::Key(k.into()), key));
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        out.push(MetaProblem {
            map: MetaMap::Annotations,
            part: MetaPart::Whole,
            message: format!(
                "too long: the keys and values hold {total} bytes, more than the \
                 {TOTAL_ANNOTATION_SIZE_LIMIT} bytes (256 KiB) an object's annotations may hold"
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Vec<MetaProblem> {
        label_problems(pairs.iter().copied())
    }

    #[test]
    fn label_keys_are_qualified_names() {
        for ok in [
            "app",
            "a",
            "example.com/MyName",
            "k8s.io/a_b-c.d",
            "UPPER",
            &"a".repeat(63),
            &format!("{}/x", "a".repeat(253)),
        ] {
            assert_eq!(labels(&[(ok, "")]), [], "{ok}");
        }
        for bad in [
            "",
            "bad key",
            "-a",
            "a-",
            "a/b/c",
            "/a",
            "a/",
            "Example.com/a",
            "ex_ample.com/a",
            &"a".repeat(64),
            &format!("{}/x", "a".repeat(254)),
        ] {
            let p = labels(&[(bad, "")]);
            assert_eq!(p.len(), 1, "{bad:?}: {p:?}");
            assert_eq!(p[0].part, MetaPart::Key(bad.to_string()));
        }
    }

    #[test]
    fn key_messages_are_apimachinerys() {
        assert_eq!(
            qualified_name_errors("bad key/with/too/many!"),
            [
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and \
              must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  \
              or '123-abc', regex used for validation is \
              '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix \
              and '/' (e.g. 'example.com/MyName')"
            ]
        );
        assert_eq!(
            qualified_name_errors("/x"),
            ["prefix part must be non-empty"]
        );
        assert_eq!(
            qualified_name_errors(&"a".repeat(64)),
            ["name part must be no more than 63 characters"]
        );
        let e = qualified_name_errors("EX.com/");
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(e[0].starts_with("prefix part a lowercase RFC 1123 subdomain"));
        assert_eq!(e[1], "name part must be non-empty");
    }

    #[test]
    fn label_values_are_short_and_plain_or_empty() {
        for ok in ["", "v", "my_value", "1.2.3", &"v".repeat(63)] {
            assert_eq!(labels(&[("k", ok)]), [], "{ok}");
        }
        let p = labels(&[("k", "v v")]);
        assert_eq!(p[0].part, MetaPart::Value("k".into()));
        assert!(
            p[0].message
                .starts_with("invalid value: a valid label must be an empty string")
        );
        let p = labels(&[("k", &"v".repeat(100_000))]);
        assert_eq!(
            p[0].message,
            "invalid value: must be no more than 63 characters (it has 100000)"
        );
        // Both rules, in one problem.
        let p = labels(&[("k", &format!("-{}", "v".repeat(70)))]);
        assert_eq!(p.len(), 1);
        assert!(p[0].message.contains("; a valid label"), "{}", p[0].message);
    }

    #[test]
    fn annotations_keys_ignore_case_and_values_are_free_but_sized() {
        let long = "x".repeat(100_000);
        let ok = [("Example.COM/Any", "v v !"), ("a", long.as_str())];
        assert_eq!(annotation_problems(ok), []);
        let p = annotation_problems([("bad key", "")]);
        assert_eq!(p[0].part, MetaPart::Key("bad key".into()));
        let big = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT);
        assert_eq!(annotation_problems(std::iter::empty()), []);
        // Exactly at the limit, then one byte over (keys count too).
        assert_eq!(annotation_problems([("a", &big[1..])]), []);
        let p = annotation_problems([("ab", &big[1..])]);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].part, MetaPart::Whole);
        assert!(p[0].message.contains("262145 bytes"), "{}", p[0].message);
    }
}

//! kubectl's JSONPath: the templates of `get -o jsonpath=...` (`{.a.b}`, `{range ...}{end}`,
//! `{"\n"}`), the columns of `-o custom-columns=...` and the key of `--sort-by`. The
//! expressions themselves are RFC 9535 JSONPath, evaluated by serde_json_path; the template
//! around them is kubectl's own.

use serde_json::Value;
use serde_json_path::JsonPath;
use std::cmp::Ordering;

/// One expression: kubectl's `.a.b[*]`, `{.a.b}` or `$.a.b`.
#[derive(Debug, Clone)]
pub struct Path(JsonPath);

impl Path {
    pub fn parse(text: &str) -> Result<Self, String> {
        let inner = text.trim();
        let inner = match inner.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
            Some(t) => t.trim(),
            None => inner,
        };
        let rfc = rfc9535(inner);
        JsonPath::parse(&rfc)
            .map(Path)
            .map_err(|e| format!("invalid JSONPath {text:?}: {e}"))
    }

    /// The values it finds in `v` (none for a missing key, as kubectl's `get` allows).
    pub fn values<'v>(&self, v: &'v Value) -> Vec<&'v Value> {
        self.0.query(v).all()
    }
}

/// kubectl's spelling as RFC 9535's: `$` first, and a member name RFC 9535's shorthand does not
/// allow (`.app-name`) in brackets.
fn rfc9535(expr: &str) -> String {
    let rest = expr
        .strip_prefix('$')
        .or_else(|| expr.strip_prefix('@'))
        .unwrap_or(expr);
    let mut out = String::from("$");
    let mut chars = rest.chars().peekable();
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    while let Some(c) = chars.next() {
        match (c, quote) {
            (q, Some(open)) => {
                out.push(q);
                if q == '\\' {
                    out.extend(chars.next());
                } else if q == open {
                    quote = None;
                }
            }
            ('\'' | '"', None) => {
                quote = Some(c);
                out.push(c);
            }
            ('[', None) => {
                depth += 1;
                out.push(c);
            }
            (']', None) => {
                depth = depth.saturating_sub(1);
                out.push(c);
            }
            ('.', None) if depth == 0 && chars.peek().is_some_and(|n| *n != '.' && *n != '[') => {
                let mut name = String::new();
                while let Some(&n) = chars.peek() {
                    if n == '.' || n == '[' {
                        break;
                    }
                    name.push(n);
                    chars.next();
                }
                let plain = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if plain || name == "*" {
                    out.push('.');
                    out.push_str(&name);
                } else {
                    out.push_str(&format!(
                        "['{}']",
                        name.replace('\\', "\\\\").replace('\'', "\\'")
                    ));
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// A value as kubectl prints it: a string as it is, anything else as JSON.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A parsed `-o jsonpath=` template.
#[derive(Debug)]
pub struct Template(Vec<Node>);

#[derive(Debug)]
enum Node {
    Text(String),
    Path(Path),
    Range(Path, Vec<Node>),
}

impl Template {
    pub fn parse(template: &str) -> Result<Self, String> {
        // The nodes of the ranges open, innermost last, each with its expression.
        let mut open: Vec<(Option<Path>, Vec<Node>)> = vec![(None, Vec::new())];
        let mut rest = template;
        while !rest.is_empty() {
            let Some(start) = rest.find('{') else {
                push(&mut open, Node::Text(rest.to_string()));
                break;
            };
            if start > 0 {
                push(&mut open, Node::Text(rest[..start].to_string()));
            }
            let end = closing(&rest[start..])
                .ok_or_else(|| format!("unclosed action in template {template:?}"))?;
            let action = rest[start + 1..start + end].trim();
            rest = &rest[start + end + 1..];
            if let Some(expr) = action.strip_prefix("range ") {
                open.push((Some(Path::parse(expr)?), Vec::new()));
            } else if action == "end" {
                if open.len() < 2 {
                    return Err(format!(
                        "{{end}} without {{range}} in template {template:?}"
                    ));
                }
                let (path, nodes) = open.pop().expect("a range is open");
                push(&mut open, Node::Range(path.expect("a range's path"), nodes));
            } else if action.starts_with('"') || action.starts_with('\'') {
                push(&mut open, Node::Text(unquote(action)?));
            } else if action.is_empty() {
                return Err(format!("empty action {{}} in template {template:?}"));
            } else {
                push(&mut open, Node::Path(Path::parse(action)?));
            }
        }
        if open.len() > 1 {
            return Err(format!(
                "{{range}} without {{end}} in template {template:?}"
            ));
        }
        Ok(Template(open.pop().expect("the top level").1))
    }

    pub fn render(&self, v: &Value) -> String {
        let mut out = String::new();
        render(&self.0, v, &mut out);
        out
    }
}

fn push(open: &mut [(Option<Path>, Vec<Node>)], node: Node) {
    open.last_mut().expect("the top level").1.push(node);
}

/// Where the `}` closing the action `text` starts with is (quotes and brackets skipped).
fn closing(text: &str) -> Option<usize> {
    let mut quote = None;
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '}' => return Some(i),
            None => {}
        }
    }
    None
}

/// A quoted literal, with kubectl's (Go's) escapes: `\n`, `\t`, `\r`, `\\`, `\"`.
fn unquote(action: &str) -> Result<String, String> {
    let q = action.chars().next().expect("a quote");
    let body = action
        .strip_prefix(q)
        .and_then(|a| a.strip_suffix(q))
        .ok_or_else(|| format!("unterminated string {action}"))?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(c @ ('\\' | '"' | '\'')) => out.push(c),
            Some(c) => return Err(format!("unknown escape \\{c} in {action}")),
            None => return Err(format!("unterminated string {action}")),
        }
    }
    Ok(out)
}

fn render(nodes: &[Node], v: &Value, out: &mut String) {
    for n in nodes {
        match n {
            Node::Text(t) => out.push_str(t),
            Node::Path(p) => {
                let found: Vec<String> = p.values(v).into_iter().map(text).collect();
                out.push_str(&found.join(" "));
            }
            Node::Range(p, body) => match p.values(v)[..] {
                // A range over one array is over its items, as kubectl's.
                [Value::Array(items)] => items.iter().for_each(|i| render(body, i, out)),
                ref found => found.iter().for_each(|i| render(body, i, out)),
            },
        }
    }
}

/// `-o custom-columns=HEADER:PATH,...`: the headers and their paths.
pub fn custom_columns(spec: &str) -> Result<Vec<(String, Path)>, String> {
    if spec.trim().is_empty() {
        return Err("custom-columns format specified but no custom columns given".into());
    }
    spec.split(',')
        .map(|col| {
            let (header, path) = col.split_once(':').ok_or_else(|| {
                format!("unexpected custom-columns spec: {col}, expected <header>:<json-path-expr>")
            })?;
            Ok((header.to_string(), Path::parse(path)?))
        })
        .collect()
}

/// One custom column of `v`: its values joined with `,`, `<none>` when there are none.
pub fn column(path: &Path, v: &Value) -> String {
    let found = path.values(v);
    if found.is_empty() {
        return "<none>".into();
    }
    found.into_iter().map(text).collect::<Vec<_>>().join(",")
}

/// How `--sort-by` orders two objects by their values at `path`: missing first, numbers by
/// value, strings (RFC 3339 times too) by text.
pub fn compare(path: &Path, a: &Value, b: &Value) -> Ordering {
    let key = |v| path.values(v).into_iter().next();
    match (key(a), key(b)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(Value::Number(x)), Some(Value::Number(y))) => x
            .as_f64()
            .partial_cmp(&y.as_f64())
            .unwrap_or(Ordering::Equal),
        (Some(x), Some(y)) => text(x).cmp(&text(y)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn list() -> Value {
        json!({"kind": "List", "items": [
            {"metadata": {"name": "w0", "labels": {"app-name": "x"}}, "status": {"n": 10}},
            {"metadata": {"name": "w1"}, "status": {"n": 9}},
        ]})
    }

    #[test]
    fn templates_print_as_kubectl() {
        let t = |s: &str| Template::parse(s).unwrap().render(&list());
        assert_eq!(t("{.items[*].metadata.name}"), "w0 w1");
        assert_eq!(
            t(r#"{range .items[*]}{.metadata.name}{"\t"}{.status.n}{"\n"}{end}"#),
            "w0\t10\nw1\t9\n"
        );
        assert_eq!(t("names: {.items[0].metadata.name}!"), "names: w0!");
        assert_eq!(t("{.items[0].metadata.labels}"), r#"{"app-name":"x"}"#);
        assert_eq!(t("{.items[0].metadata.labels.app-name}"), "x");
        assert_eq!(t("{.items[*].missing}"), "");
        assert_eq!(t("{range .items}{.metadata.name},{end}"), "w0,w1,");
        assert_eq!(t("{$.kind}"), "List");
    }

    #[test]
    fn bad_templates_say_what_is_wrong() {
        let e = |s: &str| Template::parse(s).unwrap_err();
        assert_eq!(e("{.a"), "unclosed action in template \"{.a\"");
        assert_eq!(e("{end}"), "{end} without {range} in template \"{end}\"");
        assert_eq!(
            e("{range .items[*]}{.a}"),
            "{range} without {end} in template \"{range .items[*]}{.a}\""
        );
        assert!(
            e("{.items[}").starts_with("invalid JSONPath \".items[\": "),
            "{}",
            e("{.items[}")
        );
    }

    #[test]
    fn custom_columns_and_sort_keys() {
        let cols = custom_columns("NAME:.metadata.name,N:{.status.n},L:.metadata.labels").unwrap();
        let items = list()["items"].as_array().unwrap().clone();
        let row: Vec<String> = cols.iter().map(|(_, p)| column(p, &items[1])).collect();
        assert_eq!(row, ["w1", "9", "<none>"]);
        assert_eq!(
            custom_columns("NAME").unwrap_err(),
            "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"
        );
        let n = Path::parse(".status.n").unwrap();
        assert_eq!(compare(&n, &items[0], &items[1]), Ordering::Greater);
        let missing = json!({});
        assert_eq!(compare(&n, &missing, &items[1]), Ordering::Less);
        let name = Path::parse("{.metadata.name}").unwrap();
        assert_eq!(compare(&name, &items[0], &items[1]), Ordering::Less);
    }
}

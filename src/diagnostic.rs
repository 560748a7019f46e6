//! A problem with the user's input, located: file, object, field and message.

use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a problem is: a file, and a place in it when there is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Position {
    pub file: PathBuf,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub at: Option<LineColumn>,
}

/// 1-based, as editors count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LineColumn {
    pub line: usize,
    pub column: usize,
}

impl Position {
    pub fn new(file: impl Into<PathBuf>, line: usize, column: usize) -> Self {
        Self {
            file: file.into(),
            at: Some(LineColumn { line, column }),
        }
    }

    pub fn file(file: impl Into<PathBuf>) -> Self {
        Self {
            file: file.into(),
            at: None,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some(LineColumn { line, column }) => {
                write!(f, "{}:{line}:{column}", self.file.display())
            }
            None => write!(f, "{}", self.file.display()),
        }
    }
}

/// One problem. Every part but the message is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    /// The object, as `Kind namespace/name` (`BareMetalHost default/worker-0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The field, as a path (`spec.bmc.address`, `spec.rootDeviceHints.minSizeGigabytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub message: String,
}

impl Diagnostic {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            ..Self::default()
        }
    }

    pub fn at(mut self, position: Position) -> Self {
        self.position = Some(position);
        self
    }

    pub fn in_file(self, file: impl Into<PathBuf>) -> Self {
        self.at(Position::file(file))
    }

    pub fn object(mut self, kind: &str, key: impl fmt::Display) -> Self {
        self.object = Some(format!("{kind} {key}"));
        self
    }

    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// A YAML parser's error in `path`, at its position: the message alone (a snippet could
    /// quote a secret), without the " at line L column C" serde-saphyr appends.
    pub fn of_yaml(path: &Path, e: &serde_saphyr::Error) -> Self {
        let text = e.without_snippet().to_string();
        let message = text.rfind(" at line ").map_or(&*text, |i| &text[..i]);
        let at = match e.location() {
            Some(l) => Position::new(path, l.line() as usize, l.column() as usize),
            None => Position::file(path),
        };
        Self::new(message).at(at)
    }
}

/// A message alone: no position, object or field known.
impl From<String> for Diagnostic {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for Diagnostic {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.position {
            write!(f, "{p}: ")?;
        }
        if let Some(o) = &self.object {
            write!(f, "{o}: ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// Every problem found in one go (a user fixes them all before the next try), one per line.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Self(vec![d])
    }
}

impl From<Vec<Diagnostic>> for Diagnostics {
    fn from(v: Vec<Diagnostic>) -> Self {
        Self(v)
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}

/// The closest of `candidates` to `word` (another case, or a typo away).
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = if c.to_ascii_lowercase() == lower {
            0
        } else {
            strsim::damerau_levenshtein(&lower, &c.to_ascii_lowercase())
        };
        if d <= (word.len() / 3).clamp(1, 3) && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_names_position_object_field_and_message_in_that_order() {
        let d = Diagnostic::new("must be a boolean")
            .at(Position::new("hosts.yaml", 12, 11))
            .object("BareMetalHost", "default/worker-0")
            .field("spec.online");
        assert_eq!(
            d.to_string(),
            "hosts.yaml:12:11: BareMetalHost default/worker-0: spec.online: must be a boolean"
        );
    }

    #[test]
    fn missing_parts_are_left_out() {
        assert_eq!(Diagnostic::new("no hosts").to_string(), "no hosts");
        assert_eq!(
            Diagnostic::new("is not a YAML file")
                .in_file("a.txt")
                .to_string(),
            "a.txt: is not a YAML file"
        );
        assert_eq!(
            Diagnostic::new("unknown host")
                .object("BareMetalHost", "default/x")
                .to_string(),
            "BareMetalHost default/x: unknown host"
        );
    }

    #[test]
    fn several_are_one_per_line() {
        let ds = Diagnostics(vec![Diagnostic::new("a"), Diagnostic::new("b")]);
        assert_eq!(ds.to_string(), "a\nb");
    }

    #[test]
    fn json_has_only_the_parts_there_are() {
        let d = Diagnostic::new("required")
            .at(Position::new("h.yaml", 3, 5))
            .field("spec.bmc.address");
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            serde_json::json!({
                "position": {"file": "h.yaml", "line": 3, "column": 5},
                "field": "spec.bmc.address",
                "message": "required"
            })
        );
    }
}

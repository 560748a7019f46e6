//! The one error type of the CLI, the exit code each kind maps to, and the one renderer.

use crate::diagnostic::{Diagnostic, Diagnostics};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

/// A cause carried along for the renderer's `: cause` chain.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user's input can't be used: every problem found, located. Exit 2.
    #[error("{0}")]
    Invalid(Diagnostics),
    /// The command line or an environment setting is wrong. Exit 2.
    #[error("{0}")]
    Usage(String),
    /// Another bmhctl holds the files, the store or its lease. Exit 3: safe to retry.
    #[error("{0}")]
    Conflict(String),
    /// Reading or writing `path` failed. Exit 4.
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The provisioner `name` can't be loaded or started. Exit 4.
    #[error("cannot load provisioner plugin {name:?}: {reason}{hint}")]
    Provisioner {
        name: String,
        /// What the loader met (its `LoadError`: this error type names nothing above it).
        reason: Cause,
        /// What to try (` (set ...)`) when the plugin file is missing or it has no Ironic to
        /// use, else empty.
        hint: String,
    },
    /// The command ran, but its goal was not met. Exit 1.
    #[error(transparent)]
    Unfinished(#[from] Unfinished),
    /// Something that cannot happen did. Exit 70 (`EX_SOFTWARE`).
    #[error("{what}")]
    Internal {
        what: String,
        #[source]
        source: Option<Cause>,
    },
    /// Ctrl-C or SIGTERM. Exit 130.
    #[error("interrupted")]
    Interrupted,
}

/// What was not reached: the [`Error::Unfinished`] kinds.
#[derive(Debug, thiserror::Error)]
pub enum Unfinished {
    /// Hosts did not reach their goal (each one's reason is in the printed result).
    #[error("{failed} of {total} hosts did not reach their goal")]
    Hosts { failed: usize, total: usize },
    /// `wait` gave up before the hosts reached the state.
    #[error("timed out after {} waiting for {what}: {}", humantime::format_duration(*.after), .hosts.join(", "))]
    TimedOut {
        after: Duration,
        what: String,
        hosts: Vec<String>,
    },
    /// `wait`: hosts resting at their goal, which can never meet what is waited for (a line
    /// each).
    #[error("{}", .0.join("\n"))]
    Never(Vec<String>),
    /// Some store objects could not be read: the output shows the others.
    #[error("{count} store {} could not be read; the output is partial", if *.count == 1 { "object" } else { "objects" })]
    Unreadable { count: usize },
    /// The provisioner's backend did not answer its start-up probe within `--ironic-wait`.
    #[error("the provisioner could not be reached for {}: {error}", humantime::format_duration(*.after))]
    Unreachable { after: Duration, error: String },
    /// The provisioner's backend answered its start-up probe with a refusal no retry changes.
    #[error("the provisioner cannot be used: {error}")]
    Unusable { error: String },
    /// `plugin check` found the plugin wanting.
    #[error("plugin check FAILED: {0}")]
    PluginCheck(String),
    /// A save failed during a run: the run ended there.
    #[error("cannot save: {}", .0.chain())]
    Save(Box<Error>),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    pub fn invalid(d: impl Into<Diagnostic>) -> Self {
        Self::Invalid(d.into().into())
    }

    /// `Ok` when nothing was found, else every problem found.
    pub fn invalid_if_any(found: Vec<Diagnostic>) -> Result<()> {
        let none = found.is_empty();
        none.then_some(())
            .ok_or_else(|| Self::Invalid(found.into()))
    }

    /// An encoder failed on a value bmhctl made itself.
    pub fn internal(what: impl Into<String>, source: impl Into<Cause>) -> Self {
        Self::Internal {
            what: what.into(),
            source: Some(source.into()),
        }
    }

    /// A broken invariant, with no cause to show.
    pub fn bug(what: impl Into<String>) -> Self {
        Self::Internal {
            what: what.into(),
            source: None,
        }
    }

    /// The process exit code: derived from the kind of failure only, the same in every command.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Unfinished(_) => 1,
            Error::Invalid(_) | Error::Usage(_) => 2,
            Error::Conflict(_) => 3,
            Error::Io { .. } | Error::Provisioner { .. } => 4,
            Error::Internal { .. } => 70,
            Error::Interrupted => 130,
        }
    }

    pub fn render(&self) -> String {
        format!("error: {}", self.chain())
    }

    /// The error as JSON problems, for a command whose `-o json` reports its errors.
    pub fn problems_json(&self) -> Vec<serde_json::Value> {
        match self {
            Error::Invalid(diags) => diags
                .0
                .iter()
                .map(|d| {
                    let mut v = serde_json::json!({ "message": d.message });
                    if let Some(p) = &d.position {
                        v["position"] = p.to_string().into();
                        v["location"] = serde_json::to_value(p).unwrap_or_default();
                    }
                    if let Some(o) = &d.object {
                        v["object"] = o.as_str().into();
                    }
                    if let Some(f) = &d.field {
                        v["field"] = f.as_str().into();
                    }
                    v
                })
                .collect(),
            _ => vec![serde_json::json!({ "message": self.chain() })],
        }
    }

    /// The error, then each cause (`: cause`), as kube-runtime walks `source()`.
    pub fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            let _ = write!(text, ": {c}");
            cause = c.source();
        }
        text
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Position;

    fn every_kind() -> Vec<(Error, i32)> {
        vec![
            (Error::invalid(Diagnostic::new("bad")), 2),
            (Error::Usage("no BareMetalHost named x".into()), 2),
            (Error::Conflict("held".into()), 3),
            (
                Error::io("h.yaml", std::io::Error::other("no such file")),
                4,
            ),
            (
                Error::Provisioner {
                    name: "demo".into(),
                    reason: "plugin demo-provisioner.so has plugin ABI 999".into(),
                    hint: String::new(),
                },
                4,
            ),
            (
                Unfinished::Hosts {
                    failed: 1,
                    total: 2,
                }
                .into(),
                1,
            ),
            (
                Unfinished::TimedOut {
                    after: Duration::from_secs(2),
                    what: "provisioned".into(),
                    hosts: vec!["default/a".into()],
                }
                .into(),
                1,
            ),
            (Unfinished::PluginCheck("name".into()).into(), 1),
            (Unfinished::Never(vec!["a".into()]).into(), 1),
            (Unfinished::Unreadable { count: 1 }.into(), 1),
            (
                Unfinished::Save(Box::new(Error::io(
                    "h.yaml",
                    std::io::Error::other("No space left on device"),
                )))
                .into(),
                1,
            ),
            (
                Unfinished::Unreachable {
                    after: Duration::from_secs(3),
                    error: "connection refused".into(),
                }
                .into(),
                1,
            ),
            (
                Unfinished::Unusable {
                    error: "too old".into(),
                }
                .into(),
                1,
            ),
            (Error::bug("lost"), 70),
            (Error::Interrupted, 130),
        ]
    }

    #[test]
    fn exit_code_follows_the_kind() {
        for (e, code) in every_kind() {
            assert_eq!(e.exit_code(), code, "{e:?}");
        }
    }

    #[test]
    fn render_walks_the_source_chain() {
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] std::io::Error);
        let e = Error::internal("cannot encode", Outer(std::io::Error::other("inner")));
        assert_eq!(e.render(), "error: cannot encode: outer: inner");
        let e = Error::io("h.yaml", std::io::Error::other("Is a directory"));
        assert_eq!(e.render(), "error: h.yaml: Is a directory");
        assert_eq!(Error::bug("lost").render(), "error: lost");
        let e: Error = Unfinished::Save(Box::new(Error::io(
            "h.yaml",
            std::io::Error::other("No space left on device"),
        )))
        .into();
        assert_eq!(
            e.render(),
            "error: cannot save: h.yaml: No space left on device"
        );
    }

    #[test]
    fn render_of_a_transparent_kind_says_it_once() {
        let e: Error = Unfinished::PluginCheck("plugin name is \"a\"".into()).into();
        assert_eq!(
            e.render(),
            "error: plugin check FAILED: plugin name is \"a\""
        );
    }

    #[test]
    fn render_puts_each_diagnostic_on_its_own_line() {
        let e = Error::Invalid(Diagnostics(vec![
            Diagnostic::new("must be a boolean")
                .at(Position::new("h.yaml", 7, 11))
                .object("BareMetalHost", "default/a")
                .field("spec.online"),
            Diagnostic::new("no such Secret").in_file("h.yaml"),
        ]));
        insta::assert_snapshot!(e.render());
    }
}

//! The one error type of the CLI, and the exit code each kind maps to.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user's input can't be used (malformed YAML, a wrong field type, a missing Secret,
    /// an invalid host). Exit 2; nothing is written.
    #[error("{0}")]
    BadInput(String),
    /// The command line itself is wrong. Exit 2.
    #[error("{0}")]
    Usage(String),
    /// Another bmhctl holds the file, or it changed on disk since it was read. Exit 1.
    #[error("{0}")]
    Conflict(String),
    /// Reading or writing a file failed. Exit 1.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Some hosts did not reach their goal. Exit 1.
    #[error("{0}")]
    Unfinished(String),
    /// Ctrl-C or SIGTERM. Exit 130.
    #[error("interrupted")]
    Interrupted,
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Error::BadInput(_) | Error::Usage(_) => 2,
            Error::Interrupted => 130,
            _ => 1,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

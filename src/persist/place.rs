//! Where the hosts of a command are: the user's files (`-f`) or the local store.

use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    Files(Vec<PathBuf>),
    Store(PathBuf),
}

impl Place {
    /// How messages name it.
    pub fn name(&self) -> &'static str {
        match self {
            Place::Files(_) => "the given files",
            Place::Store(_) => "the store",
        }
    }

    /// The store's path, or the files' paths joined with `, `.
    pub fn describe(&self) -> String {
        match self {
            Place::Store(root) => format!("the store {}", root.display()),
            Place::Files(paths) => paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The files given; none for the store.
    pub fn paths(&self) -> &[PathBuf] {
        match self {
            Place::Files(paths) => paths,
            Place::Store(_) => &[],
        }
    }

    /// Whether listing it keeps to one namespace when none is given (the store, as `kubectl get`).
    pub fn one_namespace_by_default(&self) -> bool {
        matches!(self, Place::Store(_))
    }
}

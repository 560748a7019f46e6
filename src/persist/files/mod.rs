//! Hosts in the user's YAML files (`-f FILE|DIR`), and bmhctl's bookkeeping beside them.

pub mod admission;
pub mod annotation_edit;
pub mod beside;
pub(crate) mod bmc_event_subscriptions;
pub mod file_source;
pub mod host_file;
pub mod inventory;
pub(crate) mod kinds;
pub mod lock;
mod parse;
pub mod paths;
pub mod request_edit;
pub mod sidecar;
mod strict;
pub mod yaml_file;
mod yaml_tags;

/// A thread's recent renderings of one kind of value, the newest last.
type Recent<K, V> = std::cell::RefCell<std::collections::VecDeque<(K, V)>>;

/// The rendering kept for the value `matches` finds (the newest first: successive values are
/// most often alike), else `make`'s, kept with `key()` as the oldest of `kept` goes.
fn recent_or<K, V: Clone, E>(
    recent: &Recent<K, V>,
    kept: usize,
    matches: impl Fn(&K) -> bool,
    key: impl FnOnce() -> K,
    make: impl FnOnce() -> Result<V, E>,
) -> Result<V, E> {
    let mut recent = recent.borrow_mut();
    if let Some((_, v)) = recent.iter().rev().find(|(k, _)| matches(k)) {
        return Ok(v.clone());
    }
    let v = make()?;
    if recent.len() >= kept {
        recent.pop_front();
    }
    recent.push_back((key(), v.clone()));
    Ok(v)
}

#[cfg(test)]
mod tests;

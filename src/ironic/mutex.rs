//! Mutex guards that outlive a panic elsewhere.

use std::sync::{Mutex, MutexGuard};

/// A mutex's guard, also after a panic elsewhere poisoned it (the data stays usable).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

//! Values many hosts hold alike, kept once.

use std::sync::{Arc, Mutex};

/// The last `N` distinct values shared through it, the most recent last.
pub struct Recent<T, const N: usize>(Mutex<Vec<Arc<T>>>);

impl<T: PartialEq, const N: usize> Recent<T, N> {
    pub const fn new() -> Self {
        Recent(Mutex::new(Vec::new()))
    }

    /// `value` as a shared value: the kept equal copy, else `value` (kept in the oldest's place).
    pub fn share(&self, value: impl Into<Arc<T>>) -> Arc<T> {
        let value = value.into();
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let same = kept.iter().position(|s| Arc::ptr_eq(s, &value));
        if let Some(i) = same.or_else(|| kept.iter().position(|s| **s == *value)) {
            // The most recent last: the next host's value is most likely this one.
            let s = kept.remove(i);
            kept.push(s.clone());
            return s;
        }
        if kept.len() == N {
            kept.remove(0);
        }
        kept.push(value.clone());
        value
    }
}

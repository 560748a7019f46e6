//! Values many hosts hold alike, kept once: hosts driven alike reach equal values (the inspected
//! details of one model, the provisioner's state at a step), so thousands hold a few copies.

use std::sync::{Arc, Mutex};

/// The last `N` distinct values shared through it, the most recent last.
pub struct Recent<T, const N: usize>(Mutex<Vec<Arc<T>>>);

impl<T: PartialEq, const N: usize> Recent<T, N> {
    pub const fn new() -> Self {
        Recent(Mutex::new(Vec::new()))
    }

    /// `value` as a shared value: the kept copy when one is equal (the same one first, found
    /// without comparing), else `value`, kept in place of the least recent one.
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

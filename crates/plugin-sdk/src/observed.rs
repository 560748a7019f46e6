//! [`ObservedProvisioner`]: every call of a provisioner reported with its duration.

use crate::calls::observed_impl;
use crate::*;
use std::time::Duration;

/// Told of each call of an [`ObservedProvisioner`]; dropped with it, at the end of the pass.
pub trait CallObserver: Send {
    /// `call` (the method's name) returned after `took`.
    fn observe(&self, call: &'static str, took: Duration);
}

/// `inner`, each call reported to `observer`.
pub struct ObservedProvisioner {
    /// The provisioner whose calls are forwarded.
    pub inner: Box<dyn Provisioner>,
    /// Told of each call and how long it took.
    pub observer: Box<dyn CallObserver>,
}

calls::provisioner_calls!(observed_impl);

//! What the runner tells about its passes.

use crate::machine::PassOutcome;
use crate::record::HostRecord;
use bmh_api::ObjectKey;

/// Called after every pass, on the controller's task.
pub type Observer = Box<dyn FnMut(&ObjectKey, &HostRecord, &PassOutcome) + Send>;

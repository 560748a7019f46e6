//! What one step of the state machine decided (BMO's `actionResult` types, `action_result.go`).

use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Still working; stay in the state, come back after the delay (0 = at once). Not saved.
    Continue(Duration),
    /// Like `Continue`, but the status changed and is saved.
    Update(Duration),
    /// No provisioner capacity: opStatus `delayed`, saved, back after `backoff(1)`.
    Delayed,
    /// The step finished; the next state (if any) is applied; saved; back at once.
    Complete,
    /// The host is gone from the provisioner and its finalizer removed; no requeue.
    DeleteComplete,
    /// A transient or unexpected error; nothing saved; retried with the framework's backoff.
    Error(PassError),
    /// The provisioner reported a failure; error fields set; saved; back after `backoff(error_count)`.
    Failed { error_count: i64 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct PassError {
    pub message: String,
    /// BMO's `errors.Is(err, ErrNeedsRegistration)`.
    pub needs_registration: bool,
}

impl Action {
    pub fn error(message: impl Into<String>) -> Self {
        Action::Error(PassError {
            message: message.into(),
            needs_registration: false,
        })
    }

    /// Whether the status must be saved at the end of the pass.
    pub fn dirty(&self) -> bool {
        matches!(
            self,
            Action::Update(_) | Action::Delayed | Action::Complete | Action::Failed { .. }
        )
    }

    /// `Continue` or `Update` with the given delay, depending on whether status changed.
    pub fn continue_or_update(changed: bool, delay: Duration) -> Self {
        if changed {
            Action::Update(delay)
        } else {
            Action::Continue(delay)
        }
    }
}

//! The host's DataImage: BMO's `handleDataImageActions` and when its finalizer goes.

use super::{Action, Pass, backoff};
use bmh_api::{DataImage, DataImageStatus};
use bmhctl_plugin_sdk::{Provisioner, ProvisionerError};
use std::time::Duration;

/// BMO's `dataImageUpdateDelay`: the shortest wait after an attach, a detach or a failed query.
pub const DATA_IMAGE_UPDATE_DELAY: Duration = Duration::from_secs(30);

impl Pass<'_, '_> {
    /// `None`: go on powering the host on; otherwise the action that ends the pass.
    pub(super) fn handle_data_image_actions(
        &mut self,
        prov: &mut dyn Provisioner,
    ) -> Option<Action> {
        let (mut image, deleting) = match (&self.rec.data_image, &self.rec.book.data_image) {
            (Some(d), _) => ((**d).clone(), false),
            (None, Some(d)) => ((**d).clone(), true),
            (None, None) => return None,
        };
        let mut status = image.status();
        status.last_reconciled = Some(self.now.text().to_string());
        // Every wait of this handler backs off with the DataImage's own error count.
        let retry =
            DATA_IMAGE_UPDATE_DELAY.max(backoff::backoff(status.error.count, self.rng.f64()));

        let attached = match prov.get_data_image_status() {
            Ok(a) => a,
            Err(e) => {
                // A locked node is not an error of the image (BMO's ErrNodeIsBusy).
                if e != ProvisionerError::NodeIsBusy {
                    status.error.message = e.to_string();
                    status.error.count += 1;
                    self.save_data_image(&mut image, status, deleting);
                }
                return Some(Action::Continue(retry));
            }
        };
        let requested = image.spec.url.clone();
        let attached_url = status.attached_image.url.clone();

        // The backend lost (or never took) the image: forget it, then decide again.
        if !attached && !attached_url.is_empty() {
            status.attached_image.url.clear();
            self.save_data_image(&mut image, status, deleting);
            return Some(Action::Continue(Duration::ZERO));
        }

        if deleting && !attached {
            // Nothing attached: BMO's DataImage controller removes its finalizer.
            self.rec.book.data_image = None;
            self.bookkeeping_changed = true;
            return None;
        }
        // BMO's `detachDataImage` (on success the next pass sees the image gone).
        if deleting || (requested != attached_url && !attached_url.is_empty()) {
            return Some(match prov.detach_data_image() {
                Ok(()) => Action::Continue(retry),
                Err(e) => self.data_image_failed(&mut image, status, deleting, "detach", e),
            });
        }
        if requested != attached_url && !requested.is_empty() {
            if let Err(e) = prov.attach_data_image(&requested) {
                return Some(self.data_image_failed(&mut image, status, deleting, "attach", e));
            }
            // Recorded now: the backend's virtual media does not say which URL it holds.
            status.attached_image.url = requested;
            self.save_data_image(&mut image, status, deleting);
            return Some(Action::Continue(retry));
        }

        status.error = Default::default();
        self.save_data_image(&mut image, status, deleting);
        None
    }

    /// A failed attach or detach: counted in the DataImage's status, and the pass's error.
    fn data_image_failed(
        &mut self,
        image: &mut DataImage,
        mut status: DataImageStatus,
        deleting: bool,
        verb: &str,
        e: ProvisionerError,
    ) -> Action {
        let message = e.to_string();
        status.error.count += 1;
        status.error.message = message.clone();
        self.save_data_image(image, status, deleting);
        Action::error(format!(
            "failed to {verb}, failed to {verb} dataImage, {message}"
        ))
    }

    /// BMO's `Status().Update` of the DataImage, and the bookkeeping's copy of it.
    fn save_data_image(&mut self, image: &mut DataImage, status: DataImageStatus, deleting: bool) {
        image.status = Some(status);
        if !deleting {
            if let Some(doc) = self.rec.data_image.as_mut() {
                doc.status = image.status.clone();
            }
            self.data_image_changed = true;
        }
        if self.rec.book.data_image.as_deref() != Some(image) {
            self.rec.book.data_image = Some(Box::new(image.clone()));
            self.bookkeeping_changed = true;
        }
    }
}

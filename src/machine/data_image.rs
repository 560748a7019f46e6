//! The host's DataImage: BMO's `handleDataImageActions` (`baremetalhost_controller.go:1826-1947`)
//! with its `attachDataImage` / `detachDataImage`, run by `manageHostPower` when a provisioned
//! host is about to be powered on, plus the part of BMO's DataImage controller that decides when
//! its finalizer goes (nothing attached once the DataImage is deleted).
//!
//! The DataImage comes with the host record (`HostRecord::data_image`, its document). The
//! bookkeeping keeps a copy while its "finalizer" holds (`Bookkeeping::data_image`), so a
//! document removed from the files or the store still gets its image detached: that copy is then
//! handled as a DataImage being deleted.

use super::{Action, Pass, backoff};
use bmh_api::{DataImage, DataImageStatus};
use bmhctl_plugin_sdk::{Provisioner, ProvisionerError};
use std::time::Duration;

/// BMO's `dataImageUpdateDelay` (`dataimage_controller.go:42`): the shortest wait after an
/// attach, a detach or a failed status query.
pub const DATA_IMAGE_UPDATE_DELAY: Duration = Duration::from_secs(30);

impl Pass<'_, '_> {
    /// `None`: nothing to do, go on powering the host on. Otherwise the action that ends the
    /// pass (waiting for an attach or detach to settle, or an error).
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

        if deleting {
            if attached {
                if let Err(a) = self.detach_data_image(prov, &mut image, status, deleting) {
                    return Some(a);
                }
                return Some(Action::Continue(retry));
            }
            // Nothing attached: BMO's DataImage controller removes its finalizer, and the
            // DataImage is gone.
            self.rec.book.data_image = None;
            self.bookkeeping_changed = true;
            return None;
        }

        if requested != attached_url {
            if !attached_url.is_empty() {
                if let Err(a) = self.detach_data_image(prov, &mut image, status, deleting) {
                    return Some(a);
                }
                return Some(Action::Continue(retry));
            }
            if !requested.is_empty() {
                if let Err(e) = prov.attach_data_image(&requested) {
                    let message = e.to_string();
                    status.error.count += 1;
                    status.error.message = message.clone();
                    self.save_data_image(&mut image, status, deleting);
                    return Some(Action::error(format!(
                        "failed to attach, failed to attach dataImage, {message}"
                    )));
                }
                // Recorded now: the backend's virtual media does not say which URL it holds.
                status.attached_image.url = requested;
                self.save_data_image(&mut image, status, deleting);
                return Some(Action::Continue(retry));
            }
        }

        status.error = Default::default();
        self.save_data_image(&mut image, status, deleting);
        None
    }

    /// BMO's `detachDataImage`: on success the status is left as it is (the next pass sees the
    /// image gone and clears the URL).
    fn detach_data_image(
        &mut self,
        prov: &mut dyn Provisioner,
        image: &mut DataImage,
        mut status: DataImageStatus,
        deleting: bool,
    ) -> Result<(), Action> {
        match prov.detach_data_image() {
            Ok(()) => Ok(()),
            Err(e) => {
                let message = e.to_string();
                status.error.count += 1;
                status.error.message = message.clone();
                self.save_data_image(image, status, deleting);
                Err(Action::error(format!(
                    "failed to detach, failed to detach dataImage, {message}"
                )))
            }
        }
    }

    /// BMO's `Status().Update` of the DataImage: the document's status (unless it is gone),
    /// and the bookkeeping's copy that stands for its finalizer.
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

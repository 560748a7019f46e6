//! BMC credentials: BMO's `buildAndValidateBMCCredentials` and `credentialsErrorResult`.

use super::{Pass, PassOutcome, Requeue, Step, delays};
use bmh_api::{ErrorType, ObjectKey, ProvisioningState as S};

impl Pass<'_, '_> {
    /// Resolves the BMC Secret. `Some` ends the pass (a credentials error).
    pub(super) fn resolve_credentials(&mut self) -> Step {
        if matches!(self.state(), S::None | S::Unmanaged) {
            return None;
        }
        match self.build_credentials() {
            Ok(()) => {
                self.have_creds = true;
                None
            }
            // While deleting, carry on without credentials (registration is skipped).
            Err(_) if self.rec.being_deleted() => None,
            Err((message, requeue)) => {
                self.set_error_message(ErrorType::RegistrationError, &message);
                self.event("BMCCredentialError", message);
                let mut out = PassOutcome::new(requeue);
                out.save_status = true;
                Some(out)
            }
        }
    }

    /// Why the credentials can't be used (BMO's texts), and when to retry: every 10 s for a
    /// missing Secret, else only once something changes (the user must fix it).
    fn build_credentials(&mut self) -> Result<(), (String, Requeue)> {
        let invalid = |message: &str| Err((message.to_string(), Requeue::Never));
        let name = self.rec.host.credentials_name().to_string();
        if name.is_empty() {
            return invalid("No BMC CredentialsName defined The BMC secret reference is empty");
        }
        let key = ObjectKey::new(self.rec.host.metadata.namespace_or_default(), name);
        let Some(secret) = self.m.objects.secret(&key) else {
            let message = format!(
                "BMC CredentialsName secret doesn't exist The BMC secret {key} does not exist"
            );
            return Err((message, Requeue::After(delays::HOST_ERROR_RETRY)));
        };
        if self.rec.host.bmc_address().is_empty() {
            return invalid("Empty BMC address Missing BMC connection detail 'Address'");
        }
        // BMO's texts for an empty username or password are the bmc crate's.
        let field = |key| secret.get_str(key).unwrap_or_default().trim().to_string();
        if let Err(e) = bmh_bmc::Credentials::new(field("username"), field("password")).validate() {
            return invalid(&e.to_string());
        }
        self.creds_secret = Some(secret);
        Ok(())
    }
}

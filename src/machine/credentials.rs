//! BMC credentials: BMO's `buildAndValidateBMCCredentials` and `credentialsErrorResult`.

use super::{Pass, PassOutcome, Requeue, Step, delays};
use bmh_api::{ErrorType, ObjectKey, ProvisioningState as S};

/// Why the credentials can't be used; the texts are BMO's.
enum CredentialsError {
    /// The referenced Secret does not exist: retried every 10 s.
    SecretMissing(String),
    /// Anything the user must fix first: no retry until something changes.
    Invalid(String),
}

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
            Err(e) => {
                let (message, requeue) = match e {
                    CredentialsError::SecretMissing(m) => {
                        (m, Requeue::After(delays::HOST_ERROR_RETRY))
                    }
                    CredentialsError::Invalid(m) => (m, Requeue::Never),
                };
                self.set_error_message(ErrorType::RegistrationError, &message);
                self.event("BMCCredentialError", message);
                let mut out = PassOutcome::new(requeue);
                out.save_status = true;
                Some(out)
            }
        }
    }

    fn build_credentials(&mut self) -> Result<(), CredentialsError> {
        let name = self.rec.host.credentials_name().to_string();
        if name.is_empty() {
            return Err(CredentialsError::Invalid(
                "No BMC CredentialsName defined The BMC secret reference is empty".into(),
            ));
        }
        let key = ObjectKey::new(self.rec.host.metadata.namespace_or_default(), name);
        let Some(secret) = self.m.objects.secret(&key) else {
            return Err(CredentialsError::SecretMissing(format!(
                "BMC CredentialsName secret doesn't exist The BMC secret {key} does not exist"
            )));
        };
        if self.rec.host.bmc_address().is_empty() {
            return Err(CredentialsError::Invalid(
                "Empty BMC address Missing BMC connection detail 'Address'".into(),
            ));
        }
        let username = secret.get_str("username").unwrap_or_default();
        let password = secret.get_str("password").unwrap_or_default();
        if username.trim().is_empty() {
            return Err(CredentialsError::Invalid(
                "Validation error with BMC credentials: Missing BMC connection detail 'username' in credentials"
                    .into(),
            ));
        }
        if password.trim().is_empty() {
            return Err(CredentialsError::Invalid(
                "Validation error with BMC credentials: Missing BMC connection details 'password' in credentials"
                    .into(),
            ));
        }
        self.creds_secret = Some(secret);
        Ok(())
    }
}

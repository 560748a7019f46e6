//! The answer to bmhctl's start-up probe: BMO's readiness check (version, then drivers, which
//! need the credentials) on a client whose requests give up after [`PROBE_TIMEOUT`].

use super::client::{IronicClient, IronicConfig, IronicErrorKind};
use super::provisioner::IronicFactory;
use bmhctl_plugin_sdk::{ApiCallCount, ProbeReport, ProvisionerError, ProvisionerFactory};
use std::time::Duration;

/// The longest one probe request may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The Ironic factory, answering the probe too.
pub struct ProbingFactory {
    inner: IronicFactory,
    probe: IronicClient,
}

impl ProbingFactory {
    /// `config` is the one `inner`'s client was built with.
    pub fn new(inner: IronicFactory, config: &IronicConfig) -> Result<Self, ProvisionerError> {
        let mut config = config.clone();
        config.timeout = config.timeout.min(PROBE_TIMEOUT);
        // The probe's requests reach Ironic too: they are counted with the provisioners'.
        let probe = IronicClient::new(config)
            .map_err(ProvisionerError::other)?
            .counting_into(inner.shared().client.api_calls().clone());
        Ok(Self { inner, probe })
    }
}

impl bmhctl_plugin_sdk::ForwardingFactory for ProbingFactory {
    fn inner(&self) -> &dyn ProvisionerFactory {
        &self.inner
    }

    fn probe(&self) -> Result<Option<ProbeReport>, ProvisionerError> {
        let at = self.probe.endpoint();
        // Each probe asks afresh: Ironic may have come up, or been replaced, since the last.
        self.probe.reset_cache();
        match self.probe.check_ready() {
            Ok(()) => Ok(Some(ProbeReport {
                reached: format!("Ironic at {at}"),
            })),
            // An Ironic too old never gets younger: no retry.
            Err(e) if e.kind == IronicErrorKind::Version => {
                Err(ProvisionerError::Refused(format!("Ironic at {at}: {e}")))
            }
            Err(e) => Err(ProvisionerError::Other(match (e.status, &e.kind) {
                (Some(401 | 403), _) => format!(
                    "Ironic at {at} refused the credentials (check METAL3_AUTH_ROOT_DIR/ironic, \
                     or the Secret its Ironic document names): {e}"
                ),
                (_, IronicErrorKind::Transport) => format!("cannot reach Ironic at {at}: {e}"),
                _ => format!("Ironic at {at} is not ready: {e}"),
            })),
        }
    }

    fn api_calls(&self) -> Result<Option<Vec<ApiCallCount>>, ProvisionerError> {
        Ok(Some(self.inner.shared().client.api_calls().snapshot()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provisioner::ProvisionerConfig;

    #[test]
    fn the_probes_requests_are_counted_with_the_provisioners() {
        // Nothing listens on port 1: every attempt is refused, and each one counts.
        let config = IronicConfig::new("http://127.0.0.1:1").unwrap();
        let inner = IronicFactory::new(
            IronicClient::new(config.clone()).unwrap(),
            ProvisionerConfig::default(),
        );
        let factory = ProbingFactory::new(inner, &config).unwrap();
        assert_eq!(factory.api_calls(), Ok(Some(Vec::new())));
        assert!(factory.probe().is_err());
        let rows = factory.api_calls().unwrap().unwrap();
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0].kind, "GET /v1/");
        // A refused read is sent again: three attempts.
        assert_eq!(rows[0].count, 3);
    }
}

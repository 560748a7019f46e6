//! Before the first pass: probe the provisioner's backend, so an unreachable one fails fast.

use crate::error::{Result, Unfinished};
use bmhctl_plugin_sdk::{ProvisionerError, ProvisionerFactory};
use std::time::{Duration, Instant};

/// The first wait between probes; doubled after each failure up to [`MAX_DELAY`].
const FIRST_DELAY: Duration = Duration::from_millis(250);
const MAX_DELAY: Duration = Duration::from_secs(10);

/// Probes `factory` for at most `wait`; `say` gets each new error, and the success after one.
pub fn wait_until_reachable(
    factory: &dyn ProvisionerFactory,
    wait: Duration,
    mut say: impl FnMut(&str),
) -> Result<()> {
    let started = Instant::now();
    let mut delay = FIRST_DELAY;
    let mut last: Option<String> = None;
    loop {
        let error = match factory.probe() {
            Ok(None) => return Ok(()),
            Ok(Some(report)) => {
                if last.is_some() {
                    say(&format!("reached {}", report.reached));
                }
                tracing::debug!(reached = %report.reached, "provisioner probe answered");
                return Ok(());
            }
            Err(ProvisionerError::Refused(error)) => {
                return Err(Unfinished::Unusable { error }.into());
            }
            Err(e) => e.to_string(),
        };
        let spent = started.elapsed();
        if spent >= wait {
            return Err(Unfinished::Unreachable { after: wait, error }.into());
        }
        if last.as_deref() != Some(error.as_str()) {
            let left = Duration::from_secs((wait - spent).as_secs_f64().round() as u64);
            say(&format!(
                "{error} (retrying for up to {}; --ironic-wait)",
                humantime::format_duration(left)
            ));
            last = Some(error);
        }
        std::thread::sleep(delay.min(wait - spent));
        delay = (delay * 2).min(MAX_DELAY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmhctl_plugin_sdk::{EventSink, HostData, ProbeReport, Provisioner};
    use std::sync::Mutex;

    /// Answers the probe from a script, then succeeds.
    struct Scripted(Mutex<Vec<Result<Option<ProbeReport>, ProvisionerError>>>);

    impl ProvisionerFactory for Scripted {
        fn new_provisioner(
            &self,
            _: HostData,
            _: EventSink,
        ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
            unreachable!("only probed")
        }
        fn probe(&self) -> Result<Option<ProbeReport>, ProvisionerError> {
            let mut script = self.0.lock().unwrap();
            if script.is_empty() {
                Ok(Some(ProbeReport {
                    reached: "the backend".into(),
                }))
            } else {
                script.remove(0)
            }
        }
    }

    fn refused() -> Result<Option<ProbeReport>, ProvisionerError> {
        Err(ProvisionerError::Other("connection refused".into()))
    }

    #[test]
    fn each_distinct_error_is_said_once_then_the_success() {
        let factory = Scripted(Mutex::new(vec![
            refused(),
            refused(),
            Err(ProvisionerError::Other("401 Unauthorized".into())),
        ]));
        let mut said = Vec::new();
        wait_until_reachable(&factory, Duration::from_secs(60), |m| {
            said.push(m.to_string())
        })
        .unwrap();
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(said[0].starts_with("connection refused (retrying for up to "));
        assert!(said[1].starts_with("401 Unauthorized (retrying"));
        assert_eq!(said[2], "reached the backend");
    }

    #[test]
    fn nothing_to_probe_or_an_answer_at_once_says_nothing() {
        for answer in [Ok(None), Ok(Some(ProbeReport::default()))] {
            let factory = Scripted(Mutex::new(vec![answer]));
            let mut said = Vec::new();
            wait_until_reachable(&factory, Duration::ZERO, |m| said.push(m.to_string())).unwrap();
            assert!(said.is_empty(), "{said:?}");
        }
    }

    #[test]
    fn gives_up_after_the_wait_with_the_last_error_exit_1() {
        let factory = Scripted(Mutex::new((0..1000).map(|_| refused()).collect()));
        let started = Instant::now();
        let e = wait_until_reachable(&factory, Duration::from_millis(600), |_| {}).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(e.exit_code(), 1);
        assert_eq!(
            e.render(),
            "error: the provisioner could not be reached for 600ms: connection refused"
        );
    }
}

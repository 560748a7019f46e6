//! The per-host rate limiter of BMO's controller: 5 ms × 2^failures (≤ 1000 s).

use crate::machine::{Requeue, backoff};
use std::time::Duration;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RateLimiter {
    /// Passes requeued through the limiter since the last `Forget`.
    failures: u32,
}

impl RateLimiter {
    /// The delay before the next pass after one that asked for `requeue` (`None`: no requeue).
    pub fn delay(&mut self, requeue: Requeue) -> Option<Duration> {
        match requeue {
            Requeue::After(d) if !d.is_zero() => {
                self.failures = 0;
                Some(d)
            }
            Requeue::After(_) | Requeue::ErrorBackoff => {
                let d = backoff::error_retry_delay(self.failures);
                self.failures = self.failures.saturating_add(1);
                Some(d)
            }
            // controller-runtime forgets a host that asks for nothing.
            Requeue::Never => {
                self.failures = 0;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Option<Duration> {
        Some(Duration::from_millis(n))
    }

    #[test]
    fn zero_delay_requeues_back_off_like_errors_and_share_their_count() {
        let mut r = RateLimiter::default();
        let zero = Requeue::After(Duration::ZERO);
        assert_eq!(r.delay(zero), ms(5));
        assert_eq!(r.delay(zero), ms(10));
        assert_eq!(r.delay(Requeue::ErrorBackoff), ms(20));
        assert_eq!(r.delay(zero), ms(40));
        // A pass with a real delay is BMO's own timing, and forgets the count.
        assert_eq!(r.delay(Requeue::After(Duration::from_secs(3))), ms(3000));
        assert_eq!(r.delay(zero), ms(5));
    }

    #[test]
    fn a_host_that_always_asks_again_at_once_reaches_1000s() {
        let mut r = RateLimiter::default();
        let delays: Vec<Duration> = (0..40)
            .map(|_| r.delay(Requeue::After(Duration::ZERO)).unwrap())
            .collect();
        assert_eq!(delays[18], Duration::from_secs(1000));
        assert_eq!(delays[39], Duration::from_secs(1000));
        // Over its first minute such a host runs 13 passes, not thousands.
        let mut t = Duration::ZERO;
        let in_a_minute = delays
            .iter()
            .take_while(|d| {
                t += **d;
                t <= Duration::from_secs(60)
            })
            .count();
        assert_eq!(in_a_minute, 13);
    }

    #[test]
    fn no_requeue_forgets() {
        let mut r = RateLimiter::default();
        r.delay(Requeue::ErrorBackoff);
        r.delay(Requeue::ErrorBackoff);
        assert_eq!(r.delay(Requeue::Never), None);
        assert_eq!(r.delay(Requeue::ErrorBackoff), ms(5));
    }
}

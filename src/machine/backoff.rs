//! BMO's error backoff (`action_result.go:14-19, 135-144`).

use std::time::Duration;

const MAX_BACKOFF_COUNT: i64 = 9;

/// The delay after the `error_count`-th failure: uniform in (2^(n-1), 2^n] minutes, n ≤ 9.
pub fn backoff(error_count: i64, unit: f64) -> Duration {
    let n = error_count.clamp(0, MAX_BACKOFF_COUNT);
    let base = 2f64.powi(n as i32);
    let minutes = base - unit * base * 0.5;
    Duration::from_secs_f64(minutes * 60.0)
}

/// controller-runtime's per-item rate limiter: 5 ms × 2^failures, at most 1000 s.
pub fn error_retry_delay(consecutive_failures: u32) -> Duration {
    let ms = 5f64 * 2f64.powi(consecutive_failures.min(40) as i32);
    Duration::from_secs_f64((ms / 1000.0).min(1000.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_lies_in_the_documented_interval_for_every_count() {
        let mut rng = fastrand::Rng::with_seed(7);
        for n in 1..=12i64 {
            let k = n.min(9) as i32;
            let lo = 2f64.powi(k - 1) * 60.0;
            let hi = 2f64.powi(k) * 60.0;
            for _ in 0..1000 {
                let d = backoff(n, rng.f64()).as_secs_f64();
                assert!(d > lo && d <= hi, "n={n}: {d} not in ({lo}, {hi}]");
            }
        }
    }

    #[test]
    fn backoff_above_nine_behaves_as_nine() {
        assert_eq!(backoff(9, 0.25), backoff(30, 0.25));
    }

    #[test]
    fn error_retry_delay_doubles_and_caps() {
        assert_eq!(error_retry_delay(0), Duration::from_millis(5));
        assert_eq!(error_retry_delay(1), Duration::from_millis(10));
        assert_eq!(error_retry_delay(30), Duration::from_secs(1000));
    }
}

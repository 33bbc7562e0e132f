//! The state of [`crate::Fault::TokenBucket`] rules: a cloud volume's burst bucket, counted in
//! I/Os, scheduled in virtual time.
//!
//! The bucket holds up to `size` tokens and starts full. Tokens flow in at `fill` per second at
//! all times, busy or idle, and stop at `size`. Each request takes one token, and is released
//! (served) at the earliest time `r` such that
//!
//! * `r >= now` (it cannot be served before it arrived),
//! * `r >= last + 1 / peak` (no more than `peak` per second, whatever the bucket holds),
//! * the bucket holds at least one token at `r`.
//!
//! The state is only the tokens left just after the last release and the time of that release;
//! the tokens at any later time follow from the fill rate. Nothing here reads a clock: the
//! caller passes `now` (time since any fixed origin) and sleeps for the delay it gets back, so
//! the tests drive it with a fake clock.
//!
//! A client that keeps it busy gets `peak` per second for about `size / (peak - fill)` seconds
//! (about `size * peak / (peak - fill)` I/Os), then `fill` per second; after an idle pause of
//! `P` seconds it gets about `min(size, fill * P)` I/Os at `peak` again.

use std::time::Duration;

/// One token bucket's parameters and state. Times are seconds since the caller's origin.
#[derive(Clone, Debug)]
pub(crate) struct Bucket {
    size: f64,
    fill: f64,
    /// `1 / peak`: the least time between two releases.
    gap: f64,
    /// Tokens left just after the last release (all of them before the first request).
    tokens: f64,
    /// When the last request was released; `None` before the first.
    last: Option<f64>,
}

impl Bucket {
    /// A full bucket of `bucket_ios` tokens, filled at `fill_per_s` and drained at most at
    /// `peak_per_s`. Refuses a bucket of 0, rates that are not finite and above 0, and a peak
    /// below the fill rate (the bucket could never be spent).
    pub(crate) fn new(bucket_ios: u64, fill_per_s: f64, peak_per_s: f64) -> Result<Bucket, String> {
        if bucket_ios == 0 {
            return Err("bucket_ios must be at least 1".into());
        }
        for (name, v) in [("fill_per_s", fill_per_s), ("peak_per_s", peak_per_s)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name} must be finite and above 0, not {v}"));
            }
        }
        if peak_per_s < fill_per_s {
            return Err(format!(
                "peak_per_s ({peak_per_s}) must not be below fill_per_s ({fill_per_s})"
            ));
        }
        Ok(Bucket {
            size: bucket_ios as f64,
            fill: fill_per_s,
            gap: 1.0 / peak_per_s,
            tokens: bucket_ios as f64,
            last: None,
        })
    }

    /// A request arriving at `now` takes a token: how long it must wait before it is served
    /// (zero if at once). Requests are released in the order they are taken, so one arriving
    /// before the previous one's release (`now` earlier than that) queues behind it.
    pub(crate) fn take(&mut self, now: Duration) -> Duration {
        let now = now.as_secs_f64();
        let release = match self.last {
            None => {
                // Full, and nothing to keep apart from.
                self.tokens -= 1.0;
                now
            }
            Some(last) => {
                let earliest = now.max(last + self.gap);
                let have = self.tokens + self.fill * (earliest - last);
                let release = if have >= 1.0 {
                    earliest
                } else {
                    // Wait for the one token to drip in (below 1 token the cap cannot bind).
                    last + (1.0 - self.tokens) / self.fill
                };
                let have = (self.tokens + self.fill * (release - last)).min(self.size);
                // (rounding may leave -1e-16 when the token has only just arrived)
                self.tokens = (have - 1.0).max(0.0);
                release
            }
        };
        self.last = Some(release);
        Duration::from_secs_f64((release - now).max(0.0))
    }

    /// The tokens the bucket holds at `at` (not before the last release).
    #[cfg(test)]
    pub(crate) fn tokens_at(&self, at: Duration) -> f64 {
        match self.last {
            None => self.tokens,
            Some(last) => (self.tokens + self.fill * (at.as_secs_f64() - last)).min(self.size),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seconds as the `now` the bucket takes.
    fn at(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// A client at queue depth 1 driving the bucket as hard as it can from `start`: each
    /// request arrives the moment the previous one is served. The release times.
    fn closed_loop(b: &mut Bucket, start: f64, n: usize) -> Vec<f64> {
        let mut now = start;
        (0..n)
            .map(|_| {
                now += b.take(at(now)).as_secs_f64();
                now
            })
            .collect()
    }

    fn gaps(releases: &[f64]) -> Vec<f64> {
        releases.windows(2).map(|w| w[1] - w[0]).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn a_full_bucket_runs_at_peak_then_at_the_fill_rate() {
        // 100 I/Os of burst, 10/s baseline, 1000/s peak
        let mut b = Bucket::new(100, 10.0, 1000.0).unwrap();
        let r = closed_loop(&mut b, 5.0, 200);
        assert_eq!(r[0], 5.0, "the first request waits for nothing");
        let g = gaps(&r);
        // the first 100 requests (99 gaps) are 1 ms apart...
        assert!(g[..99].iter().all(|&d| close(d, 0.001)), "{:?}", &g[..99]);
        // ...the burst lasts about 100 * 1000 / 990 = 101 I/Os, and after it 100 ms apart
        assert!(g[105..].iter().all(|&d| close(d, 0.1)), "{:?}", &g[105..]);
        // and the spacing moves from one to the other without going outside them
        assert!(
            g.windows(2).all(|w| w[1] >= w[0] - 1e-12),
            "the spacing only grows"
        );
        assert!(g.iter().all(|&d| d > 0.001 - 1e-12 && d < 0.1 + 1e-12));
        // the burst took about bucket / (peak - fill) = 0.101 s
        let burst = g.iter().take_while(|&&d| close(d, 0.001)).count();
        assert!((100..=102).contains(&burst), "{burst}");
    }

    #[test]
    fn an_idle_pause_earns_fill_times_pause_at_peak_again() {
        let mut b = Bucket::new(100, 10.0, 1000.0).unwrap();
        let drained = closed_loop(&mut b, 0.0, 150);
        let end = *drained.last().unwrap();
        assert!(b.tokens_at(at(end)) < 1.0, "drained");
        // 2 s idle earns 20 tokens: about 20 more I/Os at peak, then the baseline
        let r = closed_loop(&mut b, end + 2.0, 40);
        let g = gaps(&r);
        assert!(g[..19].iter().all(|&d| close(d, 0.001)), "{:?}", &g[..19]);
        assert!(g[25..].iter().all(|&d| close(d, 0.1)), "{:?}", &g[25..]);
        let burst = g.iter().take_while(|&&d| close(d, 0.001)).count();
        assert!((19..=21).contains(&burst), "{burst}");

        // an hour idle earns no more than the bucket holds
        let end = *r.last().unwrap();
        assert_eq!(b.tokens_at(at(end + 3600.0)), 100.0);
        let r = closed_loop(&mut b, end + 3600.0, 150);
        let g = gaps(&r);
        let burst = g.iter().take_while(|&&d| close(d, 0.001)).count();
        assert!((100..=102).contains(&burst), "{burst}");
        assert!(g[105..].iter().all(|&d| close(d, 0.1)));
    }

    #[test]
    fn requests_arriving_together_queue_at_peak_then_at_the_fill_rate() {
        // 16 requests all at t = 1 (a queue of them): released 1/peak apart from t = 1, and
        // each one's delay is its release time less its arrival
        let mut b = Bucket::new(10, 100.0, 10_000.0).unwrap();
        let delays: Vec<f64> = (0..16).map(|_| b.take(at(1.0)).as_secs_f64()).collect();
        assert_eq!(delays[0], 0.0);
        for (k, d) in delays.iter().enumerate().take(10) {
            assert!(close(*d, k as f64 * 1e-4), "request {k}: {d}");
        }
        assert!(
            delays[12..].windows(2).all(|w| close(w[1] - w[0], 0.01)),
            "{delays:?}"
        );
    }

    #[test]
    fn a_sparse_client_is_never_delayed() {
        // one request every 200 ms against a 10/s baseline: each finds a token and the peak
        // gap long passed
        let mut b = Bucket::new(1, 10.0, 20.0).unwrap();
        for k in 0..50 {
            assert_eq!(b.take(at(k as f64 * 0.2)), Duration::ZERO, "request {k}");
        }
    }

    #[test]
    fn no_window_ever_beats_the_bucket_or_the_peak() {
        // An irregular client (bursts, pauses, overlapping arrivals) from a fixed pseudo-random
        // sequence. In every window of releases [r_i, r_j]: at most bucket + fill * (r_j - r_i)
        // requests (the bucket's promise) and at least (j - i) / peak seconds (the peak's).
        let (size, fill, peak) = (20u64, 10.0, 400.0);
        let mut b = Bucket::new(size, fill, peak).unwrap();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut now = 0.0;
        let mut releases = Vec::new();
        for _ in 0..600 {
            // mostly back to back or overlapping, sometimes a pause of up to 0.5 s
            now += match rand() {
                x if x < 0.05 => rand() * 0.5,
                x if x < 0.6 => rand() * 0.002,
                _ => 0.0,
            };
            let release = now + b.take(at(now)).as_secs_f64();
            assert!(release >= now);
            assert!(b.tokens_at(at(release)) <= size as f64);
            assert!(
                b.tokens_at(at(release + 1e6)) <= size as f64,
                "the cap holds"
            );
            releases.push(release);
        }
        for i in 0..releases.len() {
            for j in i + 1..releases.len() {
                let span = releases[j] - releases[i];
                let n = (j - i + 1) as f64;
                assert!(
                    n <= size as f64 + fill * span + 1e-6,
                    "{i}..{j}: {n} in {span}"
                );
                assert!(span >= (j - i) as f64 / peak - 1e-9, "{i}..{j}: {span}");
            }
        }
        // and it was pushed hard enough to run out: some requests waited for a token
        let slow = gaps(&releases)
            .iter()
            .filter(|&&d| d > 1.0 / peak + 1e-9)
            .count();
        assert!(slow > 0);
    }

    #[test]
    fn peak_equal_to_fill_is_a_plain_rate_limit() {
        let mut b = Bucket::new(5, 100.0, 100.0).unwrap();
        let g = gaps(&closed_loop(&mut b, 0.0, 50));
        assert!(g.iter().all(|&d| close(d, 0.01)), "{g:?}");
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(Bucket::new(1, 1.0, 1.0).is_ok());
        let bad = [
            (0, 10.0, 100.0),
            (10, 0.0, 100.0),
            (10, -1.0, 100.0),
            (10, f64::NAN, 100.0),
            (10, 10.0, 0.0),
            (10, 10.0, -5.0),
            (10, 10.0, f64::NAN),
            (10, 10.0, f64::INFINITY),
            (10, f64::INFINITY, f64::INFINITY),
            (10, 100.0, 10.0),
        ];
        for (size, fill, peak) in bad {
            let err = Bucket::new(size, fill, peak).unwrap_err();
            assert!(!err.is_empty(), "({size}, {fill}, {peak})");
        }
        assert!(Bucket::new(10, 100.0, 10.0).unwrap_err().contains("below"));
        assert!(Bucket::new(0, 1.0, 1.0).unwrap_err().contains("bucket_ios"));
    }
}

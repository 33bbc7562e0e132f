//! When a throttled worker may start its next I/O (`--rate-iops`, `--rate-mbps`, saturate's
//! throttled points).
//!
//! Each worker keeps an absolute schedule: the k-th I/O is due one gap after the one before,
//! the gaps either all equal to the worker's interval (`linear`, fio's default
//! `rate_process=linear`) or drawn from an exponential distribution with that mean (`poisson`,
//! fio's `rate_process=poisson`: database clients arrive independently, not on a clock).
//!
//! A worker that falls behind (it woke late, or every slot was busy) may catch up by at most
//! [`CATCH_UP_NS`] or one interval, whichever is longer; the rest of the debt is forgiven. So a
//! late wake-up starts at most a couple of I/Os at once (at 7,000 IOPS on one thread: two), and
//! the latency measured at a rate is the device's at that arrival rate, not that of a burst the
//! throttle made. Until issue 23 the debt was kept for 100 ms: after a 10 ms hiccup at 7,000 IOPS,
//! 70 I/Os went out together and queued behind each other, which showed as a p99 at qd 16 many
//! times the qd 1 one. What was forgiven shows as achieved IOPS below the rate asked.
//!
//! No allocation, no system call: the worker's hot loop asks [`Pacer::due`] and calls
//! [`Pacer::take`] per I/O.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The most a worker behind its schedule catches up, unless its interval is longer: above the
/// wake-up latency of a sleeping thread on a virtual machine (tens of µs), so the rate is kept,
/// and short enough that no burst of more than about 100 µs worth of I/O leaves at once.
pub const CATCH_UP_NS: u64 = 100_000;

/// The arrival process of a throttled worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Process {
    /// Evenly spaced: every gap is the interval.
    Linear,
    /// Exponential gaps of the interval's mean: a Poisson process (independent arrivals).
    Poisson,
}

/// One worker's throttle.
pub struct Pacer {
    interval_ns: u64,
    slack_ns: u64,
    next_ns: u64,
    /// The draws of the exponential gaps (Poisson only).
    rng: Option<Xoshiro256PlusPlus>,
}

impl Pacer {
    /// A schedule of one I/O per `interval_ns` on average, whose first I/O is due at
    /// `start_ns`; `seed` draws the gaps of a Poisson process.
    pub fn new(interval_ns: u64, process: Process, seed: u64, start_ns: u64) -> Self {
        let interval_ns = interval_ns.max(1);
        Self {
            interval_ns,
            slack_ns: interval_ns.max(CATCH_UP_NS),
            next_ns: start_ns,
            rng: (process == Process::Poisson)
                .then(|| Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x9015_5011)),
        }
    }

    /// When the next I/O may start.
    #[inline]
    pub fn due(&self) -> u64 {
        self.next_ns
    }

    /// Starts one I/O at `now` (at or after [`Self::due`]): the next is due one gap after this
    /// one's place on the schedule, which is at most the catch-up allowance behind `now`.
    #[inline]
    pub fn take(&mut self, now: u64) {
        let gap = self.gap();
        self.next_ns = self.next_ns.max(now.saturating_sub(self.slack_ns)) + gap;
    }

    /// Nothing starts before `t` (the next burst of `--burst`): the schedule resumes there
    /// rather than catching up on the pause.
    #[inline]
    pub fn hold_until(&mut self, t: u64) {
        self.next_ns = self.next_ns.max(t);
    }

    #[inline]
    fn gap(&mut self) -> u64 {
        match self.rng.as_mut() {
            None => self.interval_ns,
            Some(rng) => {
                // U in (0, 1]: -ln U is exponential with mean 1 and never infinite
                let u = ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
                (-u.ln() * self.interval_ns as f64) as u64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many I/Os start at `now` when the worker wakes then.
    fn start_all_due(p: &mut Pacer, now: u64) -> usize {
        let mut n = 0;
        while p.due() <= now {
            p.take(now);
            n += 1;
        }
        n
    }

    #[test]
    fn an_on_time_worker_starts_one_io_per_interval() {
        let mut p = Pacer::new(1_000, Process::Linear, 1, 5_000);
        let mut starts = vec![];
        for now in (5_000..15_000).step_by(250) {
            for _ in 0..start_all_due(&mut p, now) {
                starts.push(now);
            }
        }
        assert_eq!(starts, (5..15).map(|k| k * 1_000).collect::<Vec<_>>());
    }

    #[test]
    fn a_late_wake_up_starts_no_burst() {
        // 7,000 IOPS on one thread, a wake-up 10 ms late: two I/Os, not the 70 that were due
        let iv = 1_000_000_000 / 7_000;
        let mut p = Pacer::new(iv, Process::Linear, 1, 0);
        assert_eq!(start_all_due(&mut p, 0), 1);
        assert_eq!(start_all_due(&mut p, 10_000_000), 2);
        // then on schedule again, one interval apart
        assert_eq!(start_all_due(&mut p, 10_000_000 + iv - 1), 0);
        assert_eq!(start_all_due(&mut p, 10_000_000 + iv), 1);
        // 90,000 IOPS: at most the catch-up allowance's worth, 10 I/Os
        let iv = 1_000_000_000 / 90_000;
        let mut p = Pacer::new(iv, Process::Linear, 1, 0);
        let n = start_all_due(&mut p, 10_000_000);
        assert_eq!(n as u64, CATCH_UP_NS / iv + 1);
    }

    #[test]
    fn wake_ups_late_by_less_than_the_allowance_keep_the_rate() {
        // every wake-up 60 us late on a 143 us schedule: no I/O is lost
        let iv = 142_857;
        let mut p = Pacer::new(iv, Process::Linear, 1, 0);
        let mut n = 0;
        let mut now = 0;
        while now < 1_000_000_000 {
            n += start_all_due(&mut p, now);
            now = p.due() + 60_000;
        }
        assert!(
            (6_999..=7_001).contains(&n),
            "{n} I/Os in 1 s at 7,000 IOPS"
        );
    }

    #[test]
    fn poisson_gaps_are_exponential_with_the_interval_as_mean() {
        let mut p = Pacer::new(100_000, Process::Poisson, 7, 0);
        let gaps: Vec<f64> = (0..100_000)
            .map(|_| {
                let at = p.due();
                p.take(at);
                (p.due() - at) as f64
            })
            .collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        assert!((mean / 100_000.0 - 1.0).abs() < 0.02, "mean gap {mean}");
        // an exponential's standard deviation equals its mean; evenly spaced gaps have none
        assert!(
            (var.sqrt() / mean - 1.0).abs() < 0.03,
            "cv {}",
            var.sqrt() / mean
        );
        // a fifth of the gaps are under 22 % of the mean (1 - e^-0.223 = 0.2)
        let short = gaps.iter().filter(|g| **g < 22_314.0).count() as f64 / 1e5;
        assert!((short - 0.2).abs() < 0.01, "{short}");
    }

    #[test]
    fn a_pause_resumes_without_catching_up() {
        let mut p = Pacer::new(1_000, Process::Linear, 1, 0);
        start_all_due(&mut p, 0);
        p.hold_until(50_000);
        assert_eq!(start_all_due(&mut p, 49_999), 0);
        assert_eq!(start_all_due(&mut p, 50_000), 1);
    }
}

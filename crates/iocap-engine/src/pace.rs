//! When a throttled worker may start its next I/O (`--rate-iops`, `--rate-mbps`, saturate's
//! throttled points).
//!
//! Each worker keeps an absolute schedule: the k-th I/O is due one gap after the one before,
//! the gaps either all equal to the worker's interval (`linear`, fio's default
//! `rate_process=linear`) or drawn from an exponential distribution with that mean (`poisson`,
//! fio's `rate_process=poisson`: database clients arrive independently, not on a clock).
//!
//! A worker that falls behind (it woke late, or every slot was busy) keeps its debt, up to
//! [`DEBT_NS`], so the rate asked is the rate run, but repays it spaced out, at twice the rate
//! at most. A wake-up up to [`CATCH_UP_NS`] late starts what is due then (at most 100 µs worth
//! of I/O); while an I/O starts later than that, a second schedule, advanced half a mean gap per
//! I/O and never more than that behind the clock, gates every start until one is on time again:
//! two I/Os start together, then one every half gap until the worker is back on schedule. On schedule the
//! second schedule is off, so it changes neither evenly spaced nor Poisson arrivals. The
//! latency measured at a rate is then the device's at that arrival rate, not that of a burst
//! the throttle made. Until issue 23 a worker repaid up to 100 ms of debt at once: after a
//! 10 ms hiccup at 7,000 IOPS, 70 I/Os went out together and queued behind each other, which
//! showed as a p99 at qd 16 many times the qd 1 one. A debt beyond 100 ms (the worker was
//! stopped) is forgiven and shows as achieved IOPS below the rate asked.
//!
//! No allocation, no system call: the worker's hot loop asks [`Pacer::due`] and calls
//! [`Pacer::take`] per I/O.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// How late an I/O may start and still bring along all that is due with it: above the wake-up
/// latency of a sleeping thread on a virtual machine (tens of µs), so a late wake-up costs no
/// rate, and short enough that no more than about 100 µs worth of I/O leaves together.
pub const CATCH_UP_NS: u64 = 100_000;

/// How early an I/O may start: about one turn of the worker's loop (a sleep and a wake-up).
pub const EARLY_NS: u64 = 10_000;

/// The most debt a worker keeps: a longer stall is not made up.
pub const DEBT_NS: u64 = 100_000_000;

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
    /// The schedule: when the next I/O is due.
    next_ns: u64,
    /// The spacing while repaying a debt: twice the rate.
    pace_ns: u64,
    /// Whether a debt is being repaid.
    repaying: bool,
    /// The draws of the exponential gaps (Poisson only).
    rng: Option<Xoshiro256PlusPlus>,
    /// The debt forgiven so far (stalls past [`DEBT_NS`]).
    forgiven_ns: u64,
}

impl Pacer {
    /// A schedule of one I/O per `interval_ns` on average, whose first I/O is due at
    /// `start_ns`; `seed` draws the gaps of a Poisson process.
    pub fn new(interval_ns: u64, process: Process, seed: u64, start_ns: u64) -> Self {
        let interval_ns = interval_ns.max(1);
        Self {
            interval_ns,
            next_ns: start_ns,
            pace_ns: start_ns,
            repaying: false,
            rng: (process == Process::Poisson)
                .then(|| Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x9015_5011)),
            forgiven_ns: 0,
        }
    }

    /// When the next I/O may start.
    #[inline]
    pub fn due(&self) -> u64 {
        self.next_ns.max(self.pace_ns)
    }

    /// Whether the next I/O may start at `now`: it is due, or due within [`EARLY_NS`], sooner
    /// than the loop could sleep and wake again. Without this a gap shorter than one turn of
    /// the loop could not happen, and Poisson arrivals lost their short gaps.
    #[inline]
    pub fn ready(&self, now: u64) -> bool {
        self.due() <= now + EARLY_NS
    }

    /// Starts one I/O at `now` (at or after [`Self::due`]): the next is due one gap after this
    /// one's place on the schedule (at most [`DEBT_NS`] behind `now`); while this one starts
    /// more than [`CATCH_UP_NS`] late, also half a mean gap after its place on the spacing
    /// schedule (at most half a mean gap behind `now`).
    #[inline]
    pub fn take(&mut self, now: u64) {
        // repaying from an I/O more than the allowance late until one starts on time
        let late = now.saturating_sub(self.next_ns);
        self.repaying = late > CATCH_UP_NS || (self.repaying && late > 0);
        let in_debt = self.repaying;
        let gap = self.gap();
        let floor = now.saturating_sub(DEBT_NS);
        self.forgiven_ns += floor.saturating_sub(self.next_ns);
        self.next_ns = self.next_ns.max(floor) + gap;
        // on schedule, nothing but the schedule holds an I/O back (Poisson's short gaps stay)
        self.pace_ns = if in_debt {
            let half = self.interval_ns / 2;
            self.pace_ns.max(now.saturating_sub(half)) + half
        } else {
            0
        };
    }

    /// How far behind its schedule the worker is at `at`: the debt forgiven after stalls, and
    /// what is still due. Divided by the interval, the I/Os the rate asked for that did not
    /// start: a worker not run on time (a busy CPU) or with every slot busy (the storage).
    pub fn behind_ns(&self, at: u64) -> u64 {
        self.forgiven_ns + at.saturating_sub(self.next_ns)
    }

    /// Nothing starts before `t` (the next burst of `--burst`): the schedule resumes there
    /// rather than catching up on the pause.
    #[inline]
    pub fn hold_until(&mut self, t: u64) {
        self.next_ns = self.next_ns.max(t);
        self.pace_ns = self.pace_ns.max(t);
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
    fn a_worker_knows_how_far_behind_its_schedule_it_is_forgiven_debt_included() {
        const MS: u64 = 1_000_000;
        let mut p = Pacer::new(MS, Process::Linear, 1, 0);
        for now in (0..10 * MS).step_by(MS as usize) {
            p.take(now);
        }
        assert_eq!(p.behind_ns(10 * MS), 0, "on time");
        // stalled 300 ms: 200 ms of debt is forgiven at the next start, 100 ms is still due
        p.take(310 * MS);
        assert_eq!(p.behind_ns(310 * MS), 300 * MS - MS);
        // nothing started since: the 5 ms that fell due are behind too
        assert_eq!(p.behind_ns(315 * MS), 300 * MS - MS + 5 * MS);
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

    /// The most I/Os started within any `window_ns` of `starts`.
    fn most_within(starts: &[u64], window_ns: u64) -> usize {
        let mut lo = 0;
        let mut best = 0;
        for (hi, &t) in starts.iter().enumerate() {
            while t - starts[lo] >= window_ns {
                lo += 1;
            }
            best = best.max(hi - lo + 1);
        }
        best
    }

    /// A worker that sleeps until each I/O is due, once stalled for `stall_ns` at `at_ns`: the
    /// start times over `run_ns`.
    fn starts_around_a_stall(iv: u64, at_ns: u64, stall_ns: u64, run_ns: u64) -> Vec<u64> {
        let mut p = Pacer::new(iv, Process::Linear, 1, 0);
        let mut starts = vec![];
        let mut now = 0;
        while now < run_ns {
            for _ in 0..start_all_due(&mut p, now) {
                starts.push(now);
            }
            now = p.due();
            if now >= at_ns && now < at_ns + stall_ns {
                now = at_ns + stall_ns;
            }
        }
        starts
    }

    #[test]
    fn a_stall_is_made_up_without_a_burst() {
        // 7,000 IOPS on one thread, stalled 10 ms: the 70 I/Os due are made up at twice the
        // rate, one at a time, not sent together; the second's rate is the rate asked
        let iv = 1_000_000_000 / 7_000;
        let starts = starts_around_a_stall(iv, 500_000_000, 10_000_000, 1_000_000_000);
        assert!((6_995..=7_001).contains(&starts.len()), "{}", starts.len());
        assert!(most_within(&starts, 100_000) <= 3);
        assert_eq!(most_within(&starts, 1), 2);
        // 90,000 IOPS: at most about 100 us worth, at once and within any 100 us
        let iv = 1_000_000_000 / 90_000;
        let starts = starts_around_a_stall(iv, 500_000_000, 10_000_000, 1_000_000_000);
        assert!(
            (89_990..=90_001).contains(&starts.len()),
            "{}",
            starts.len()
        );
        let expected = (100_000 / iv) as usize;
        assert!(
            most_within(&starts, 100_000) <= 2 * expected + 2,
            "{}",
            expected
        );
        // a stall beyond the debt kept is not made up
        let iv = 1_000_000_000 / 1_000;
        let starts = starts_around_a_stall(iv, 100_000_000, 500_000_000, 1_000_000_000);
        assert!((595..=605).contains(&starts.len()), "{}", starts.len());
    }

    #[test]
    fn a_late_wake_up_starts_100_us_worth_at_most_then_two() {
        let iv = 1_000_000_000 / 90_000;
        let mut p = Pacer::new(iv, Process::Linear, 1, 0);
        // 100 us late: the 10 I/Os due then; later: two, then one every half gap
        assert_eq!(start_all_due(&mut p, 100_000) as u64, 100_000 / iv + 1);
        assert_eq!(start_all_due(&mut p, 10_000_000), 2);
        assert_eq!(start_all_due(&mut p, 10_000_000 + iv / 2), 1);
        let mut p = Pacer::new(1_000_000_000 / 7_000, Process::Linear, 1, 0);
        assert_eq!(start_all_due(&mut p, 10_000_000), 2);
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
    fn an_io_due_within_a_turn_of_the_loop_may_start_now() {
        let mut p = Pacer::new(1_000_000, Process::Linear, 1, 0);
        p.take(0);
        assert!(!p.ready(1_000_000 - EARLY_NS - 1));
        assert!(p.ready(1_000_000 - EARLY_NS));
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

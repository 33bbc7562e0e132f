//! `--submit auto`: which io_uring submission mode keeps this device busiest, found by trying
//! both on the running workload rather than guessed from its shape.
//!
//! Why a trial and not a rule: on this project's reference VM, one thread at qd 32 completes
//! 20–30 % more I/Os when each I/O gets its own `io_uring_enter` (the virtual disk answers a
//! batch in one bunch, so the first requests of a batch wait for the last), while four threads on
//! two cores complete 10–20 % more in batch mode (the extra system calls take CPU the I/O needs).
//! Whether a device batches, and whether the CPU is the limit, depends on the device, the
//! hypervisor, the block size and the thread count; a measurement answers it for all of them.
//!
//! How: over the last part of the warm-up (at most [`MAX_TRIAL_NS`]; at least [`MIN_TRIAL_NS`],
//! running into the measured window when the warm-up is shorter) the worker alternates the two
//! modes in [`SLICE_NS`] slices timed from the test's common start, so every worker of a test
//! switches at the same instants and a mode is judged with all workers in it. The first slice
//! is not counted (the queue fills). Completions are counted per slice at the moment they are
//! reaped; at the end the mode with the higher rate is kept, and batch on a tie within
//! [`TIE_MARGIN`], since it costs less CPU. Alternating in short slices cancels the disk's own
//! drift, which on a shared disk is larger than the difference being measured over seconds.
//!
//! Nothing here allocates or makes a system call: one comparison per loop, and a division when
//! a slice edge passes.

/// Length of one slice of the trial.
pub const SLICE_NS: u64 = 100_000_000;
/// The trial never runs longer than this, so a long warm-up is not spent switching.
pub const MAX_TRIAL_NS: u64 = 2_000_000_000;
/// The trial runs at least this long, so each mode gets a few slices.
pub const MIN_TRIAL_NS: u64 = 600_000_000;
/// A rate difference below this share is a tie.
pub const TIE_MARGIN: f64 = 0.03;

/// What one worker's trial found and chose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoOutcome {
    /// The mode kept after the trial.
    pub each: bool,
    /// Completions and time counted in slices of each mode.
    pub ios_each: u64,
    pub ios_batch: u64,
    pub ns_each: u64,
    pub ns_batch: u64,
    /// Whether the trial ended before the worker stopped (a test shorter than the trial does
    /// not finish it; the choice is then made on what was counted).
    pub finished: bool,
}

impl AutoOutcome {
    pub fn rate_each(&self) -> Option<f64> {
        (self.ns_each > 0).then(|| self.ios_each as f64 * 1e9 / self.ns_each as f64)
    }

    pub fn rate_batch(&self) -> Option<f64> {
        (self.ns_batch > 0).then(|| self.ios_batch as f64 * 1e9 / self.ns_batch as f64)
    }
}

/// The trial's state on one worker.
///
/// The worker calls [`AutoTrial::at`] with each clock reading before it queues new I/O, and
/// [`AutoTrial::count`] with the completions it reaped since; the time between two readings and
/// the completions reaped at the end of it belong to the mode that was in effect.
pub struct AutoTrial {
    start_ns: u64,
    trial_start_ns: u64,
    /// Intervals starting before this (the trial's first slice) are not counted.
    count_from_ns: u64,
    end_ns: u64,
    /// The previous clock reading (`0`: none yet).
    last_ns: u64,
    each: bool,
    ios: [u64; 2],
    ns: [u64; 2],
    done: bool,
}

impl AutoTrial {
    /// A trial for a test whose workers start at `start_ns` and whose measured window opens at
    /// `measure_start_ns`.
    pub fn new(start_ns: u64, measure_start_ns: u64) -> Self {
        let end_ns = measure_start_ns.max(start_ns.saturating_add(MIN_TRIAL_NS));
        let trial_start_ns = end_ns.saturating_sub(MAX_TRIAL_NS).max(start_ns);
        Self {
            start_ns,
            trial_start_ns,
            count_from_ns: trial_start_ns.saturating_add(SLICE_NS),
            end_ns,
            last_ns: 0,
            each: false,
            ios: [0; 2],
            ns: [0; 2],
            done: false,
        }
    }

    /// Where the trial ends: after this instant the kept mode runs.
    pub fn end_ns(&self) -> u64 {
        self.end_ns
    }

    #[inline]
    fn counting(&self) -> bool {
        !self.done && self.last_ns >= self.count_from_ns
    }

    /// The mode to run from `now` on: `Some(each)` when it differs from the one in effect.
    #[inline]
    pub fn at(&mut self, now: u64) -> Option<bool> {
        if self.done || now < self.trial_start_ns {
            return None;
        }
        if self.counting() {
            self.ns[usize::from(self.each)] += now.saturating_sub(self.last_ns);
        }
        self.last_ns = now;
        let want = if now >= self.end_ns {
            self.done = true;
            self.decide()
        } else {
            ((now - self.start_ns) / SLICE_NS) % 2 == 1
        };
        (want != self.each).then(|| {
            self.each = want;
            want
        })
    }

    /// Counts `n` completions reaped since the last [`AutoTrial::at`].
    #[inline]
    pub fn count(&mut self, n: u64) {
        if self.counting() {
            self.ios[usize::from(self.each)] += n;
        }
    }

    fn rate(&self, each: bool) -> Option<f64> {
        let m = usize::from(each);
        (self.ns[m] > 0).then(|| self.ios[m] as f64 * 1e9 / self.ns[m] as f64)
    }

    /// Each if it completed more I/Os per second than batch by more than the tie margin.
    fn decide(&self) -> bool {
        match (self.rate(true), self.rate(false)) {
            (Some(e), Some(b)) => e > b * (1.0 + TIE_MARGIN),
            _ => false,
        }
    }

    /// What the trial found; a trial cut short decides on what it counted.
    pub fn outcome(&self) -> AutoOutcome {
        let each = if self.done { self.each } else { self.decide() };
        AutoOutcome {
            each,
            ios_each: self.ios[1],
            ios_batch: self.ios[0],
            ns_each: self.ns[1],
            ns_batch: self.ns[0],
            finished: self.done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives a trial with a device that completes `per_slice(each)` I/Os per slice, in ten
    /// steps per slice, and returns its outcome.
    fn drive(warmup_ns: u64, per_slice: impl Fn(bool) -> u64) -> AutoOutcome {
        let start = 1_000_000;
        let mut t = AutoTrial::new(start, start + warmup_ns);
        let mut each = false;
        let mut now = start;
        while now < t.end_ns() + SLICE_NS {
            if let Some(e) = t.at(now) {
                each = e;
            }
            t.count(per_slice(each) / 10);
            now += SLICE_NS / 10;
        }
        t.outcome()
    }

    #[test]
    fn keeps_the_mode_that_completes_more() {
        let o = drive(2_000_000_000, |each| if each { 1300 } else { 1000 });
        assert!(o.each && o.finished);
        let (e, b) = (o.rate_each().unwrap(), o.rate_batch().unwrap());
        assert!((e / b - 1.3).abs() < 0.01, "{e} {b}");
        let o = drive(2_000_000_000, |each| if each { 900 } else { 1000 });
        assert!(!o.each);
    }

    #[test]
    fn a_tie_keeps_batch() {
        let o = drive(2_000_000_000, |each| if each { 1020 } else { 1000 });
        assert!(!o.each, "2 % is inside the tie margin");
    }

    #[test]
    fn both_modes_get_slices_and_the_first_is_not_counted() {
        let o = drive(2_000_000_000, |_| 1000);
        // 20 slices of the 2 s warm-up, the first skipped: 19 counted
        assert_eq!(o.ns_each + o.ns_batch, 19 * SLICE_NS);
        assert!(o.ns_each.abs_diff(o.ns_batch) <= SLICE_NS);
        assert_eq!(o.ios_each + o.ios_batch, 19 * 1000);
    }

    #[test]
    fn a_long_warmup_tries_only_at_its_end_and_a_short_one_runs_past_it() {
        let t = AutoTrial::new(0, 10_000_000_000);
        assert_eq!(t.trial_start_ns, 8_000_000_000);
        assert_eq!(t.count_from_ns, 8_000_000_000 + SLICE_NS);
        let t = AutoTrial::new(0, 0);
        assert_eq!(t.end_ns(), MIN_TRIAL_NS);
        let o = drive(0, |each| if each { 2000 } else { 1000 });
        assert!(o.each);
    }

    #[test]
    fn a_trial_cut_short_decides_on_what_it_counted() {
        let mut t = AutoTrial::new(0, 2_000_000_000);
        let mut each = false;
        for step in 1..50u64 {
            if let Some(e) = t.at(step * SLICE_NS / 10) {
                each = e;
            }
            t.count(if each { 300 } else { 100 });
        }
        let o = t.outcome();
        assert!(!o.finished);
        assert!(o.each);
    }
}

//! When each request is due. `recorded`: at its recorded time since the trace's first request,
//! divided by the speed, whatever the device does (open loop: a slower device builds a queue,
//! as it would under the real load). `fast`: no time, only a depth: a request goes when fewer
//! I/Os are in flight than were in flight at the device when it was issued in the recording
//! (itself included), or a fixed depth when the trace has no completion times.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use iocap_trace::IoRecord;

/// How requests are timed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timing {
    /// Open loop at the recorded times divided by `speed`.
    Recorded { speed: f64 },
    /// As soon as the recorded queue depth allows.
    Fast,
}

impl Timing {
    pub fn name(self) -> &'static str {
        match self {
            Timing::Recorded { .. } => "recorded",
            Timing::Fast => "fast",
        }
    }

    /// The timing of a name ([`Timing::name`]), `recorded` at the recorded rate (speed 1).
    pub fn parse(s: &str) -> Option<Self> {
        [Timing::Recorded { speed: 1.0 }, Timing::Fast]
            .into_iter()
            .find(|t| t.name() == s)
    }
}

/// The due times of a recorded-time replay, in the clock's ns.
#[derive(Debug, Clone)]
pub struct Schedule {
    speed: f64,
    start_ns: u64,
    first_ns: Option<u64>,
    last_due_ns: u64,
}

impl Schedule {
    /// A schedule whose first request is due at `start_ns`.
    pub fn new(speed: f64, start_ns: u64) -> Self {
        Self {
            speed: if speed > 0.0 { speed } else { 1.0 },
            start_ns,
            first_ns: None,
            last_due_ns: start_ns,
        }
    }

    /// When the request recorded at `issue_ns` is due. Never earlier than the request before
    /// it: a trace's small disorder (per-CPU buffers) is not counted as lag.
    pub fn due_ns(&mut self, issue_ns: u64) -> u64 {
        let first = *self.first_ns.get_or_insert(issue_ns);
        let since = issue_ns.saturating_sub(first) as f64 / self.speed;
        // `as` saturates a gap past u64 (a tiny --speed, a corrupt time) at u64::MAX
        let due = self.start_ns.saturating_add(since.round() as u64);
        self.last_due_ns = self.last_due_ns.max(due);
        self.last_due_ns
    }
}

/// The recorded queue depth at each request's issue: how many requests were in flight at the
/// device then, itself included. Memory: one entry per request in flight in the recording.
#[derive(Debug, Default)]
pub struct RecordedDepth {
    completions: BinaryHeap<Reverse<u64>>,
}

impl RecordedDepth {
    /// The depth at `r`'s issue; `None` when `r` has no completion time.
    pub fn push(&mut self, r: &IoRecord) -> Option<usize> {
        while self
            .completions
            .peek()
            .is_some_and(|Reverse(c)| *c <= r.issue_ns)
        {
            self.completions.pop();
        }
        let done = r.complete_ns?;
        self.completions.push(Reverse(done));
        Some(self.completions.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(issue_ns: u64, complete_ns: Option<u64>) -> IoRecord {
        IoRecord {
            issue_ns,
            complete_ns,
            ..crate::tests::record(iocap_trace::Op::Read, 0, 4096)
        }
    }

    /// `--timing` takes exactly the names the result records; `recorded` at the recorded rate.
    #[test]
    fn each_timing_parses_back_from_its_name() {
        assert_eq!(
            Timing::parse("recorded"),
            Some(Timing::Recorded { speed: 1.0 })
        );
        assert_eq!(Timing::parse("fast"), Some(Timing::Fast));
        for t in [Timing::Recorded { speed: 2.0 }, Timing::Fast] {
            assert_eq!(Timing::parse(t.name()).map(Timing::name), Some(t.name()));
        }
        assert_eq!(Timing::parse("asap"), None);
    }

    #[test]
    fn due_times_follow_the_recording_from_the_start() {
        let mut s = Schedule::new(1.0, 1_000);
        assert_eq!(s.due_ns(5_000_000), 1_000);
        assert_eq!(s.due_ns(5_250_000), 251_000);
        assert_eq!(s.due_ns(7_000_000), 2_001_000);
    }

    #[test]
    fn speed_divides_the_recorded_times() {
        let mut s = Schedule::new(4.0, 0);
        s.due_ns(100);
        assert_eq!(s.due_ns(4_000_100), 1_000_000);
    }

    #[test]
    fn disorder_is_not_scheduled_back_in_time() {
        let mut s = Schedule::new(1.0, 0);
        s.due_ns(0);
        assert_eq!(s.due_ns(2_000), 2_000);
        assert_eq!(s.due_ns(1_500), 2_000);
    }

    #[test]
    fn recorded_depth_counts_what_was_in_flight() {
        let mut d = RecordedDepth::default();
        assert_eq!(d.push(&rec(0, Some(100))), Some(1));
        assert_eq!(d.push(&rec(10, Some(50))), Some(2));
        assert_eq!(d.push(&rec(20, Some(200))), Some(3));
        // the one completed at 50 is gone, the others are still in flight
        assert_eq!(d.push(&rec(60, Some(70))), Some(3));
        assert_eq!(d.push(&rec(150, Some(160))), Some(2));
        assert_eq!(d.push(&rec(300, None)), None);
    }
}

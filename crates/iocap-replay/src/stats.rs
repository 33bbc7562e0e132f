//! What the replay loop counts: per trace operation, the requests seen, replayed, skipped and
//! failed; per replayed kind, a latency histogram; the time-weighted queue depth; the schedule
//! lag. All fixed-size, made before the loop: nothing is allocated per request.

use hdrhistogram::Histogram;
use iocap_model::replay::{Lag, OpLatency, ReplayOp};
use iocap_model::workload::Percentiles;
use iocap_trace::Op;

/// The kinds the replay issues, each with its latency histogram.
pub const KINDS: [Op; 4] = [Op::Read, Op::Write, Op::Flush, Op::Discard];
pub const READ: usize = 0;
pub const WRITE: usize = 1;
pub const FLUSH: usize = 2;
pub const DISCARD: usize = 3;

/// A request later than this after its due time is late.
pub const LATE_NS: u64 = 1_000_000;

/// Per trace operation ([`Op::ALL`] order).
#[derive(Debug, Clone, Copy, Default)]
pub struct OpCount {
    pub recorded: u64,
    pub replayed: u64,
    pub bytes: u64,
    pub durable: u64,
    pub skipped: u64,
    pub errors: u64,
}

pub struct Stats {
    pub ops: [OpCount; 6],
    pub latency: [Histogram<u64>; 4],
    pub lag: Histogram<u64>,
    pub late: u64,
    pub waited_for_slot: u64,
    pub qd: DepthMeter,
    pub first_issue_ns: Option<u64>,
    pub last_done_ns: u64,
    /// The first request that failed or transferred less than its length.
    pub first_fault: Option<Fault>,
}

/// A request that failed: its kind (`READ`, `WRITE`, `FLUSH`), where, how long, and the
/// completion's result (a negative errno, or the bytes of a short transfer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub kind: usize,
    pub offset: u64,
    pub len: u32,
    pub result: i32,
}

fn histogram() -> Histogram<u64> {
    // 1 ns to an hour at 3 significant digits; saturating records keep anything longer
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

impl Default for Stats {
    fn default() -> Self {
        Self {
            ops: [OpCount::default(); 6],
            latency: std::array::from_fn(|_| histogram()),
            lag: histogram(),
            late: 0,
            waited_for_slot: 0,
            qd: DepthMeter::default(),
            first_issue_ns: None,
            first_fault: None,
            last_done_ns: 0,
        }
    }
}

impl Stats {
    pub fn op(&mut self, op: Op) -> &mut OpCount {
        &mut self.ops[op as usize]
    }

    /// A request issued `lag_ns` after its due time.
    pub fn issued(&mut self, lag_ns: u64) {
        self.lag.saturating_record(lag_ns.max(1));
        if lag_ns > LATE_NS {
            self.late += 1;
        }
    }

    pub fn completed(&mut self, kind: usize, latency_ns: u64) {
        self.latency[kind].saturating_record(latency_ns.max(1));
    }

    /// Wall time from the first issue to the last completion.
    pub fn elapsed_s(&self) -> f64 {
        self.first_issue_ns
            .map_or(0.0, |f| self.last_done_ns.saturating_sub(f) as f64 / 1e9)
    }

    pub fn lag_figures(&self) -> Lag {
        let n = self.lag.len();
        let q = |p: f64| {
            if n == 0 {
                0.0
            } else {
                self.lag.value_at_quantile(p) as f64 / 1e3
            }
        };
        Lag {
            p50_us: q(0.5),
            p99_us: q(0.99),
            p999_us: q(0.999),
            max_us: if n == 0 {
                0.0
            } else {
                self.lag.max() as f64 / 1e3
            },
            late_1ms: self.late,
            late_1ms_pct: if n == 0 {
                0.0
            } else {
                self.late as f64 * 100.0 / n as f64
            },
            waited_for_slot: self.waited_for_slot,
        }
    }

    pub fn latency_rows(&self) -> Vec<OpLatency> {
        KINDS
            .iter()
            .zip(&self.latency)
            .filter(|(_, h)| !h.is_empty())
            .map(|(op, h)| OpLatency {
                op: *op,
                count: h.len(),
                latency: percentiles(h),
            })
            .collect()
    }

    pub fn op_rows(&self) -> Vec<ReplayOp> {
        Op::ALL
            .iter()
            .zip(&self.ops)
            .filter(|(_, c)| c.recorded > 0)
            .map(|(op, c)| ReplayOp {
                op: *op,
                recorded: c.recorded,
                replayed: c.replayed,
                bytes: c.bytes,
                durable: c.durable,
                skipped: c.skipped,
                errors: c.errors,
            })
            .collect()
    }
}

/// Percentiles of a histogram of ns, in µs.
pub fn percentiles(h: &Histogram<u64>) -> Percentiles {
    let us = |v: u64| v as f64 / 1e3;
    Percentiles {
        mean_us: h.mean() / 1e3,
        p50_us: us(h.value_at_quantile(0.5)),
        p90_us: us(h.value_at_quantile(0.9)),
        p99_us: us(h.value_at_quantile(0.99)),
        p999_us: us(h.value_at_quantile(0.999)),
        max_us: us(h.max()),
    }
}

/// The time-weighted number of I/Os in flight, and its maximum.
#[derive(Debug, Default, Clone, Copy)]
pub struct DepthMeter {
    since_ns: Option<u64>,
    last_ns: u64,
    depth: u64,
    area: u128,
    pub max: u64,
}

impl DepthMeter {
    /// The depth becomes `depth` at `now_ns`.
    pub fn set(&mut self, now_ns: u64, depth: u64) {
        if self.since_ns.is_some() {
            let dt = now_ns.saturating_sub(self.last_ns);
            self.area += u128::from(dt) * u128::from(self.depth);
        } else {
            self.since_ns = Some(now_ns);
        }
        self.last_ns = now_ns.max(self.last_ns);
        self.depth = depth;
        self.max = self.max.max(depth);
    }

    pub fn mean(&self) -> f64 {
        let span = self.since_ns.map_or(0, |s| self.last_ns.saturating_sub(s));
        if span == 0 {
            return self.depth as f64;
        }
        self.area as f64 / span as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_is_weighted_by_time() {
        let mut d = DepthMeter::default();
        d.set(1_000, 1);
        d.set(2_000, 3);
        d.set(3_000, 0);
        // 1 for 1 µs, 3 for 1 µs
        assert!((d.mean() - 2.0).abs() < 1e-9);
        assert_eq!(d.max, 3);
    }

    #[test]
    fn lag_counts_the_late_share() {
        let mut s = Stats::default();
        for lag in [0, 10_000, 500_000, 2_000_000] {
            s.issued(lag);
        }
        let l = s.lag_figures();
        assert_eq!(l.late_1ms, 1);
        assert!((l.late_1ms_pct - 25.0).abs() < 1e-9);
        assert!((l.max_us - 2000.0).abs() < 2.0, "{l:?}");
    }
}

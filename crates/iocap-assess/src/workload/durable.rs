//! Flushes, FUA writes, and how long a write took to become durable: a write is made durable
//! by the first flush on its device issued after the write completed (a log write, then its
//! fdatasync), and a FUA write by its own completion.

use std::collections::{HashMap, VecDeque};

use hdrhistogram::Histogram;
use iocap_model::workload::{Durability, Percentiles};
use iocap_trace::{DevId, IoFlags, IoRecord, Op};

/// Writes awaiting a flush per device at most (the oldest are dropped beyond: a device that is
/// never flushed makes nothing durable this way).
const MAX_WAITING: usize = 65_536;

pub struct Durable {
    waiting: HashMap<DevId, VecDeque<(u64, u64)>, super::Fast>,
    hist: Histogram<u64>,
    flushes: u64,
    fua: u64,
}

impl Default for Durable {
    fn default() -> Self {
        Durable {
            waiting: HashMap::default(),
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"),
            flushes: 0,
            fua: 0,
        }
    }
}

impl Durable {
    pub fn push(&mut self, r: &IoRecord) {
        let fua = r.op == Op::Write && r.flags.has(IoFlags::FUA);
        self.fua += u64::from(fua);
        if fua {
            if let Some(l) = r.latency_ns() {
                self.hist.saturating_record(l.max(1));
            }
            return;
        }
        let flush = r.op == Op::Flush || r.op == Op::Write && r.flags.has(IoFlags::PREFLUSH);
        if flush {
            self.flushes += 1;
            if let (Some(flush_done), Some(q)) = (r.complete_ns, self.waiting.get_mut(&r.dev)) {
                // writes completed before this flush was issued are what it makes durable
                while let Some(&(issue, done)) = q.front() {
                    if done > r.issue_ns {
                        break;
                    }
                    q.pop_front();
                    self.hist
                        .saturating_record(flush_done.saturating_sub(issue).max(1));
                }
            }
        }
        if let (Op::Write, Some(done)) = (r.op, r.complete_ns) {
            let q = self.waiting.entry(r.dev).or_default();
            if q.len() == MAX_WAITING {
                q.pop_front();
            }
            q.push_back((r.issue_ns, done));
        }
    }

    pub fn finish(self, duration_s: f64) -> Durability {
        let d = duration_s.max(1e-9);
        Durability {
            flushes: self.flushes,
            fua_writes: self.fua,
            flush_per_s: self.flushes as f64 / d,
            fua_per_s: self.fua as f64 / d,
            durable_writes: self.hist.len(),
            durable_latency: (!self.hist.is_empty()).then(|| percentiles(&self.hist)),
        }
    }
}

/// p50 ... max of a histogram of ns, in µs.
pub fn percentiles(h: &Histogram<u64>) -> Percentiles {
    let q = |x: f64| h.value_at_quantile(x) as f64 / 1000.0;
    Percentiles {
        mean_us: h.mean() / 1000.0,
        p50_us: q(0.5),
        p90_us: q(0.9),
        p99_us: q(0.99),
        p999_us: q(0.999),
        max_us: h.max() as f64 / 1000.0,
    }
}

//! Requests in flight over time: each issue raises the depth, each completion lowers it. The
//! records come in issue order; completions wait in a min-heap until time passes them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use iocap_model::workload::{DepthShare, QueueDepth};
use iocap_trace::IoRecord;

/// Depths counted one by one; the last row holds every depth from it up.
const DEPTHS: usize = 65;
/// Points of the per-second series at most; beyond, buckets are merged in pairs.
pub const MAX_POINTS: usize = 3600;

#[derive(Default)]
pub struct Depth {
    now: u64,
    depth: u64,
    first: Option<u64>,
    done: BinaryHeap<Reverse<u64>>,
    time_at: Vec<u64>,
    issued_at: Vec<u64>,
    /// per bucket: the integral of depth over time (depth·ns), and the max
    integral: Vec<f64>,
    max: Vec<u64>,
    bucket_ns: u64,
    deepest: u64,
}

impl Depth {
    /// `t0`: the trace's first issue (absolute ns of the trace).
    pub fn push(&mut self, r: &IoRecord, t0: u64) {
        let Some(done) = r.complete_ns else {
            return;
        };
        if self.first.is_none() {
            self.first = Some(t0);
            self.time_at = vec![0; DEPTHS];
            self.issued_at = vec![0; DEPTHS];
            self.now = r.issue_ns;
            self.bucket_ns = 1_000_000_000;
        }
        self.advance(r.issue_ns);
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        self.issued_at[(self.depth as usize).min(DEPTHS - 1)] += 1;
        let b = self.bucket(r.issue_ns);
        self.max[b] = self.max[b].max(self.depth);
        self.done.push(Reverse(done.max(r.issue_ns)));
    }

    /// Moves time to `t`, taking every completion before it.
    fn advance(&mut self, t: u64) {
        while let Some(&Reverse(c)) = self.done.peek() {
            if c > t {
                break;
            }
            self.done.pop();
            self.spend(c);
            self.depth -= 1;
        }
        self.spend(t);
    }

    /// Accounts the time from `now` to `t` at the current depth.
    fn spend(&mut self, t: u64) {
        if t <= self.now {
            return;
        }
        self.time_at[(self.depth as usize).min(DEPTHS - 1)] += t - self.now;
        let mut from = self.now;
        while from < t {
            let b = self.bucket(from);
            let first = self.first.unwrap_or(0);
            let end = (first + (b as u64 + 1) * self.bucket_ns)
                .min(t)
                .max(from + 1);
            self.integral[b] += self.depth as f64 * (end - from) as f64;
            from = end;
        }
        self.now = t;
    }

    /// The series' index of time `t`, growing (and merging) the series as needed.
    fn bucket(&mut self, t: u64) -> usize {
        let rel = t.saturating_sub(self.first.unwrap_or(0));
        let mut b = (rel / self.bucket_ns) as usize;
        while b >= MAX_POINTS {
            self.integral = self.integral.chunks(2).map(|c| c.iter().sum()).collect();
            self.max = self
                .max
                .chunks(2)
                .map(|c| *c.iter().max().unwrap_or(&0))
                .collect();
            self.bucket_ns *= 2;
            b = (rel / self.bucket_ns) as usize;
        }
        if b >= self.integral.len() {
            self.integral.resize(b + 1, 0.0);
            self.max.resize(b + 1, 0);
        }
        b
    }

    /// The description, its series cut or padded to the rate series' `points`.
    pub fn finish(mut self, bucket_s: f64, points: usize) -> QueueDepth {
        if self.first.is_some() {
            let end = self.done.iter().map(|r| r.0).max().unwrap_or(self.now);
            self.advance(end);
        }
        self.time_at.resize(DEPTHS, 0);
        self.issued_at.resize(DEPTHS, 0);
        let total: u64 = self.time_at.iter().sum();
        let issued: u64 = self.issued_at.iter().sum();
        let mean = if total == 0 {
            0.0
        } else {
            self.time_at
                .iter()
                .enumerate()
                .map(|(d, &t)| d as f64 * t as f64)
                .sum::<f64>()
                / total as f64
        };
        // the depth the device spent most of its busy time at (what iostat's aqu-sz averages)
        let typical = (1..DEPTHS)
            .max_by_key(|&d| (self.time_at[d], Reverse(d)))
            .unwrap_or(0);
        let depths = (0..DEPTHS)
            .filter(|&d| self.time_at[d] > 0 || self.issued_at[d] > 0)
            .map(|d| DepthShare {
                depth: d as u64,
                time_pct: super::pct(self.time_at[d], total),
                issued_pct: super::pct(self.issued_at[d], issued),
            })
            .collect();
        let width = self.bucket_ns as f64;
        let scale = (bucket_s * 1e9 / width).max(1.0) as usize;
        let mut mean_s: Vec<f64> = self.integral.iter().map(|i| i / width).collect();
        let mut max_s = self.max;
        if scale > 1 {
            mean_s = mean_s
                .chunks(scale)
                .map(|c| c.iter().sum::<f64>() / c.len() as f64)
                .collect();
            max_s = max_s
                .chunks(scale)
                .map(|c| *c.iter().max().unwrap_or(&0))
                .collect();
        }
        mean_s.resize(points, 0.0);
        max_s.resize(points, 0);
        QueueDepth {
            depths,
            mean,
            max: self.deepest,
            typical: typical as u64,
            per_second_mean: mean_s,
            per_second_max: max_s,
        }
    }
}

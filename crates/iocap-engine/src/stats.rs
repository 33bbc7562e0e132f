//! Per-thread measurement, merged once at the end.
//!
//! Each worker owns an [`OpRecorder`] per operation class: an HDR histogram (2 significant
//! digits: at most 0.8 % quantisation error, 32 KiB whatever the run length) for percentiles,
//! plus exact count, sum, sum of squares, min and max, so that the mean, standard deviation and
//! extremes are exact rather than read back from buckets. Nothing here locks or allocates after
//! construction.
//!
//! [`LiveCounters`] feed the per-second series and the progress line: single-writer atomics that
//! the worker bumps with plain loads and stores (no locked instructions) and a monitor thread
//! reads once a second, diffing against its previous snapshot.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use hdrhistogram::Histogram;
use iocap_model::{LatencyUs, OpStats};

/// Largest latency the histograms resolve: one hour. Longer ones are clamped to it.
const HIST_MAX_NS: u64 = 3_600_000_000_000;

pub struct OpRecorder {
    pub hist: Histogram<u64>,
    pub ios: u64,
    pub bytes: u64,
    pub sum_ns: u64,
    pub sum_sq_ns: u128,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Default for OpRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl OpRecorder {
    pub fn new() -> Self {
        Self {
            hist: Histogram::new_with_bounds(1, HIST_MAX_NS, 2).expect("static bounds are valid"),
            ios: 0,
            bytes: 0,
            sum_ns: 0,
            sum_sq_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    #[inline]
    pub fn record(&mut self, lat_ns: u64, bytes: u64) {
        self.hist.saturating_record(lat_ns.max(1));
        self.ios += 1;
        self.bytes += bytes;
        self.sum_ns += lat_ns;
        self.sum_sq_ns += u128::from(lat_ns) * u128::from(lat_ns);
        self.min_ns = self.min_ns.min(lat_ns);
        self.max_ns = self.max_ns.max(lat_ns);
    }

    pub fn merge(&mut self, o: &OpRecorder) {
        self.hist.add(&o.hist).expect("same bounds");
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.sum_ns += o.sum_ns;
        self.sum_sq_ns += o.sum_sq_ns;
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
    }

    /// Counters and latency figures over a window of `duration_s` seconds.
    pub fn to_op_stats(&self, duration_s: f64) -> OpStats {
        let per_s = |x: f64| {
            if duration_s > 0.0 {
                x / duration_s
            } else {
                0.0
            }
        };
        OpStats {
            ios: self.ios,
            bytes: self.bytes,
            iops: per_s(self.ios as f64),
            mib_s: per_s(self.bytes as f64) / (1u64 << 20) as f64,
            mb_s: per_s(self.bytes as f64) / 1e6,
            lat_us: self.latency_us(),
            lat_hist_ns: (self.ios > 0).then(|| iocap_model::hist::encode_hist(&self.hist)),
        }
    }

    fn latency_us(&self) -> Option<LatencyUs> {
        if self.ios == 0 {
            return None;
        }
        let n = self.ios as f64;
        let mean = self.sum_ns as f64 / n;
        let var = if self.ios > 1 {
            ((self.sum_sq_ns as f64 - n * mean * mean) / (n - 1.0)).max(0.0)
        } else {
            0.0
        };
        let us = |ns: f64| ns / 1000.0;
        // the middle of the bucket, kept inside the exact extremes: the rule every view that
        // reads a stored histogram applies too
        let (lo, hi) = (us(self.min_ns as f64), us(self.max_ns as f64));
        let q = |p: f64| iocap_model::hist::quantile_within_us(&self.hist, p, lo, hi);
        Some(LatencyUs::from_quantiles(
            us(self.min_ns as f64),
            us(mean),
            us(var.sqrt()),
            us(self.max_ns as f64),
            q,
        ))
    }

    /// Number of recorded latencies in `[lo_ns, hi_ns)`, from the histogram.
    pub fn count_between(&self, lo_ns: u64, hi_ns: u64) -> u64 {
        self.hist
            .iter_recorded()
            .filter(|v| {
                let x = v.value_iterated_to();
                x >= lo_ns && x < hi_ns
            })
            .map(|v| v.count_at_value())
            .sum()
    }
}

/// One worker's recorders.
#[derive(Default)]
pub struct WorkerStats {
    pub read: OpRecorder,
    pub write: OpRecorder,
    pub sync: OpRecorder,
    /// Sum over I/Os of the part of their flight that lies inside the measured window: divided by
    /// the window's length, the time-averaged number of I/Os in flight.
    pub inflight_ns: u64,
    /// What `--submit auto`'s trial found on this worker; `None` for other modes.
    pub auto: Option<crate::autosubmit::AutoOutcome>,
}

impl WorkerStats {
    pub fn merge(&mut self, o: &WorkerStats) {
        self.read.merge(&o.read);
        self.write.merge(&o.write);
        self.sync.merge(&o.sync);
        self.inflight_ns += o.inflight_ns;
    }

    /// Reads and writes together.
    pub fn total(&self) -> OpRecorder {
        let mut t = OpRecorder::new();
        t.merge(&self.read);
        t.merge(&self.write);
        t
    }
}

/// Log-linear buckets for the live series: 128 per power of two (below 0.8 % error) from 1 ns
/// to 2^41 ns (about 36 minutes).
const SUB: u64 = 128;
const OCTAVES: u64 = 34;
pub const LIVE_BUCKETS: usize = (SUB + OCTAVES * SUB) as usize;

#[inline]
pub fn live_bucket(ns: u64) -> usize {
    if ns < SUB {
        return ns as usize;
    }
    let e = 63 - u64::from(ns.leading_zeros()); // >= 7
    let octave = (e - 7).min(OCTAVES - 1);
    let mant = if e - 7 >= OCTAVES {
        SUB - 1
    } else {
        (ns >> (e - 7)) - SUB
    };
    (SUB + octave * SUB + mant) as usize
}

/// The middle of bucket `i`, in nanoseconds.
pub fn live_bucket_value(i: usize) -> f64 {
    let i = i as u64;
    if i < SUB {
        return i as f64;
    }
    let octave = (i - SUB) / SUB;
    let mant = (i - SUB) % SUB + SUB;
    ((mant as f64) + 0.5) * (1u64 << octave) as f64
}

/// Counters a worker publishes for the monitor thread. Every worker writes its own on each
/// completion and they sit side by side in one `Vec`: aligned to 128 bytes (two cache lines,
/// as the adjacent-line prefetcher pairs them), no two workers' counters share a line.
#[repr(align(128))]
pub struct LiveCounters {
    ios: AtomicU64,
    bytes: AtomicU64,
    lat_sum_ns: AtomicU64,
    /// I/Os handed to the backend, and those of them submitted one by one (io_uring's each
    /// mode), for the share per second.
    submitted: AtomicU64,
    submitted_each: AtomicU64,
    buckets: Box<[AtomicU64]>,
}

impl Default for LiveCounters {
    fn default() -> Self {
        Self {
            ios: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            lat_sum_ns: AtomicU64::new(0),
            submitted: AtomicU64::new(0),
            submitted_each: AtomicU64::new(0),
            buckets: (0..LIVE_BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

#[inline]
fn bump(a: &AtomicU64, by: u64) {
    // Single writer: a plain load and store, no locked read-modify-write.
    a.store(a.load(Relaxed).wrapping_add(by), Relaxed);
}

impl LiveCounters {
    /// Called only by the owning worker.
    #[inline]
    pub fn add(&self, lat_ns: u64, bytes: u64) {
        bump(&self.ios, 1);
        bump(&self.bytes, bytes);
        bump(&self.lat_sum_ns, lat_ns);
        bump(&self.buckets[live_bucket(lat_ns)], 1);
    }

    /// Called only by the owning worker, for each I/O it queues; `each`: it goes to the kernel
    /// on its own.
    #[inline]
    pub fn submitted(&self, each: bool) {
        bump(&self.submitted, 1);
        if each {
            bump(&self.submitted_each, 1);
        }
    }

    /// Adds this worker's cumulative counters into `into`.
    pub fn accumulate(&self, into: &mut LiveSnapshot) {
        into.submitted += self.submitted.load(Relaxed);
        into.submitted_each += self.submitted_each.load(Relaxed);
        into.ios += self.ios.load(Relaxed);
        into.bytes += self.bytes.load(Relaxed);
        into.lat_sum_ns += self.lat_sum_ns.load(Relaxed);
        for (d, s) in into.buckets.iter_mut().zip(self.buckets.iter()) {
            *d += s.load(Relaxed);
        }
    }
}

/// Cumulative counters of all workers at one instant.
#[derive(Clone)]
pub struct LiveSnapshot {
    pub ios: u64,
    pub bytes: u64,
    pub lat_sum_ns: u64,
    pub submitted: u64,
    pub submitted_each: u64,
    pub buckets: Vec<u64>,
}

impl Default for LiveSnapshot {
    fn default() -> Self {
        Self {
            ios: 0,
            bytes: 0,
            lat_sum_ns: 0,
            submitted: 0,
            submitted_each: 0,
            buckets: vec![0; LIVE_BUCKETS],
        }
    }
}

impl LiveSnapshot {
    /// Adds another snapshot's counters (of other workers at the same instant).
    pub fn add(&mut self, o: &LiveSnapshot) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.lat_sum_ns += o.lat_sum_ns;
        self.submitted += o.submitted;
        self.submitted_each += o.submitted_each;
        for (d, s) in self.buckets.iter_mut().zip(&o.buckets) {
            *d += s;
        }
    }

    /// Quantile `q` of the latencies recorded between `prev` and `self`, in nanoseconds.
    pub fn quantile_since(&self, prev: &LiveSnapshot, q: f64) -> Option<f64> {
        let n = self.ios - prev.ios;
        if n == 0 {
            return None;
        }
        let rank = ((q * n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, (a, b)) in self.buckets.iter().zip(&prev.buckets).enumerate() {
            seen += a - b;
            if seen >= rank {
                return Some(live_bucket_value(i));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_live_counters_share_no_cache_line() {
        let live: Vec<LiveCounters> = (0..4).map(|_| LiveCounters::default()).collect();
        let line = |a: &AtomicU64| a as *const AtomicU64 as usize / 128;
        for pair in live.windows(2) {
            // every counter of one worker lies in its own 128-byte block, apart from the next's
            let (a, b) = (&pair[0], &pair[1]);
            for x in [
                &a.ios,
                &a.bytes,
                &a.lat_sum_ns,
                &a.submitted,
                &a.submitted_each,
            ] {
                for y in [
                    &b.ios,
                    &b.bytes,
                    &b.lat_sum_ns,
                    &b.submitted,
                    &b.submitted_each,
                ] {
                    assert_ne!(line(x), line(y), "two workers' counters share a line");
                }
            }
            assert_eq!(line(&a.ios), line(&a.submitted_each));
        }
    }

    #[test]
    fn exact_mean_min_max_and_percentiles() {
        let mut r = OpRecorder::new();
        for v in 1..=10_000u64 {
            r.record(v * 1000, 4096); // 1 µs .. 10 ms
        }
        let s = r.to_op_stats(2.0);
        assert_eq!(s.ios, 10_000);
        assert_eq!(s.iops, 5000.0);
        assert_eq!(s.bytes, 10_000 * 4096);
        let l = s.lat_us.unwrap();
        assert_eq!(l.min, 1.0);
        assert_eq!(l.max, 10_000.0);
        assert!((l.mean - 5000.5).abs() < 1e-9);
        // sample standard deviation of 1..=n is sqrt(n(n+1)/12)
        assert!((l.stddev - (10_000.0f64 * 10_001.0 / 12.0).sqrt()).abs() < 0.01);
        for (p, want) in [
            (l.p50, 5000.0),
            (l.p90, 9000.0),
            (l.p99, 9900.0),
            (l.p99_9, 9990.0),
        ] {
            assert!((p - want).abs() / want < 0.01, "{p} vs {want}");
        }
    }

    #[test]
    fn empty_has_no_latency() {
        let s = OpRecorder::new().to_op_stats(1.0);
        assert_eq!(s.ios, 0);
        assert!(s.lat_us.is_none());
    }

    #[test]
    fn merge_adds_up() {
        let mut a = WorkerStats::default();
        let mut b = WorkerStats::default();
        a.read.record(100, 512);
        b.write.record(300, 512);
        b.read.record(200, 512);
        a.merge(&b);
        let t = a.total();
        assert_eq!(t.ios, 3);
        assert_eq!(t.min_ns, 100);
        assert_eq!(t.max_ns, 300);
        assert_eq!(t.sum_ns, 600);
    }

    #[test]
    fn live_buckets_are_tight_and_monotonic() {
        let mut last = 0;
        for v in [1u64, 127, 128, 129, 1000, 65_432, 1 << 30, 1 << 40] {
            let b = live_bucket(v);
            assert!(b >= last);
            last = b;
            let mid = live_bucket_value(b);
            assert!((mid - v as f64).abs() / (v as f64) < 0.008, "{v} -> {mid}");
        }
        assert!(live_bucket(u64::MAX) < LIVE_BUCKETS);
    }

    #[test]
    fn live_quantile_over_an_interval() {
        let c = LiveCounters::default();
        let mut before = LiveSnapshot::default();
        c.accumulate(&mut before);
        for v in 1..=100u64 {
            c.add(v * 10_000, 1);
        }
        let mut after = LiveSnapshot::default();
        c.accumulate(&mut after);
        let p99 = after.quantile_since(&before, 0.99).unwrap();
        assert!((p99 - 990_000.0).abs() / 990_000.0 < 0.01, "{p99}");
        assert_eq!(after.quantile_since(&after, 0.99), None);
    }
}

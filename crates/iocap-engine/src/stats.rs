//! Per-thread measurement, merged once at the end.
//!
//! Each worker owns an [`OpRecorder`] per operation class: an HDR histogram (2 significant
//! digits: at most 0.8 % quantisation error, 32 KiB whatever the run length) for percentiles,
//! plus exact count, sum, sum of squares, min and max, so that the mean, standard deviation and
//! extremes are exact rather than read back from buckets. Nothing here locks or allocates after
//! construction.
//!
//! The live counters that feed the series and the progress line are in `live`.

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
    /// A throttled worker: how far behind its schedule it ended (`Pacer::behind_ns`), summed
    /// over the workers merged.
    pub behind_ns: u64,
}

impl WorkerStats {
    pub fn merge(&mut self, o: &WorkerStats) {
        self.read.merge(&o.read);
        self.write.merge(&o.write);
        self.sync.merge(&o.sync);
        self.inflight_ns += o.inflight_ns;
        self.behind_ns += o.behind_ns;
    }

    /// Reads and writes together.
    pub fn total(&self) -> OpRecorder {
        let mut t = OpRecorder::new();
        t.merge(&self.read);
        t.merge(&self.write);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

//! The live counters behind the series and the progress line.
//!
//! Each worker publishes its completions in a [`LiveCounters`]: single-writer atomics that it
//! bumps with plain loads and stores (no locked instructions), reads and writes apart, with the
//! sums a mean and a standard deviation need and the interval's extremes. The monitor thread
//! reads them at each interval's edge ([`LiveCounters::accumulate`] for the cumulative sums,
//! [`LiveCounters::take_extremes`] for the minimum and maximum since the last edge) and turns
//! the differences into the series: the test's ([`interval`] over all of a workload's workers)
//! and, when asked, each worker's.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use iocap_model::{IntervalLatency, IntervalOps};

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

/// Reads or writes: index 0 and 1 of the per-class arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Read = 0,
    Write = 1,
}

/// One class's counters. `lat_sq_sum` holds the bits of an `f64` (the sum of squared
/// nanoseconds, which outgrows a `u64` after a few thousand one-second latencies); `min_ns` and
/// `max_ns` are the extremes since the monitor last took them.
struct ClassCounters {
    ios: AtomicU64,
    bytes: AtomicU64,
    lat_sum_ns: AtomicU64,
    lat_sq_sum: AtomicU64,
    min_ns: AtomicU64,
    max_ns: AtomicU64,
}

impl Default for ClassCounters {
    fn default() -> Self {
        Self {
            ios: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            lat_sum_ns: AtomicU64::new(0),
            lat_sq_sum: AtomicU64::new(0f64.to_bits()),
            min_ns: AtomicU64::new(u64::MAX),
            max_ns: AtomicU64::new(0),
        }
    }
}

/// Counters a worker publishes for the monitor thread. Every worker writes its own on each
/// completion and they sit side by side in one `Vec`: aligned to 128 bytes (two cache lines,
/// as the adjacent-line prefetcher pairs them), no two workers' counters share a line.
#[repr(align(128))]
pub struct LiveCounters {
    class: [ClassCounters; 2],
    /// I/Os handed to the backend, and those of them submitted one by one (io_uring's each
    /// mode), for the share per second.
    submitted: AtomicU64,
    submitted_each: AtomicU64,
    buckets: Box<[AtomicU64]>,
}

impl Default for LiveCounters {
    fn default() -> Self {
        Self {
            class: [ClassCounters::default(), ClassCounters::default()],
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
    /// Called only by the owning worker, for each completed read or write.
    #[inline]
    pub fn add(&self, class: Class, lat_ns: u64, bytes: u64) {
        let c = &self.class[class as usize];
        bump(&c.ios, 1);
        bump(&c.bytes, bytes);
        bump(&c.lat_sum_ns, lat_ns);
        let sq = f64::from_bits(c.lat_sq_sum.load(Relaxed)) + (lat_ns as f64) * (lat_ns as f64);
        c.lat_sq_sum.store(sq.to_bits(), Relaxed);
        // the monitor may take the extremes between the load and the store: the I/O completing
        // then lands in the next interval's extremes, which is where it finished
        if lat_ns < c.min_ns.load(Relaxed) {
            c.min_ns.store(lat_ns, Relaxed);
        }
        if lat_ns > c.max_ns.load(Relaxed) {
            c.max_ns.store(lat_ns, Relaxed);
        }
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

    /// Adds this worker's cumulative counters into `into`; `buckets`: the latency histogram
    /// too (the progress line and the series' p99 need it, a worker's own series does not).
    pub fn accumulate(&self, into: &mut LiveSnapshot, buckets: bool) {
        into.submitted += self.submitted.load(Relaxed);
        into.submitted_each += self.submitted_each.load(Relaxed);
        for (d, c) in into.class.iter_mut().zip(&self.class) {
            d.ios += c.ios.load(Relaxed);
            d.bytes += c.bytes.load(Relaxed);
            d.lat_sum_ns += c.lat_sum_ns.load(Relaxed);
            d.lat_sq_sum += f64::from_bits(c.lat_sq_sum.load(Relaxed));
        }
        into.ios = into.class[0].ios + into.class[1].ios;
        into.bytes = into.class[0].bytes + into.class[1].bytes;
        into.lat_sum_ns = into.class[0].lat_sum_ns + into.class[1].lat_sum_ns;
        if buckets {
            self.add_buckets(&mut into.buckets);
        }
    }

    /// Adds this worker's latency buckets into `into` (sized on first use).
    pub fn add_buckets(&self, into: &mut Vec<u64>) {
        into.resize(LIVE_BUCKETS, 0);
        for (d, s) in into.iter_mut().zip(self.buckets.iter()) {
            *d += s.load(Relaxed);
        }
    }

    /// The extremes of each class since the last call, and a fresh start for the next
    /// interval. Called only by the monitor, at interval edges.
    pub fn take_extremes(&self) -> [Extremes; 2] {
        let take = |c: &ClassCounters| Extremes {
            min_ns: c.min_ns.swap(u64::MAX, Relaxed),
            max_ns: c.max_ns.swap(0, Relaxed),
        };
        [take(&self.class[0]), take(&self.class[1])]
    }
}

/// The smallest and largest latency of one class over an interval; `min_ns` is `u64::MAX`
/// when nothing completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extremes {
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Default for Extremes {
    fn default() -> Self {
        Self {
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }
}

impl Extremes {
    /// Both intervals' extremes together (several workers).
    pub fn join(self, o: Extremes) -> Extremes {
        Extremes {
            min_ns: self.min_ns.min(o.min_ns),
            max_ns: self.max_ns.max(o.max_ns),
        }
    }
}

/// One class's cumulative sums at one instant.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct ClassSnapshot {
    pub ios: u64,
    pub bytes: u64,
    pub lat_sum_ns: u64,
    pub lat_sq_sum: f64,
}

/// Cumulative counters of one or more workers at one instant: reads and writes apart, their
/// sums, and (when taken with them) the latency buckets.
#[derive(Clone, Default)]
pub struct LiveSnapshot {
    pub class: [ClassSnapshot; 2],
    pub ios: u64,
    pub bytes: u64,
    pub lat_sum_ns: u64,
    pub submitted: u64,
    pub submitted_each: u64,
    /// Empty when taken without buckets.
    pub buckets: Vec<u64>,
}

impl LiveSnapshot {
    /// Adds another snapshot's counters (of other workers at the same instant).
    pub fn add(&mut self, o: &LiveSnapshot) {
        for (d, c) in self.class.iter_mut().zip(&o.class) {
            d.ios += c.ios;
            d.bytes += c.bytes;
            d.lat_sum_ns += c.lat_sum_ns;
            d.lat_sq_sum += c.lat_sq_sum;
        }
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.lat_sum_ns += o.lat_sum_ns;
        self.submitted += o.submitted;
        self.submitted_each += o.submitted_each;
        if self.buckets.len() < o.buckets.len() {
            self.buckets.resize(o.buckets.len(), 0);
        }
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
        let before = prev.buckets.iter().copied().chain(std::iter::repeat(0));
        for (i, (a, b)) in self.buckets.iter().zip(before).enumerate() {
            seen += a - b;
            if seen >= rank {
                return Some(live_bucket_value(i));
            }
        }
        None
    }
}

/// One class's interval between two snapshots, with its extremes: the count, and the exact
/// mean and sample standard deviation of the latencies, in microseconds.
pub fn interval(prev: &ClassSnapshot, cur: &ClassSnapshot, ext: Extremes) -> IntervalOps {
    let n = cur.ios.saturating_sub(prev.ios);
    if n == 0 {
        return IntervalOps {
            ios: 0,
            lat_us: None,
        };
    }
    let k = n as f64;
    let mean_ns = cur.lat_sum_ns.saturating_sub(prev.lat_sum_ns) as f64 / k;
    let sq = cur.lat_sq_sum - prev.lat_sq_sum;
    let var = if n > 1 {
        ((sq - k * mean_ns * mean_ns) / (k - 1.0)).max(0.0)
    } else {
        0.0
    };
    // an extreme missed at the edge (see `LiveCounters::add`) is bounded by the mean
    let (min, max) = if ext.min_ns == u64::MAX {
        (mean_ns, mean_ns)
    } else {
        (
            (ext.min_ns as f64).min(mean_ns),
            (ext.max_ns as f64).max(mean_ns),
        )
    };
    IntervalOps {
        ios: n,
        lat_us: Some(IntervalLatency {
            min: min / 1e3,
            mean: mean_ns / 1e3,
            max: max / 1e3,
            stddev: var.sqrt() / 1e3,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_live_counters_share_no_cache_line() {
        let live: Vec<LiveCounters> = (0..4).map(|_| LiveCounters::default()).collect();
        let line = |a: &AtomicU64| a as *const AtomicU64 as usize / 128;
        let fields = |l: &LiveCounters| -> Vec<*const AtomicU64> {
            let mut v: Vec<*const AtomicU64> = vec![&l.submitted, &l.submitted_each];
            for c in &l.class {
                v.extend([
                    &c.ios as *const AtomicU64,
                    &c.bytes,
                    &c.lat_sum_ns,
                    &c.lat_sq_sum,
                    &c.min_ns,
                    &c.max_ns,
                ]);
            }
            v
        };
        for pair in live.windows(2) {
            // every counter of one worker lies apart from every counter of the next
            for x in fields(&pair[0]) {
                for y in fields(&pair[1]) {
                    // SAFETY: both point into live, which outlives this loop
                    let (x, y) = unsafe { (&*x, &*y) };
                    assert_ne!(line(x), line(y), "two workers' counters share a line");
                }
            }
        }
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

    fn snap(c: &LiveCounters, buckets: bool) -> LiveSnapshot {
        let mut s = LiveSnapshot::default();
        c.accumulate(&mut s, buckets);
        s
    }

    #[test]
    fn live_quantile_over_an_interval() {
        let c = LiveCounters::default();
        let before = snap(&c, true);
        for v in 1..=100u64 {
            c.add(Class::Read, v * 10_000, 1);
        }
        let after = snap(&c, true);
        let p99 = after.quantile_since(&before, 0.99).unwrap();
        assert!((p99 - 990_000.0).abs() / 990_000.0 < 0.01, "{p99}");
        assert_eq!(after.quantile_since(&after, 0.99), None);
    }

    /// An interval's reads and writes apart, with the figures a user would compute by hand:
    /// reads of 100, 200, 300 µs (mean 200, standard deviation 100) and one write of 50 µs;
    /// the next interval starts with fresh extremes.
    #[test]
    fn an_interval_splits_reads_from_writes_with_exact_figures() {
        let c = LiveCounters::default();
        c.add(Class::Read, 1_000_000, 4096); // before the interval
        let before = snap(&c, false);
        c.take_extremes();
        for us in [100u64, 200, 300] {
            c.add(Class::Read, us * 1000, 4096);
        }
        c.add(Class::Write, 50_000, 8192);
        let after = snap(&c, false);
        let [re, we] = c.take_extremes();
        let r = interval(&before.class[0], &after.class[0], re);
        let w = interval(&before.class[1], &after.class[1], we);
        assert_eq!((r.ios, w.ios), (3, 1));
        let rl = r.lat_us.unwrap();
        assert_eq!((rl.min, rl.mean, rl.max), (100.0, 200.0, 300.0));
        assert!((rl.stddev - 100.0).abs() < 1e-6, "{}", rl.stddev);
        let wl = w.lat_us.unwrap();
        assert_eq!(
            (wl.min, wl.mean, wl.max, wl.stddev),
            (50.0, 50.0, 50.0, 0.0)
        );
        assert_eq!((after.ios, after.bytes), (5, 4 * 4096 + 8192));
        assert_eq!(c.take_extremes()[0], Extremes::default());
        let none = interval(&after.class[0], &after.class[0], Extremes::default());
        assert_eq!((none.ios, none.lat_us), (0, None));
    }
}

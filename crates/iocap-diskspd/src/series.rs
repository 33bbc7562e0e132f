//! `-D`'s series as DiskSpd reports it: each interval's reads and writes apart, for the test
//! and for each thread on each target, and the standard deviation of their IOPS.
//!
//! Why apart: a mixed test's read and write IOPS vary independently, and DiskSpd's scripts
//! divide `ReadIopsStdDev` by the read IOPS (a coefficient of variation). The engine keeps the
//! split in `SecondSample.read/write` and `WorkerResult.intervals` (one interval every
//! `JobSpec.interval_ms`, which `-D<ms>` sets); results saved before it have only the total
//! IOPS of each second, and the views fall back to what that can tell (see `figures`).

use iocap_model::detail::{IntervalOps, WorkerResult};
use iocap_model::TestResult;

/// Reads, writes or both, as DiskSpd's three tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    Total,
    Read,
    Write,
}

/// One interval: when it ended and what completed in it.
pub(crate) struct Sample {
    /// Its end, in ms from the start of the measured window (DiskSpd's `SampleMillisecond`).
    pub ms: u64,
    pub read: IntervalOps,
    pub write: IntervalOps,
}

/// A series with reads and writes apart, intervals `interval_ms` long.
pub(crate) struct Series {
    pub interval_ms: u32,
    pub samples: Vec<Sample>,
}

/// The interval the test's samples have: `-D`'s (`JobSpec.interval_ms`), or a second when it
/// asked for none, and in a result whose series does not split reads from writes (an engine
/// that sampled once a second whatever the interval asked).
pub(crate) fn bucket_ms(test: &TestResult) -> u32 {
    let asked = test.spec.interval_ms.filter(|&ms| ms > 0);
    asked
        .filter(|_| split_samples(test) || split_workers(test))
        .unwrap_or(1000)
}

/// Whether every sample of the test's series has its reads and writes apart.
fn split_samples(test: &TestResult) -> bool {
    let ps = &test.per_second;
    !ps.is_empty() && ps.iter().all(|s| s.read.is_some() || s.write.is_some())
}

/// Whether every worker kept its own series.
fn split_workers(test: &TestResult) -> bool {
    !test.workers.is_empty() && test.workers.iter().all(|w| !w.intervals.is_empty())
}

/// The end of interval `i` in ms: from the test's series when it has that sample, else `i + 1`
/// intervals.
fn sample_ms(test: &TestResult, i: usize) -> u64 {
    match test.per_second.get(i) {
        Some(s) if s.t_s.is_finite() && s.t_s >= 0.0 => (s.t_s * 1000.0).round() as u64,
        _ => u64::from(bucket_ms(test)) * (i as u64 + 1),
    }
}

impl Series {
    /// The test's series, from its samples' split, or else its workers' intervals combined;
    /// `None` for a result that has neither.
    pub fn of_test(test: &TestResult) -> Option<Series> {
        let ps = &test.per_second;
        let samples: Vec<Sample> = if split_samples(test) {
            ps.iter()
                .enumerate()
                .map(|(i, s)| Sample {
                    ms: sample_ms(test, i),
                    read: s.read.unwrap_or_default(),
                    write: s.write.unwrap_or_default(),
                })
                .collect()
        } else if split_workers(test) {
            let n = test.workers.iter().map(|w| w.intervals.len()).max()?;
            (0..n)
                .map(|i| {
                    let at = |w: &WorkerResult| w.intervals.get(i).copied();
                    let parts: Vec<_> = test.workers.iter().filter_map(at).collect();
                    Sample {
                        ms: sample_ms(test, i),
                        read: IntervalOps::combine(parts.iter().map(|p| &p.read)),
                        write: IntervalOps::combine(parts.iter().map(|p| &p.write)),
                    }
                })
                .collect()
        } else {
            return None;
        };
        Some(Series {
            interval_ms: bucket_ms(test),
            samples,
        })
    }

    /// One worker's series; `None` when the test kept none per worker.
    pub fn of_worker(test: &TestResult, w: &WorkerResult) -> Option<Series> {
        if w.intervals.is_empty() {
            return None;
        }
        let samples = w
            .intervals
            .iter()
            .enumerate()
            .map(|(i, v)| Sample {
                ms: sample_ms(test, i),
                read: v.read,
                write: v.write,
            })
            .collect();
        Some(Series {
            interval_ms: bucket_ms(test),
            samples,
        })
    }

    /// The I/Os of each interval, of one section.
    fn counts(&self, section: Section) -> impl Iterator<Item = u64> + '_ {
        self.samples.iter().map(move |s| match section {
            Section::Read => s.read.ios,
            Section::Write => s.write.ios,
            Section::Total => s.read.ios + s.write.ios,
        })
    }

    /// Whether any I/O of the section completed: DiskSpd's XML states a section's deviation
    /// only then.
    pub fn has(&self, section: Section) -> bool {
        self.counts(section).any(|n| n > 0)
    }

    /// A count of I/Os in one interval as a rate per second.
    pub fn rate(&self, ios: u64) -> f64 {
        ios as f64 * 1000.0 / f64::from(self.interval_ms.max(1))
    }

    /// The standard deviation of the section's IOPS over the intervals (population, as
    /// DiskSpd computes it: of the counts, then per second); 0 for an empty series.
    pub fn iops_std_dev(&self, section: Section) -> f64 {
        let n = self.samples.len();
        if n == 0 {
            return 0.0;
        }
        let counts: Vec<f64> = self.counts(section).map(|c| c as f64).collect();
        let mean = counts.iter().sum::<f64>() / n as f64;
        let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / n as f64;
        self.rate(1) * var.sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iocap_model::detail::WorkerInterval;
    use iocap_model::SecondSample;

    fn ops(ios: u64) -> IntervalOps {
        IntervalOps { ios, lat_us: None }
    }

    /// Half-second intervals of 50, 100, 150, 100 reads: 100, 200, 300, 200 IOPS, whose
    /// deviation is 70.71 per second (35.36 reads per interval).
    #[test]
    fn the_deviation_is_of_the_rates_per_second() {
        let mut test = TestResult::default();
        test.spec.interval_ms = Some(500);
        test.per_second = [50u64, 100, 150, 100]
            .iter()
            .enumerate()
            .map(|(i, &n)| SecondSample {
                t_s: 0.5 * (i as f64 + 1.0),
                iops: n as f64 * 2.0,
                mb_s: 0.0,
                lat_us_mean: None,
                lat_us_p99: None,
                submit_each_pct: None,
                read: Some(ops(n)),
                write: None,
            })
            .collect();
        let s = Series::of_test(&test).unwrap();
        let at: Vec<u64> = s.samples.iter().map(|s| s.ms).collect();
        assert_eq!(at, [500, 1000, 1500, 2000]);
        assert!((s.iops_std_dev(Section::Read) - 70.71).abs() < 0.01);
        assert_eq!(s.iops_std_dev(Section::Write), 0.0);
        assert!(s.has(Section::Read) && !s.has(Section::Write));
        assert_eq!(s.rate(150), 300.0);
    }

    /// A result whose samples lack the split takes its workers' intervals, added up.
    #[test]
    fn the_workers_intervals_make_the_test_s_series() {
        let mut test = TestResult::default();
        let worker = |r, w| WorkerResult {
            intervals: vec![
                WorkerInterval {
                    read: ops(r),
                    write: ops(w),
                };
                3
            ],
            ..WorkerResult::default()
        };
        test.workers = vec![worker(10, 1), worker(20, 2)];
        let s = Series::of_test(&test).unwrap();
        assert_eq!(s.samples.len(), 3);
        assert_eq!((s.samples[2].read.ios, s.samples[2].write.ios), (30, 3));
        assert_eq!(s.samples[2].ms, 3000, "a second each without -D's interval");
        test.workers[1].intervals.clear();
        assert!(Series::of_test(&test).is_none(), "not every worker has one");
    }

    /// `-D500` on an engine that sampled once a second whatever was asked (its series has no
    /// split): the buckets are a second, and the output says so.
    #[test]
    fn an_unsplit_series_is_a_second_whatever_was_asked() {
        let mut test = TestResult::default();
        test.spec.interval_ms = Some(500);
        assert_eq!(bucket_ms(&test), 1000);
        test.workers = vec![WorkerResult {
            intervals: vec![WorkerInterval::default()],
            ..WorkerResult::default()
        }];
        assert_eq!(bucket_ms(&test), 500);
    }
}

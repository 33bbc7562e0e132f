//! The figures both views print, read from a [`TestResult`] once, so the text and the XML
//! cannot disagree.
//!
//! DiskSpd reports every thread on every target. iocap's result holds each worker's share (one
//! thread on one target, `TestResult.workers`), so a row here is one DiskSpd thread on one
//! target, numbered as DiskSpd numbers its threads. Results saved before the workers were
//! recorded hold one set of counters per target (all of its threads together): a row then
//! stands for all threads of one target, which the text labels with their range of thread
//! numbers (`0-3`) and the XML with the first of them. Where a figure cannot be told from the
//! result (the read/write split of a target in a result that lacks it, an IOPS series per
//! target), it is `None` and prints `N/A`.

pub(crate) use crate::series::Section;
use crate::series::Series;
use iocap_model::hist::{decode_hist, quantile_within_us};
use iocap_model::{OpStats, TestResult};
use std::collections::BTreeMap;

/// Bytes, I/Os and latency of one row's reads, writes or both.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Counts {
    pub bytes: u64,
    pub ios: u64,
    /// Mean and standard deviation in ms; `None` when no I/O completed.
    pub lat_ms: Option<(f64, f64)>,
}

impl Counts {
    pub fn of(stats: &OpStats) -> Counts {
        Counts {
            bytes: stats.bytes,
            ios: stats.ios,
            lat_ms: latency_ms(stats),
        }
    }

    /// Reads and writes together: the mean and standard deviation of all their I/Os.
    pub fn both(a: Counts, b: Counts) -> Counts {
        let lat_ms = match (a.lat_ms, b.lat_ms) {
            (Some(x), None) => Some(x),
            (None, Some(y)) => Some(y),
            (None, None) => None,
            (Some((m1, s1)), Some((m2, s2))) => {
                let (k1, k2) = (a.ios as f64, b.ios as f64);
                let k = k1 + k2;
                let mean = (k1 * m1 + k2 * m2) / k;
                let square = (k1 * (s1 * s1 + m1 * m1) + k2 * (s2 * s2 + m2 * m2)) / k;
                Some((mean, (square - mean * mean).max(0.0).sqrt()))
            }
        };
        Counts {
            bytes: a.bytes + b.bytes,
            ios: a.ios + b.ios,
            lat_ms,
        }
    }
}

/// One thread's work on one target (or, in an older result, all threads of one target).
pub(crate) struct Row {
    pub path: String,
    pub size_bytes: u64,
    pub total: Counts,
    /// Reads and writes, when the result tells them apart for this row.
    pub split: Option<(Counts, Counts)>,
    /// Its own `-D` series, when the result kept one for it.
    pub series: Option<Series>,
}

impl Row {
    pub fn stats(&self, section: Section) -> Option<Counts> {
        match section {
            Section::Total => Some(self.total),
            Section::Read => self.split.map(|(r, _)| r),
            Section::Write => self.split.map(|(_, w)| w),
        }
    }
}

/// One DiskSpd thread and its targets.
pub(crate) struct Thread {
    /// DiskSpd's number for it (an older result's row: the first of its threads).
    pub id: u32,
    /// The text's thread column: the number, or `0-3` for an older result's row of 4.
    pub label: String,
    pub targets: Vec<Row>,
}

/// The test's threads, as DiskSpd numbers them: with `-t n` (`pool` false) the worker of
/// target j numbered i is thread j × n + i, one target each; with `-F` (`pool` true) it is
/// thread i, which then has one target per target of the test. A result without workers
/// gives one "thread" per target for all its threads (see [`targets`]).
pub(crate) fn threads(test: &TestResult, pool: bool) -> Vec<Thread> {
    if test.workers.is_empty() {
        return targets(test)
            .into_iter()
            .map(|t| Thread {
                id: t.first_thread,
                label: t.thread_label(),
                targets: vec![Row {
                    path: t.path,
                    size_bytes: t.size_bytes,
                    total: Counts::of(t.total),
                    split: t.split.map(|(r, w)| (Counts::of(r), Counts::of(w))),
                    series: None,
                }],
            })
            .collect();
    }
    let mut per_target: BTreeMap<u32, u32> = BTreeMap::new();
    for w in &test.workers {
        *per_target.entry(w.target).or_default() += 1;
    }
    let base = |target: u32| -> u32 { per_target.range(..target).map(|(_, n)| n).sum() };
    let mut by_id: BTreeMap<u32, Vec<(u32, Row)>> = BTreeMap::new();
    for w in &test.workers {
        let id = if pool {
            w.thread
        } else {
            base(w.target) + w.thread
        };
        let (path, size_bytes) = target_of(test, w.target as usize);
        let (r, wr) = (Counts::of(&w.read), Counts::of(&w.write));
        by_id.entry(id).or_default().push((
            w.target,
            Row {
                path,
                size_bytes,
                total: Counts::both(r, wr),
                split: Some((r, wr)),
                series: Series::of_worker(test, w),
            },
        ));
    }
    by_id
        .into_iter()
        .map(|(id, mut rows)| {
            rows.sort_by_key(|(target, _)| *target);
            Thread {
                id,
                label: id.to_string(),
                targets: rows.into_iter().map(|(_, r)| r).collect(),
            }
        })
        .collect()
}

/// Target `i`'s path and size, from its result or else its spec.
fn target_of(test: &TestResult, i: usize) -> (String, u64) {
    match (test.targets.get(i), test.spec.targets.get(i)) {
        (Some(t), _) => (t.path.clone(), t.size_bytes),
        (None, Some(t)) => (t.path.clone(), test.spec.size_bytes),
        (None, None) => (String::new(), test.spec.size_bytes),
    }
}

/// All threads of one target: the per-target latency tables, and the rows of a result without
/// workers.
pub(crate) struct TargetRow<'a> {
    /// The first thread's number and how many threads there were.
    pub first_thread: u32,
    pub threads: u32,
    pub path: String,
    pub size_bytes: u64,
    pub total: &'a OpStats,
    /// Reads and writes, when the result tells them apart for this target.
    pub split: Option<(&'a OpStats, &'a OpStats)>,
}

impl TargetRow<'_> {
    /// `0` for one thread, `0-3` for four.
    pub fn thread_label(&self) -> String {
        match self.threads {
            0 | 1 => self.first_thread.to_string(),
            n => format!("{}-{}", self.first_thread, self.first_thread + n - 1),
        }
    }
}

/// One row per target, or one row for the whole test if the result has no per-target figures.
/// A target's reads and writes are its own when the result splits them, else the test's when
/// there is one target or the test did only one of them; otherwise unknown.
pub(crate) fn targets(test: &TestResult) -> Vec<TargetRow<'_>> {
    if test.targets.is_empty() {
        let paths: Vec<&str> = test.spec.targets.iter().map(|t| t.path.as_str()).collect();
        return vec![TargetRow {
            first_thread: 0,
            threads: spec_threads(test),
            path: paths.join(", "),
            size_bytes: test.spec.size_bytes,
            total: &test.total,
            split: Some((&test.read, &test.write)),
        }];
    }
    let mut first = 0;
    let mut out = Vec::with_capacity(test.targets.len());
    for t in &test.targets {
        let split = if t.read.ios + t.write.ios == t.total.ios {
            Some((&t.read, &t.write))
        } else if test.targets.len() == 1 {
            Some((&test.read, &test.write))
        } else if test.write.ios == 0 {
            Some((&t.total, &t.write))
        } else if test.read.ios == 0 {
            Some((&t.read, &t.total))
        } else {
            None
        };
        out.push(TargetRow {
            first_thread: first,
            threads: t.threads,
            path: t.path.clone(),
            size_bytes: t.size_bytes,
            total: &t.total,
            split,
        });
        first += t.threads;
    }
    out
}

fn spec_threads(test: &TestResult) -> u32 {
    let per_target = |t: &iocap_model::TargetSpec| t.threads.unwrap_or(test.spec.threads);
    test.spec.targets.iter().map(per_target).sum()
}

/// DiskSpd's thread count: its threads (`-F`'s n, or the threads of all targets); in a result
/// without workers, the threads that ran over all targets.
pub(crate) fn thread_count(test: &TestResult, pool: bool) -> u32 {
    if !test.workers.is_empty() {
        threads(test, pool).len() as u32
    } else if test.targets.is_empty() {
        spec_threads(test)
    } else {
        test.targets.iter().map(|t| t.threads).sum()
    }
}

/// The test's stats for one section.
pub(crate) fn test_stats(test: &TestResult, section: Section) -> &OpStats {
    match section {
        Section::Total => &test.total,
        Section::Read => &test.read,
        Section::Write => &test.write,
    }
}

/// The standard deviation of the test's IOPS per interval (population, as DiskSpd computes
/// it), from its read/write series. A result without one has only the total IOPS of each
/// second: a read or write section has a deviation then only when the test did nothing else,
/// or none of it (0, as DiskSpd gives for a kind of I/O that never completed).
pub(crate) fn iops_std_dev(test: &TestResult, section: Section) -> Option<f64> {
    if let Some(series) = Series::of_test(test) {
        return Some(series.iops_std_dev(section));
    }
    let applies = match section {
        Section::Total => true,
        Section::Read => test.write.ios == 0,
        Section::Write => test.read.ios == 0,
    };
    let n = test.per_second.len();
    if test_stats(test, section).ios == 0 {
        return Some(0.0);
    }
    if !applies || n == 0 {
        return None;
    }
    let mean = test.per_second.iter().map(|s| s.iops).sum::<f64>() / n as f64;
    let var = test
        .per_second
        .iter()
        .map(|s| (s.iops - mean).powi(2))
        .sum::<f64>()
        / n as f64;
    Some(var.sqrt())
}

/// DiskSpd's `HistoBuckets` of a latency distribution: how many of its buckets hold an I/O;
/// `None` for a result that has I/Os but not their histogram.
pub(crate) fn histo_buckets(stats: &OpStats) -> Option<usize> {
    if stats.ios == 0 {
        return Some(0);
    }
    let h = decode_hist(stats.lat_hist_ns.as_deref()?).ok()?;
    Some(h.iter_recorded().count())
}

/// Mean and standard deviation of the latency in ms; `None` when no I/O completed.
pub(crate) fn latency_ms(stats: &OpStats) -> Option<(f64, f64)> {
    let l = stats.lat_us.as_ref().filter(|_| stats.ios > 0)?;
    Some((l.mean / 1000.0, l.stddev / 1000.0))
}

/// The latency at each quantile (0 = min, 1 = max) in ms, from the stored histogram when there
/// is one, else from the percentiles the result states (others are `None`).
pub(crate) fn quantiles_ms(stats: &OpStats, qs: &[f64]) -> Vec<Option<f64>> {
    let Some(lat) = stats.lat_us.as_ref().filter(|_| stats.ios > 0) else {
        return vec![None; qs.len()];
    };
    let hist = stats
        .lat_hist_ns
        .as_deref()
        .and_then(|s| decode_hist(s).ok());
    let stated = |q: f64| -> Option<f64> {
        let pairs = [
            (0.5, lat.p50),
            (0.9, lat.p90),
            (0.95, lat.p95),
            (0.99, lat.p99),
            (0.999, lat.p99_9),
            (0.9999, lat.p99_99),
            (0.99999, lat.p99_999),
        ];
        pairs.iter().find(|(p, _)| *p == q).map(|&(_, v)| v)
    };
    qs.iter()
        .map(|&q| {
            let us = match q {
                q if q <= 0.0 => Some(lat.min),
                q if q >= 1.0 => Some(lat.max),
                q => match &hist {
                    Some(h) if !h.is_empty() => Some(quantile_within_us(h, q, lat.min, lat.max)),
                    _ => stated(q),
                },
            };
            us.map(|us| us / 1000.0)
        })
        .collect()
}

/// CPU use of iocap's own process over the test, in percent of all the host's CPUs: iocap's
/// figure, beside DiskSpd's system-wide table (`cpu`), or in its place in an older result.
pub(crate) struct Cpu {
    pub usage: f64,
    pub user: f64,
    pub kernel: f64,
    pub idle: f64,
}

pub(crate) fn cpu(test: &TestResult, cpus: u32) -> Cpu {
    let capacity = test.duration_s * f64::from(cpus.max(1));
    let pct = |s: f64| {
        if capacity > 0.0 && s.is_finite() {
            (100.0 * s / capacity).clamp(0.0, 100.0)
        } else {
            0.0
        }
    };
    let (user, kernel) = (pct(test.cpu.user_s), pct(test.cpu.sys_s));
    let usage = (user + kernel).min(100.0);
    Cpu {
        usage,
        user,
        kernel,
        idle: 100.0 - usage,
    }
}

/// `bytes / 2^20 / seconds`, 0 for a test that measured no time.
pub(crate) fn per_second(count: f64, secs: f64) -> f64 {
    if secs > 0.0 && count.is_finite() {
        count / secs
    } else {
        0.0
    }
}

/// `2026-11-22T02:00:00Z` as DiskSpd writes it: `2026/11/22 02:00:00 UTC`.
pub(crate) fn diskspd_time(rfc3339: &str) -> String {
    let s = rfc3339.trim_end_matches('Z');
    match s.split_once('T') {
        Some((date, time)) if date.len() == 10 => {
            let time = time.split(['.', '+']).next().unwrap_or(time);
            format!("{} {time} UTC", date.replace('-', "/"))
        }
        _ => rfc3339.to_string(),
    }
}

/// A byte count as DiskSpd shows sizes: `8KiB`, `1.50GiB`, or bytes below 1 KiB.
pub(crate) fn display_size(bytes: u64) -> String {
    for (shift, name) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        let unit = 1u64 << shift;
        if bytes >= unit {
            return if bytes % unit == 0 {
                format!("{}{name}", bytes >> shift)
            } else {
                format!("{:.2}{name}", bytes as f64 / unit as f64)
            };
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_times_as_diskspd_shows_them() {
        assert_eq!(display_size(512), "512");
        assert_eq!(display_size(8192), "8KiB");
        assert_eq!(display_size(10 << 30), "10GiB");
        assert_eq!(display_size(3 << 29), "1.50GiB");
        assert_eq!(display_size(1 << 40), "1TiB");
        assert_eq!(
            diskspd_time("2026-11-22T02:00:00Z"),
            "2026/11/22 02:00:00 UTC"
        );
        assert_eq!(diskspd_time("garbage"), "garbage");
    }
}

//! The figures every view of a test shows the same way, whatever it is drawn with (terminal
//! table, Markdown pipe table, HTML table): which operations get a row, the throughput cells,
//! the latency percentile columns and the CPU line. Shared so the views cannot drift apart on
//! what a row holds or how a figure is written.

use iocap_model::{LatencyUs, OpStats, TestResult};

use crate::fmt;

/// The operations of a test that get a row: read and write only when the test did both, then
/// the total, then fsync when there was any.
pub(crate) fn ops(t: &TestResult) -> Vec<(&'static str, &OpStats)> {
    let mut v = Vec::new();
    if t.read.ios > 0 && t.write.ios > 0 {
        v.push(("read", &t.read));
        v.push(("write", &t.write));
    }
    v.push(("total", &t.total));
    if t.sync.ios > 0 {
        v.push(("fsync", &t.sync));
    }
    v
}

/// Header of the throughput table; the first column names the operation.
pub(crate) const THROUGHPUT_HEADER: [&str; 5] = ["", "I/Os", "IOPS", "MiB/s", "MB/s"];

/// One throughput row, as [`THROUGHPUT_HEADER`] names its cells.
pub(crate) fn throughput_cells(name: &str, o: &OpStats) -> Vec<String> {
    vec![
        name.to_string(),
        fmt::count(o.ios as f64),
        fmt::count(o.iops),
        format!("{:.1}", o.mib_s),
        format!("{:.1}", o.mb_s),
    ]
}

/// Header of the latency table after its first column (which each view names its own way).
pub(crate) const LATENCY_COLUMNS: [&str; 11] = [
    "min", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "p99.999", "max", "mean", "stddev",
];

/// A latency header: `first`, then [`LATENCY_COLUMNS`].
pub(crate) fn latency_header(first: &str) -> Vec<&str> {
    std::iter::once(first).chain(LATENCY_COLUMNS).collect()
}

/// One latency row: `name`, then each of [`LATENCY_COLUMNS`] with its unit.
pub(crate) fn latency_cells(name: &str, l: &LatencyUs) -> Vec<String> {
    let v = [
        l.min, l.p50, l.p90, l.p95, l.p99, l.p99_9, l.p99_99, l.p99_999, l.max, l.mean, l.stddev,
    ];
    std::iter::once(name.to_string())
        .chain(v.iter().map(|x| fmt::lat_us(*x)))
        .collect()
}

/// `CPU: 0.52 s user + 1.10 s system = 4.1 µs per I/O; mean queue depth 15.8`, with no
/// punctuation or line break around it.
pub(crate) fn cpu_line(t: &TestResult) -> String {
    format!(
        "CPU: {:.2} s user + {:.2} s system = {:.1} µs per I/O; mean queue depth {:.1}",
        t.cpu.user_s, t.cpu.sys_s, t.cpu.us_per_io, t.qd_mean
    )
}

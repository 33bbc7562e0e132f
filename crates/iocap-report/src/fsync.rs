//! The terminal view of `iocap fsync`: ops/s per method (rows) and write size (columns), the
//! same for p99, the points that could not run, the fastest method per size, the warnings and
//! the recommendation.

use std::fmt::Write as _;

use iocap_model::fsync::{fastest_per_size, fsync_sizes};
use iocap_model::{FsyncMethod, FsyncPoint, FsyncReport};

use crate::fmt::{format_bytes, format_us, MISSING};

/// A point that did not run, in a table cell.
const NOT_RUN: &str = "n/a";

/// Whether a size is highlighted as a log (WAL/redo) write size.
fn is_log_size(size: u64) -> bool {
    size == 8 << 10 || size == 16 << 10
}

/// A size as a column head: `*8K` for a log write size.
fn head(size: u64) -> String {
    if is_log_size(size) {
        format!("*{}", format_bytes(size))
    } else {
        format_bytes(size)
    }
}

/// The report as text.
pub fn render(r: &FsyncReport) -> String {
    let mut out = heading(r);
    let sizes = fsync_sizes(&r.points);
    // the methods measured, in the order of the tables
    let methods: Vec<FsyncMethod> = FsyncMethod::ALL
        .into_iter()
        .filter(|m| r.points.iter().any(|p| p.method == *m))
        .collect();
    let grid =
        |title: &str, cell: &dyn Fn(&FsyncPoint) -> String| table(r, &sizes, &methods, title, cell);
    out.push_str(&grid("ops/s", &|p| format!("{:.0}", p.ops_per_s)));
    out.push_str(&grid("p99 latency", &|p| {
        p.lat_us
            .as_ref()
            .map_or(MISSING.into(), |l| format_us(l.p99))
    }));
    if sizes.iter().any(|s| is_log_size(*s)) {
        out.push_str("* WAL/redo write sizes\n");
    }
    out.push_str(&not_run(r));
    out.push_str(&fastest(r));
    for w in &r.warnings {
        let _ = writeln!(out, "\nWARNING: {w}");
    }
    let _ = writeln!(out, "\n{}", r.recommendation);
    out
}

/// `Durable writes at queue depth 1 on TARGET (xfs on sda; rotational=0, ...), ...`.
fn heading(r: &FsyncReport) -> String {
    let dev = match (&r.device, &r.fs_type) {
        (Some(d), Some(f)) => format!("{f} on {d}"),
        (Some(d), None) => d.clone(),
        (None, Some(f)) => f.clone(),
        (None, None) => "unknown device".into(),
    };
    let mut class = Vec::new();
    if let Some(rot) = r.rotational {
        class.push(format!("rotational={}", u8::from(rot)));
    }
    if let Some(c) = &r.write_cache {
        class.push(format!("write_cache={c}"));
    }
    if let Some(f) = r.fua {
        class.push(format!("fua={}", u8::from(f)));
    }
    format!(
        "Durable writes at queue depth 1 on {} ({dev}{}{}), {} s per point, offsets: {}\n",
        r.target,
        if class.is_empty() { "" } else { "; " },
        class.join(", "),
        r.duration_s,
        r.offsets
    )
}

/// One table: a row per method, a column per size, `cell` of each point that ran.
fn table(
    r: &FsyncReport,
    sizes: &[u64],
    methods: &[FsyncMethod],
    title: &str,
    cell: &dyn Fn(&FsyncPoint) -> String,
) -> String {
    let mut t = String::new();
    // 22 columns, or one more than the longest label (Windows' NO_BUFFERING|WRITE_THROUGH)
    let w = methods
        .iter()
        .map(|m| m.label().chars().count() + 1)
        .fold(22, usize::max);
    let _ = write!(t, "\n{title:<w$}");
    for s in sizes {
        let _ = write!(t, "{:>11}", head(*s));
    }
    t.push('\n');
    for m in methods {
        let _ = write!(t, "{:<w$}", m.label());
        for s in sizes {
            let c = r
                .points
                .iter()
                .find(|p| p.method == *m && p.size_bytes == *s)
                .map_or("".into(), |p| {
                    if p.available && p.ops > 0 {
                        cell(p)
                    } else {
                        NOT_RUN.into()
                    }
                });
            let _ = write!(t, "{c:>11}");
        }
        t.push('\n');
    }
    t
}

/// The points that could not run, and why.
fn not_run(r: &FsyncReport) -> String {
    let mut out = String::new();
    let skipped: Vec<&FsyncPoint> = r.points.iter().filter(|p| !p.available).collect();
    if !skipped.is_empty() {
        let _ = writeln!(out, "\n{NOT_RUN}:");
        for p in skipped {
            let _ = writeln!(
                out,
                "  {} {}: {}",
                p.method.label(),
                format_bytes(p.size_bytes),
                p.reason.as_deref().unwrap_or("not measured")
            );
        }
    }
    out
}

/// The fastest durable method at each size, with its latencies.
fn fastest(r: &FsyncReport) -> String {
    let mut out = String::new();
    let fastest = fastest_per_size(&r.points);
    if !fastest.is_empty() {
        out.push_str("\nFastest durable method per size:\n");
        for p in fastest {
            let l = p.lat_us.clone().unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:>4}  {:<20} {:>8.0} ops/s  p50 {}  p99 {}  p99.9 {}  max {}  mean {}",
                head(p.size_bytes),
                p.method.label(),
                p.ops_per_s,
                format_us(l.p50),
                format_us(l.p99),
                format_us(l.p99_9),
                format_us(l.max),
                format_us(l.mean)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_marks_log_sizes_and_unavailable_points() {
        let r = FsyncReport {
            target: "/x/iocap-fsync.testfile".into(),
            offsets: "same".into(),
            duration_s: 2.0,
            points: vec![
                FsyncPoint {
                    method: iocap_model::FsyncMethod::Fdatasync.into(),
                    size_bytes: 8192,
                    ops: 2000,
                    duration_s: 2.0,
                    ops_per_s: 1000.0,
                    lat_us: Some(iocap_model::LatencyUs {
                        p99: 2500.0,
                        ..Default::default()
                    }),
                    available: true,
                    reason: None,
                },
                FsyncPoint {
                    method: iocap_model::FsyncMethod::ODirectODsync.into(),
                    size_bytes: 512,
                    reason: Some("not a multiple".into()),
                    ..Default::default()
                },
            ],
            recommendation: "PostgreSQL: keep it.".into(),
            ..Default::default()
        };
        let t = render(&r);
        assert!(t.contains("*8K"), "{t}");
        assert!(t.contains("n/a"), "{t}");
        assert!(t.contains("O_DIRECT|O_DSYNC 512: not a multiple"), "{t}");
        assert!(t.contains("1000"), "{t}");
        assert!(t.contains("2500 µs"), "{t}");
        assert!(t.contains("PostgreSQL: keep it."), "{t}");
    }

    /// Windows' longest label (26 characters) keeps the size columns in line: every row's
    /// first cell is as wide as the header's, so the figures sit under their sizes.
    #[test]
    fn a_long_method_label_keeps_the_columns_in_line() {
        let point = |method: &str| FsyncPoint {
            method: method.to_string().into(),
            size_bytes: 8192,
            ops: 100,
            duration_s: 1.0,
            ops_per_s: 100.0,
            available: true,
            ..Default::default()
        };
        let r = FsyncReport {
            points: vec![
                point("flush_file_buffers"),
                point("no_buffering_write_through"),
            ],
            ..Default::default()
        };
        let t = render(&r);
        let rows: Vec<&str> = t
            .lines()
            .filter(|l| l.starts_with("FlushFileBuffers") || l.starts_with("NO_BUFFERING|"))
            .collect();
        assert!(rows.len() >= 2, "{t}");
        let width = rows[0].chars().count();
        assert!(rows.iter().all(|r| r.chars().count() == width), "{t}");
        assert!(rows.iter().all(|r| !r.contains("|WRITE_THROUGH1")), "{t}");
    }
}

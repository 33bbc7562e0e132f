//! Log-flush methods compared (issue 7): write + fsync, write + fdatasync, O_DSYNC,
//! O_DIRECT|O_DSYNC, O_SYNC, O_DIRECT|O_SYNC and pwritev2 with RWF_DSYNC, at queue depth 1, for
//! write sizes from 512 B to 64 KiB, the way pg_test_fsync measures them: a 16 MiB test file,
//! rewritten at offset 0 (or walked through with [`Offsets::Cycle`]).
//!
//! [`measure`] runs the points, [`analyse`] turns them into the fastest method per size,
//! warnings for durable writes too fast for the device, and a recommendation per database
//! family; [`render_text`] shows a report.

pub mod analyse;
pub mod measure;
pub mod method;

use iocap_model::{format_bytes, FsyncReport};
use thiserror::Error;

pub use measure::{resolve_target, run, Outcome, Plan, DEFAULT_FILE, FILE_SIZE};
pub use method::Method;

/// Where the writes of one point go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Offsets {
    /// Offset 0 every time, as pg_test_fsync's one-write tests do.
    #[default]
    Same,
    /// Offset 0, then the next `size` bytes, and so on, wrapping at the end of the file.
    Cycle,
}

impl Offsets {
    pub fn name(self) -> &'static str {
        match self {
            Offsets::Same => "same",
            Offsets::Cycle => "cycle",
        }
    }
}

/// The database family a recommendation is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    #[default]
    Postgres,
    Sqlserver,
    Mysql,
    Oracle,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Postgres => "postgres",
            Profile::Sqlserver => "sqlserver",
            Profile::Mysql => "mysql",
            Profile::Oracle => "oracle",
        }
    }
}

#[derive(Debug, Error)]
pub enum FsyncError {
    #[error(transparent)]
    Target(#[from] iocap_engine::TargetError),
    #[error("{0}")]
    Refused(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// The smallest and largest write size compared.
pub const MIN_SIZE: u64 = 512;
pub const MAX_SIZE: u64 = 64 << 10;

/// The default sizes: 512 B, 4K, 8K, 16K, 64K.
pub const DEFAULT_SIZES: [u64; 5] = [512, 4 << 10, 8 << 10, 16 << 10, 64 << 10];
/// The sizes of `--quick`: 8K and 16K, the WAL and redo writes.
pub const QUICK_SIZES: [u64; 2] = [8 << 10, 16 << 10];

/// Whether a size is highlighted as a log (WAL/redo) write size.
pub fn is_log_size(size: u64) -> bool {
    size == 8 << 10 || size == 16 << 10
}

/// Parses `--sizes`, e.g. `8K,16K`: each a multiple of 512 B from 512 B to 64 KiB, returned in
/// ascending order without duplicates.
pub fn parse_sizes(s: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!(
                "'{s}' has an empty size; give sizes separated by commas, e.g. 8K,16K"
            ));
        }
        let v = iocap_model::parse_size(part).map_err(|e| e.to_string())?;
        if !(MIN_SIZE..=MAX_SIZE).contains(&v) {
            return Err(format!(
                "write size {part} is outside 512 B to 64K, the range of log writes"
            ));
        }
        if v % 512 != 0 {
            return Err(format!(
                "write size {part} is not a multiple of 512 B, the smallest sector"
            ));
        }
        out.push(v);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Parses `--methods`, e.g. `fdatasync,o_direct_o_dsync`: method ids ([`Method::id`]), measured
/// in the order given (so a run can follow another tool's order); a repeated id counts once.
pub fn parse_methods(s: &str) -> Result<Vec<Method>, String> {
    let known = || {
        Method::ALL
            .iter()
            .map(|m| m.id())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!(
                "'{s}' has an empty method; give method names separated by commas, e.g. \
                 fdatasync,o_direct_o_dsync"
            ));
        }
        let m = Method::from_id(&part.to_ascii_lowercase())
            .ok_or_else(|| format!("unknown method '{part}'; the methods are {}", known()))?;
        if !out.contains(&m) {
            out.push(m);
        }
    }
    Ok(out)
}

/// The report as text: ops/s per method (rows) and size (columns), the same for p99, the
/// fastest method per size, warnings and the recommendation.
pub fn render_text(r: &FsyncReport) -> String {
    use std::fmt::Write;
    let mut sizes: Vec<u64> = r.points.iter().map(|p| p.size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let methods: Vec<&str> = Method::ALL
        .iter()
        .map(|m| m.id())
        .filter(|id| r.points.iter().any(|p| p.method == *id))
        .collect();
    let label = |id: &str| Method::from_id(id).map_or(id.to_string(), |m| m.label().to_string());
    let head = |s: u64| {
        if is_log_size(s) {
            format!("*{}", format_bytes(s))
        } else {
            format_bytes(s)
        }
    };
    let mut out = String::new();
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
    let _ = writeln!(
        out,
        "Durable writes at queue depth 1 on {} ({dev}{}{}), {} s per point, offsets: {}",
        r.target,
        if class.is_empty() { "" } else { "; " },
        class.join(", "),
        r.duration_s,
        r.offsets
    );
    let table = |title: &str, cell: &dyn Fn(&iocap_model::FsyncPoint) -> String| {
        let mut t = String::new();
        let _ = write!(t, "\n{title:<22}");
        for s in &sizes {
            let _ = write!(t, "{:>11}", head(*s));
        }
        t.push('\n');
        for id in &methods {
            let _ = write!(t, "{:<22}", label(id));
            for s in &sizes {
                let c = r
                    .points
                    .iter()
                    .find(|p| p.method == *id && p.size_bytes == *s)
                    .map_or("".into(), |p| {
                        if p.available && p.ops > 0 {
                            cell(p)
                        } else {
                            "n/a".into()
                        }
                    });
                let _ = write!(t, "{c:>11}");
            }
            t.push('\n');
        }
        t
    };
    out.push_str(&table("ops/s", &|p| format!("{:.0}", p.ops_per_s)));
    out.push_str(&table("p99 latency", &|p| {
        p.lat_us.as_ref().map_or("-".into(), |l| analyse::us(l.p99))
    }));
    if sizes.iter().any(|s| is_log_size(*s)) {
        out.push_str("* WAL/redo write sizes\n");
    }
    let skipped: Vec<&iocap_model::FsyncPoint> = r.points.iter().filter(|p| !p.available).collect();
    if !skipped.is_empty() {
        out.push_str("\nn/a:\n");
        for p in skipped {
            let _ = writeln!(
                out,
                "  {} {}: {}",
                label(&p.method),
                format_bytes(p.size_bytes),
                p.reason.as_deref().unwrap_or("not measured")
            );
        }
    }
    let fastest = analyse::fastest_per_size(&r.points);
    if !fastest.is_empty() {
        out.push_str("\nFastest durable method per size:\n");
        for p in fastest {
            let l = p.lat_us.clone().unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:>4}  {:<20} {:>8.0} ops/s  p50 {}  p99 {}  p99.9 {}  max {}  mean {}",
                head(p.size_bytes),
                label(&p.method),
                p.ops_per_s,
                analyse::us(l.p50),
                analyse::us(l.p99),
                analyse::us(l.p99_9),
                analyse::us(l.max),
                analyse::us(l.mean)
            );
        }
    }
    for w in &r.warnings {
        let _ = writeln!(out, "\nWARNING: {w}");
    }
    let _ = writeln!(out, "\n{}", r.recommendation);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_sorted_and_deduplicated() {
        assert_eq!(parse_sizes("16K,8K").unwrap(), vec![8192, 16384]);
        assert_eq!(parse_sizes(" 8k , 8192 ").unwrap(), vec![8192]);
        assert_eq!(parse_sizes("512,64K").unwrap(), vec![512, 65536]);
        assert_eq!(parse_sizes("1.5K").unwrap(), vec![1536]);
    }

    #[test]
    fn sizes_out_of_range_or_malformed_are_refused() {
        for (bad, why) in [
            ("", "empty"),
            ("8K,,16K", "empty"),
            ("8K,", "empty"),
            ("256", "outside"),
            ("0", "outside"),
            ("128K", "outside"),
            ("1000", "multiple of 512"),
            ("8X", "unit"),
            ("-8K", ""),
        ] {
            let e = parse_sizes(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn methods_parse_in_the_order_given_without_repeats() {
        assert_eq!(
            parse_methods("o_direct_o_dsync, fdatasync,FSYNC,fdatasync").unwrap(),
            vec![Method::ODirectODsync, Method::Fdatasync, Method::Fsync]
        );
        let all: Vec<&str> = Method::ALL.iter().map(|m| m.id()).collect();
        assert_eq!(parse_methods(&all.join(",")).unwrap(), Method::ALL.to_vec());
    }

    #[test]
    fn unknown_or_empty_methods_are_refused_with_the_list() {
        for (bad, why) in [
            ("", "empty method"),
            ("fsync,,fdatasync", "empty method"),
            ("open_datasync", "unknown method 'open_datasync'"),
            ("fsync,o_direct", "unknown method 'o_direct'"),
        ] {
            let e = parse_methods(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let e = parse_methods("nope").unwrap_err();
        assert!(
            e.contains("o_direct_o_sync") && e.contains("rwf_dsync"),
            "{e}"
        );
    }

    #[test]
    fn text_marks_log_sizes_and_unavailable_points() {
        let r = FsyncReport {
            target: "/x/iocap-fsync.testfile".into(),
            offsets: "same".into(),
            duration_s: 2.0,
            points: vec![
                iocap_model::FsyncPoint {
                    method: "fdatasync".into(),
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
                iocap_model::FsyncPoint {
                    method: "o_direct_o_dsync".into(),
                    size_bytes: 512,
                    reason: Some("not a multiple".into()),
                    ..Default::default()
                },
            ],
            recommendation: "PostgreSQL: keep it.".into(),
            ..Default::default()
        };
        let t = render_text(&r);
        assert!(t.contains("*8K"), "{t}");
        assert!(t.contains("n/a"), "{t}");
        assert!(t.contains("O_DIRECT|O_DSYNC 512: not a multiple"), "{t}");
        assert!(t.contains("1000"), "{t}");
        assert!(t.contains("2500 µs"), "{t}");
        assert!(t.contains("PostgreSQL: keep it."), "{t}");
    }
}

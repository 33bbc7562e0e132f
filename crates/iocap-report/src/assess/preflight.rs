//! `iocap preflight`: the capacity table with a verdict per row and what each row means.

use iocap_model::{Preflight, RunResult, Verdict};

use super::{wrap, Rows};
use crate::fmt::{self, MISSING};

/// A capacity value in its unit: `42,000 IOPS`, `1.25 ms`, `512.3 MB/s`.
pub(crate) fn value(v: Option<f64>, unit: &str) -> String {
    let Some(v) = v.filter(|v| v.is_finite()) else {
        return MISSING.into();
    };
    match unit {
        "IOPS" => format!("{} IOPS", fmt::count_or(v, MISSING)),
        "MB/s" => format!("{} MB/s", fmt::decimal_or(v, MISSING)),
        "us" | "µs" => fmt::lat_us(v),
        "ms" => fmt::lat_us(v * 1000.0),
        "%" => format!("{v:.1} %"),
        "" => format!("{v}"),
        u => format!("{} {u}", fmt::decimal_or(v, MISSING)),
    }
}

/// `1 FAIL, 1 WARN, 4 PASS, 1 INFO`: the worst first, verdicts with no row left out.
pub(crate) fn verdict_counts(p: &Preflight) -> String {
    let parts: Vec<String> = [Verdict::Fail, Verdict::Warn, Verdict::Pass, Verdict::Info]
        .iter()
        .filter_map(|v| {
            let n = p.rows.iter().filter(|r| r.verdict == *v).count();
            (n > 0).then(|| format!("{n} {}", v.name()))
        })
        .collect();
    if parts.is_empty() {
        "no verdicts".into()
    } else {
        parts.join(", ")
    }
}

/// `sqlserver profile, device class flash, quick`.
pub(crate) fn preflight_what(p: &Preflight) -> String {
    let mut s = format!("{} profile", p.profile);
    if !p.device_class.is_empty() {
        s.push_str(&format!(", device class {}", p.device_class));
    }
    if p.quick {
        s.push_str(", quick");
    }
    s
}

pub(crate) fn preflight_table(p: &Preflight) -> Rows {
    let against = p.rows.iter().any(|r| r.against.is_some());
    let rows = p
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut row = vec![
                (i + 1).to_string(),
                r.role.name().to_string(),
                r.metric.clone(),
                value(r.value, &r.unit),
            ];
            if against {
                row.push(r.against.clone().unwrap_or_else(|| MISSING.into()));
            }
            row.push(r.verdict.name().into());
            row
        })
        .collect();
    let (header, words) = if against {
        (
            vec!["#", "role", "metric", "value", "against", "verdict"],
            vec![1, 2, 4, 5],
        )
    } else {
        (
            vec!["#", "role", "metric", "value", "verdict"],
            vec![1, 2, 4],
        )
    };
    Rows {
        header,
        rows,
        words,
    }
}

/// The `iocap preflight` view: the capacity table with a verdict per row, what each row means
/// (numbered as in the table), then the warnings.
pub fn render_preflight(run: &RunResult, p: &Preflight) -> String {
    let mut out = String::from("preflight");
    if !run.host.hostname.is_empty() {
        out.push_str(&format!(
            " on {}",
            crate::fmt::printable(&run.host.hostname)
        ));
    }
    out.push_str(&format!(
        ": {}\nverdicts: {}\n",
        preflight_what(p),
        verdict_counts(p)
    ));
    if p.cache_included {
        out.push_str(&wrap(
            "figures: ",
            "cache included: the test files could not be 4 times the largest cache found, so \
             part of the reads are cache hits (see the warnings)",
            crate::width(),
        ));
    }
    out.push('\n');
    if p.rows.is_empty() {
        out.push_str("no capacity rows\n");
    } else {
        out.push_str(&preflight_table(p).render());
        out.push_str("\n\n");
        let width = p.rows.len().to_string().len();
        for (i, r) in p.rows.iter().enumerate() {
            let head = format!("{:>width$}. {:<4}  ", i + 1, r.verdict.name());
            let body = format!("{}: {}", r.role, r.sentence);
            out.push_str(&wrap(&head, &body, crate::width()));
        }
    }
    if let Some(c) = &run.cachescan {
        out.push('\n');
        for l in super::level_sentences(c).iter().chain(&c.notes) {
            out.push_str(&wrap("cache scan: ", l, crate::width()));
        }
    }
    if !p.warnings.is_empty() {
        out.push('\n');
        for w in &p.warnings {
            out.push_str(&wrap(
                "warning: ",
                &crate::fmt::printable_lines(w),
                crate::width(),
            ));
        }
    }
    out
}

//! `iocap saturate`: the steps with the knee marked, the throttled points, and the sentences
//! about the maximum, the knee and the capacity at the latency target.

use iocap_model::{CurvePoint, RunResult, Saturation};

use super::{paths, target, trim_pct, workload, wrap, Rows};
use crate::fmt::{self, MISSING};
use crate::{change_pct, plural};

/// The step with the highest IOPS.
fn best_step(s: &Saturation) -> Option<&CurvePoint> {
    s.steps
        .iter()
        .filter(|p| p.iops.is_finite())
        .max_by(|a, b| a.iops.total_cmp(&b.iops))
}

pub(crate) fn saturation_steps(s: &Saturation) -> Rows {
    let mut rows = vec![];
    let mut prev: Option<f64> = None;
    for p in &s.steps {
        let gain = prev
            .and_then(|b| change_pct(b, p.iops))
            .map(|g| format!("{g:+.1} %"))
            .unwrap_or_else(|| MISSING.into());
        prev = Some(p.iops);
        let mut note = vec![];
        if s.knee_qd == Some(p.qd) {
            note.push("◀ knee".to_string());
        }
        if let (Some(q), Some(t)) = (s.capacity_qd_at_target, s.latency_target_us) {
            if q == p.qd {
                note.push(format!("best with p99 <= {}", target(t)));
            }
        }
        rows.push(vec![
            p.qd.to_string(),
            fmt::count_or(p.iops, MISSING),
            fmt::decimal_or(p.mb_s, MISSING),
            fmt::lat_us_or(p.lat_us_p50, MISSING),
            fmt::lat_us_or(p.lat_us_p99, MISSING),
            gain,
            note.join(", "),
        ]);
    }
    Rows {
        header: vec!["qd", "IOPS", "MB/s", "p50", "p99", "gain", "note"],
        rows,
        words: vec![6],
    }
}

pub(crate) fn saturation_throttled(s: &Saturation) -> Rows {
    let rows = s
        .throttled
        .iter()
        .map(|p| {
            vec![
                p.load_pct
                    .filter(|v| v.is_finite())
                    .map(|v| format!("{v:.0} %"))
                    .unwrap_or_else(|| MISSING.into()),
                fmt::count_or(p.iops, MISSING),
                fmt::decimal_or(p.mb_s, MISSING),
                fmt::lat_us_or(p.lat_us_p50, MISSING),
                fmt::lat_us_or(p.lat_us_p99, MISSING),
            ]
        })
        .collect();
    Rows {
        header: vec!["load", "IOPS", "MB/s", "p50", "p99"],
        rows,
        words: vec![],
    }
}

/// The sweep over block sizes: each size's IOPS, MB/s and latency at the sweep's depth.
pub(crate) fn saturation_sizes(s: &Saturation) -> Rows {
    let rows = s
        .size_sweep
        .iter()
        .map(|p| {
            let spread = match (p.lat_us_p99, p.lat_us_p50) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
                _ => MISSING.into(),
            };
            vec![
                fmt::format_bytes(p.bs_bytes),
                fmt::count_or(p.iops, MISSING),
                fmt::decimal_or(p.mb_s, MISSING),
                fmt::lat_us_or(p.lat_us_p50, MISSING),
                fmt::lat_us_or(p.lat_us_p99, MISSING),
                spread,
            ]
        })
        .collect();
    Rows {
        header: vec!["size", "IOPS", "MB/s", "p50", "p99", "p99/p50"],
        rows,
        words: vec![],
    }
}

/// The sweep's table and the limit's verdict with its evidence; empty without a sweep.
fn limit_part(s: &Saturation) -> String {
    let Some(first) = s.size_sweep.first() else {
        return String::new();
    };
    let mut out = format!(
        "
block sizes at qd {} ({} outstanding)
",
        first.qd, first.outstanding
    );
    out.push_str(&saturation_sizes(s).render());
    out.push('\n');
    out
}

fn limit_lines(run: &RunResult, s: &Saturation) -> String {
    let mut out = String::new();
    if let Some(l) = &s.limit {
        out.push_str(&wrap("limit:    ", &l.sentence, crate::width()));
        for e in &l.evidence {
            out.push_str(&wrap("          - ", e, crate::width()));
        }
    }
    for d in &s.drops {
        out.push_str(&wrap("burst:    ", &drop_sentence(run, d), crate::width()));
    }
    if let Some(b) = &s.bucket {
        out.push_str(&wrap("bucket:   ", &b.sentence, crate::width()));
        for r in refill_lines(b) {
            out.push_str(&wrap("          - ", &r, crate::width()));
        }
    }
    out
}

/// Each refill probe in words: `after 10 s idle: 2,000 I/Os regained (200 per second)`.
pub(crate) fn refill_lines(b: &iocap_model::BurstBucket) -> Vec<String> {
    b.refills
        .iter()
        .map(|r| {
            format!(
                "after {:.0} s idle: {} I/Os regained ({} per second idle)",
                r.idle_s,
                fmt::count(r.regained_ios),
                fmt::count(r.ios_per_idle_s)
            )
        })
        .collect()
}

/// `randread 8K qd 4: IOPS fell from 3,000 to 500 after 6 s and stayed: ...`.
pub(crate) fn drop_sentence(run: &RunResult, d: &iocap_model::LevelDrop) -> String {
    let name = run
        .tests
        .get(d.test_idx as usize)
        .map_or("a test", |t| t.name.as_str());
    iocap_assess::burst::sentence(name, d)
}

/// `412,000 IOPS, 3,375.1 MB/s (at qd 64)`.
pub(crate) fn max_sentence(s: &Saturation) -> String {
    let at = best_step(s)
        .map(|p| format!(" (at qd {})", p.qd))
        .unwrap_or_default();
    format!(
        "{} IOPS, {} MB/s{at}",
        fmt::count_or(s.max_iops, MISSING),
        fmt::decimal_or(s.max_mb_s, MISSING)
    )
}

/// Where the knee is, or that there is none: `qd 16 (past it, ...)`.
pub(crate) fn knee_sentence(s: &Saturation) -> String {
    match s.knee_qd {
        Some(q) => format!(
            "qd {q} (past it, each doubling of the queue depth gained less than {} % IOPS \
             while latency kept rising)",
            trim_pct(s.min_gain_pct)
        ),
        None => "none (throughput never flattened before the steps stopped)".into(),
    }
}

/// `42,000 IOPS with p99 <= 10 ms, at qd 16`; `None` when no target was set.
pub(crate) fn capacity_sentence(s: &Saturation) -> Option<String> {
    let t = target(s.latency_target_us?);
    Some(match (s.capacity_iops_at_target, s.capacity_qd_at_target) {
        (Some(iops), Some(qd)) => format!(
            "{} IOPS with p99 <= {t}, at qd {qd}",
            fmt::count_or(iops, MISSING)
        ),
        (Some(iops), None) => format!("{} IOPS with p99 <= {t}", fmt::count_or(iops, MISSING)),
        _ => format!("no step kept p99 <= {t}"),
    })
}

/// The `iocap saturate` view: the steps with the knee marked, the throttled points, then the
/// maximum, the knee (or why the steps stopped) and the capacity at the latency target.
pub fn render_saturation(run: &RunResult, s: &Saturation) -> String {
    let mut out = String::from("saturation");
    let first = s
        .steps
        .first()
        .and_then(|p| run.tests.get(p.test_idx as usize));
    if let Some(t) = first {
        out.push_str(&format!(": {} on {}", workload(t), paths(t)));
    }
    out.push('\n');
    let mut limits = vec![format!(
        "flat below {} % more IOPS per doubling of the queue depth",
        trim_pct(s.min_gain_pct)
    )];
    if let Some(c) = s.lat_ceiling_us {
        limits.push(format!("steps end past p99 {}", target(c)));
    }
    for l in limits {
        out.push_str(&wrap("", &l, crate::width()));
    }
    out.push('\n');
    if s.steps.is_empty() {
        out.push_str("no steps measured\n");
    } else {
        out.push_str(&format!("steps ({})\n", plural(s.steps.len(), "step")));
        out.push_str(&saturation_steps(s).render());
        out.push('\n');
    }
    if !s.throttled.is_empty() {
        out.push_str("\nthrottled to a share of the maximum\n");
        out.push_str(&saturation_throttled(s).render());
        out.push('\n');
    }
    out.push_str(&limit_part(s));
    out.push('\n');
    out.push_str(&wrap("max:      ", &max_sentence(s), crate::width()));
    out.push_str(&wrap("knee:     ", &knee_sentence(s), crate::width()));
    if !s.stop_reason.trim().is_empty() {
        out.push_str(&wrap("stopped:  ", s.stop_reason.trim(), crate::width()));
    }
    match capacity_sentence(s) {
        Some(c) => out.push_str(&wrap("capacity: ", &c, crate::width())),
        None => out.push_str("capacity: no latency target was set\n"),
    }
    out.push_str(&limit_lines(run, s));
    out
}

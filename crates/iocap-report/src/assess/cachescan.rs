//! `iocap cachescan`: the sweep's steps with the cache levels marked, a chart of qd-1 latency
//! against the working set (both on log axes: each column is a doubling), the levels in
//! words, the read-after-write check, and what the scan could not rule out.

use iocap_model::{format_bytes, human_bytes, CacheScan};

use super::{wrap, Rows};
use crate::fmt::{self, MISSING};

/// Width of the terminal views.
fn width() -> usize {
    crate::width()
}

/// Rows of the latency chart.
const CHART_ROWS: usize = 8;

pub(crate) fn cachescan_steps(s: &CacheScan) -> Rows {
    let rows = s
        .steps
        .iter()
        .map(|p| {
            let mark = s
                .levels
                .iter()
                .position(|l| l.exceeds_bytes == p.working_set_bytes)
                .map(|i| format!("◀ past cache {}", i + 1))
                .unwrap_or_default();
            vec![
                format_bytes(p.working_set_bytes),
                fmt::lat_us_or(Some(p.lat_us_trim_mean), MISSING),
                fmt::lat_us_or(Some(p.lat_us_p50), MISSING),
                fmt::lat_us_or(Some(p.lat_us_p99), MISSING),
                fmt::count_or(p.iops_qd32, MISSING),
                mark,
            ]
        })
        .collect();
    Rows {
        header: vec![
            "working set",
            "mean (98 %)",
            "p50",
            "p99",
            "qd32 IOPS",
            "note",
        ],
        rows,
        words: vec![5],
    }
}

/// `cache 1: between 32M and 64M (about 40M); hits 18 µs, misses 1.02 ms`.
pub(crate) fn level_sentences(s: &CacheScan) -> Vec<String> {
    s.levels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            format!(
                "cache {}: holds between {} and {} (about {}); reads take {} while the \
                 working set fits, {} past it; qd 32 IOPS fall from {} to {}",
                i + 1,
                format_bytes(l.fits_bytes),
                format_bytes(l.exceeds_bytes),
                human_bytes(l.estimated_bytes),
                fmt::lat_us(l.hit_lat_us),
                fmt::lat_us(l.miss_lat_us),
                fmt::count_or(l.hit_iops_qd32, MISSING),
                fmt::count_or(l.miss_iops_qd32, MISSING)
            )
        })
        .collect()
}

/// Mean qd-1 latency (rows, log scale) against the working set (columns, one per doubling).
pub(crate) fn chart(s: &CacheScan) -> String {
    let pts: Vec<(u64, f64)> = s
        .steps
        .iter()
        .filter(|p| p.lat_us_trim_mean.is_finite() && p.lat_us_trim_mean > 0.0)
        .map(|p| (p.working_set_bytes, p.lat_us_trim_mean))
        .collect();
    if pts.len() < 2 {
        return String::new();
    }
    let (lo, hi) = pts
        .iter()
        .fold((f64::MAX, 0f64), |(a, b), p| (a.min(p.1), b.max(p.1)));
    // at least a factor of 4 top to bottom, around the middle, so that noise on a flat curve
    // looks flat
    let (lo, hi) = if hi < 4.0 * lo {
        let mid = (lo * hi).sqrt();
        (mid / 2.0, mid * 2.0)
    } else {
        (lo, hi)
    };
    let (llo, lhi) = (lo.ln(), hi.ln().max(lo.ln() + 1e-9));
    let label_w = 9;
    let col = ((width() - label_w - 1) / pts.len()).clamp(4, 7);
    let row_of = |v: f64| {
        let f = (v.ln() - llo) / (lhi - llo);
        (CHART_ROWS - 1) - (f * (CHART_ROWS - 1) as f64).round() as usize
    };
    let mut out = String::from("qd 1 latency (mean of the fastest 98 %) against working set\n");
    for r in 0..CHART_ROWS {
        let axis = match r {
            0 => fmt::lat_us(hi),
            _ if r == CHART_ROWS - 1 => fmt::lat_us(lo),
            _ => String::new(),
        };
        let mut line = format!("{axis:>w$} │", w = label_w - 1);
        for &(_, v) in &pts {
            let cell = if row_of(v) == r { "●" } else { "" };
            line.push_str(&format!("{cell:^col$}"));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "{:>w$} └{}\n",
        "",
        "─".repeat(col * pts.len()),
        w = label_w - 1
    ));
    let mut axis = format!("{:w$} ", "", w = label_w);
    for &(ws, _) in &pts {
        axis.push_str(&format!("{:^col$}", short_size(ws)));
    }
    out.push_str(axis.trim_end());
    out.push('\n');
    out
}

/// A size in at most 5 characters for the chart's axis: `16M`, `1G`, `1.5G`.
fn short_size(b: u64) -> String {
    human_bytes(b).replace(".0", "")
}

/// The `iocap cachescan` view.
pub fn render_cachescan(s: &CacheScan) -> String {
    let mut out = format!(
        "cachescan: {} random reads on {}\n\n",
        format_bytes(s.block_bytes),
        s.target
    );
    if s.steps.is_empty() {
        out.push_str("no working set was measured\n");
    } else {
        out.push_str(&cachescan_steps(s).render());
        out.push_str("\n\n");
        out.push_str(&chart(s));
        out.push('\n');
    }
    if s.levels.is_empty() {
        out.push_str(&wrap(
            "caches:  ",
            &format!("none found up to {}", human_bytes(s.tried_up_to_bytes)),
            width(),
        ));
    }
    for l in level_sentences(s) {
        out.push_str(&wrap("found:   ", &l, width()));
    }
    out.push_str(&wrap("stopped: ", &s.stop_reason, width()));
    for n in &s.notes {
        out.push_str(&wrap("note:    ", n, width()));
    }
    out
}

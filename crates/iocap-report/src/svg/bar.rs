//! Horizontal bar charts: bars from zero grouped by label (one group per target, one bar per
//! run), with the value written after each bar. Negative and non-finite values are dropped
//! before layout, so `data-points` counts exactly the bars drawn.

use std::fmt::Write as _;

use super::{c, empty_chart, legend, open, Axis, TickFmt, W};
use crate::fmt::escape;

/// One bar of a group.
#[derive(Debug, Clone)]
pub(crate) struct Bar {
    pub value: f64,
    pub colour: &'static str,
    /// Written after the end of the bar.
    pub text: String,
    pub tip: String,
}

/// Bars that share a label (one target), one bar per run.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub label: String,
    pub bars: Vec<Bar>,
}

/// Keeps the end of a long label (the file name matters more than the mount point).
fn shorten(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        s.to_string()
    } else {
        let tail: String = s.chars().skip(n - (max - 1)).collect();
        format!("…{tail}")
    }
}

/// Horizontal bars from zero, grouped by label, with the value written after each bar.
pub(crate) fn bar_chart(
    id: &str,
    test: usize,
    title: &str,
    axis_label: &str,
    fmt: TickFmt,
    groups: &[Group],
    legend_items: &[(String, &'static str)],
) -> String {
    let (bar_h, gap, group_gap) = (15.0, 3.0, 14.0);
    let bars: Vec<Vec<&Bar>> = groups
        .iter()
        .map(|g| {
            g.bars
                .iter()
                .filter(|b| b.value.is_finite() && b.value >= 0.0)
                .collect()
        })
        .collect();
    let n: usize = bars.iter().map(Vec::len).sum();
    if n == 0 {
        return empty_chart(id, test, title, "no data");
    }
    let items: Vec<(&str, &str, bool)> = legend_items
        .iter()
        .map(|(n, col)| (n.as_str(), *col, false))
        .collect();
    let mut legend_svg = String::new();
    let top = 34.0 + legend(&mut legend_svg, &items, 190.0, 40.0) + 6.0;
    let body: f64 = bars
        .iter()
        .filter(|b| !b.is_empty())
        .map(|b| b.len() as f64 * (bar_h + gap) - gap + group_gap)
        .sum::<f64>()
        .max(40.0);
    let h = top + body + 44.0;
    let bottom = top + body;
    let (left, right) = (190.0, W - 90.0);
    let values: Vec<f64> = bars.iter().flatten().map(|b| b.value).collect();
    let axis = Axis::linear(axis_label, &values, fmt);
    let px = |v: f64| left + axis.frac(v) * (right - left);
    let mut out = String::new();
    open(&mut out, id, test, n, h, title);
    out.push_str(&legend_svg);
    for t in axis.ticks() {
        let _ = write!(
            out,
            r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#e3e3e3"/><text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
            c(top),
            c(bottom + 4.0),
            c(bottom + 17.0),
            escape(&fmt.format(t)),
            x = c(px(t))
        );
    }
    let _ = write!(
        out,
        r##"<path d="M{l} {t}V{b}H{r}" fill="none" stroke="#777"/><text x="{}" y="{}" text-anchor="middle" font-size="12">{}</text>"##,
        c((left + right) / 2.0),
        c(h - 8.0),
        escape(axis_label),
        l = c(left),
        t = c(top),
        b = c(bottom),
        r = c(right)
    );
    let mut y = top + group_gap / 2.0;
    for (g, bs) in groups.iter().zip(&bars) {
        if bs.is_empty() {
            continue;
        }
        let gh = bs.len() as f64 * (bar_h + gap) - gap;
        let _ = write!(
            out,
            r#"<text class="group" x="{}" y="{}" text-anchor="end"><title>{}</title>{}</text>"#,
            c(left - 8.0),
            c(y + gh / 2.0 + 4.0),
            escape(&g.label),
            escape(&shorten(&g.label, 28))
        );
        for b in bs {
            let w = (px(b.value) - left).max(1.0);
            let _ = write!(
                out,
                r##"<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect><text x="{}" y="{}" font-size="11" fill="#333">{}</text>"##,
                c(left),
                c(y),
                c(w),
                c(bar_h),
                b.colour,
                escape(&b.tip),
                c(left + w + 4.0),
                c(y + bar_h - 3.5),
                escape(&b.text)
            );
            y += bar_h + gap;
        }
        y += group_gap - gap;
    }
    out.push_str("</svg>");
    out
}

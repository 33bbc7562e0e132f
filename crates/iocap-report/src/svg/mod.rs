//! Chart primitives for the HTML report, written by hand so the report stays one self-contained
//! file with no script, no external library and no dependency: axes with nice ticks on linear,
//! logarithmic and "nines" (percentile) scales, polylines with one marker per data point, grouped
//! horizontal bars, a legend and `<title>` tooltips.
//!
//! Every chart is `<svg class="chart" data-chart=ID data-points=N>` and every plotted value is
//! one `<circle class="pt">` or `<rect class="bar">`, so tests (and a browser) can check that
//! nothing was lost. Non-finite values, and values a log scale cannot show, are dropped before
//! layout and never reach an attribute; `data-points` counts what was actually drawn.
//!
//! `axis` holds the scales and their ticks, `line` and `bar` the two kinds of chart; this file
//! the frame, legend and number formatting they share.

mod axis;
mod bar;
mod line;

use std::fmt::Write as _;

use crate::fmt::escape;

pub(crate) use axis::{Axis, TickFmt};
pub(crate) use bar::{bar_chart, Bar, Group};
pub(crate) use line::{line_chart, Extras, HLine, Highlight, Point, Series};

/// Colour-blind-safe colours (Okabe and Ito), dark enough for white paper; one per run.
const PALETTE: [&str; 8] = [
    "#0b62a4", "#d55e00", "#009e73", "#cc79a7", "#7a5c00", "#56b4e9", "#333333", "#e69f00",
];

/// The colour of the `i`th run.
pub(crate) fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

const W: f64 = 640.0;
const FONT: &str =
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";

/// A number with at most two decimals and no trailing zeros; never NaN or inf.
fn trim(v: f64) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// A coordinate for an attribute: one decimal, never NaN or inf.
fn c(v: f64) -> String {
    if v.is_finite() {
        trim((v * 10.0).round() / 10.0)
    } else {
        "0".into()
    }
}

/// Legend entries laid out left to right, wrapping; returns the SVG and the height used.
fn legend(out: &mut String, items: &[(&str, &str, bool)], left: f64, top: f64) -> f64 {
    let (mut x, mut y) = (left, top);
    for (name, col, dashed) in items {
        let label: String = name.chars().take(48).collect();
        let w = 30.0 + 6.6 * label.chars().count() as f64 + 14.0;
        if x > left && x + w > W - 10.0 {
            x = left;
            y += 17.0;
        }
        let dash = if *dashed {
            r#" stroke-dasharray="5 3""#
        } else {
            ""
        };
        let _ = write!(
            out,
            r#"<g class="legend"><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{col}" stroke-width="2.5"{dash}/><text x="{}" y="{}" font-size="11.5">{}</text></g>"#,
            c(x),
            c(y - 4.0),
            c(x + 24.0),
            c(y - 4.0),
            c(x + 30.0),
            c(y),
            escape(&label)
        );
        x += w;
    }
    if items.is_empty() {
        0.0
    } else {
        y - top + 17.0
    }
}

fn open(out: &mut String, id: &str, test: usize, points: usize, h: f64, title: &str) {
    let _ = write!(
        out,
        r##"<svg class="chart" data-chart="{}" data-test="{test}" data-points="{points}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" font-family="{FONT}" font-size="12" fill="#222"><title>{}</title><text class="chart-title" x="12" y="21" font-size="15" font-weight="600">{}</text>"##,
        escape(id),
        c(W),
        c(h),
        c(W),
        c(h),
        escape(title),
        escape(title)
    );
}

/// A chart with nothing to draw: its title and why, in a short frame.
fn empty_chart(id: &str, test: usize, title: &str, why: &str) -> String {
    const H: f64 = 110.0;
    let mut out = String::new();
    open(&mut out, id, test, 0, H, title);
    let _ = write!(
        out,
        r##"<rect x="12" y="34" width="{}" height="{}" fill="none" stroke="#ccc" stroke-dasharray="4 3"/><text x="{}" y="{}" text-anchor="middle" fill="#666" font-size="13">{}</text></svg>"##,
        c(W - 24.0),
        c(H - 46.0),
        c(W / 2.0),
        c(H / 2.0 + 16.0),
        escape(why)
    );
    out
}

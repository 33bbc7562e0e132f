//! Chart primitives for the HTML report, written by hand so the report stays one self-contained
//! file with no script, no external library and no dependency: axes with nice ticks on linear,
//! logarithmic and "nines" (percentile) scales, polylines with one marker per data point, grouped
//! horizontal bars, a legend and `<title>` tooltips.
//!
//! Every chart is `<svg class="chart" data-chart=ID data-points=N>` and every plotted value is
//! one `<circle class="pt">` or `<rect class="bar">`, so tests (and a browser) can check that
//! nothing was lost. Non-finite values, and values a log scale cannot show, are dropped before
//! layout and never reach an attribute; `data-points` counts what was actually drawn.

use std::fmt::Write as _;

use crate::fmt_count;
use crate::html::escape;

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

/// How tick values are written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TickFmt {
    /// 0, 500, 1k, 2.5k, 1.2M
    Si,
    /// Plain decimal, e.g. seconds.
    Plain,
    /// A latency held in µs, written in µs.
    Us,
    /// A latency held in µs, written in ms.
    Ms,
    /// A quantile (0..1) written as a percentile: 0, 90, 99, 99.9.
    Nines,
}

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

impl TickFmt {
    pub(crate) fn format(self, v: f64) -> String {
        match self {
            TickFmt::Si if v.abs() >= 1e6 => format!("{}M", trim(v / 1e6)),
            TickFmt::Si if v.abs() >= 1e3 => format!("{}k", trim(v / 1e3)),
            TickFmt::Si | TickFmt::Plain | TickFmt::Us => trim(v),
            TickFmt::Ms => trim(v / 1000.0),
            TickFmt::Nines => {
                let s = format!("{:.5}", v * 100.0);
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            }
        }
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

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Linear,
    Log,
    /// Quantiles on `-log10(1 - q)`: 0 %, 90 %, 99 %, 99.9 % evenly spaced.
    Nines,
}

/// One axis: its scale, its range in data units and how its ticks read.
#[derive(Debug, Clone)]
pub(crate) struct Axis {
    pub label: String,
    kind: Kind,
    min: f64,
    max: f64,
    fmt: TickFmt,
}

/// "Nice" numbers for steps: 1, 2, 2.5, 5 times a power of ten.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let n = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

fn finite_range(values: &[f64]) -> Option<(f64, f64)> {
    let mut it = values.iter().copied().filter(|v| v.is_finite());
    let first = it.next()?;
    Some(it.fold((first, first), |(lo, hi), v| (lo.min(v), hi.max(v))))
}

impl Axis {
    /// A linear axis over `values`, from zero when `from_zero`, widened to nice ticks.
    pub(crate) fn linear(label: &str, values: &[f64], from_zero: bool, fmt: TickFmt) -> Axis {
        let (mut lo, mut hi) = finite_range(values).unwrap_or((0.0, 1.0));
        if from_zero {
            lo = lo.min(0.0);
            hi = hi.max(0.0);
        }
        if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
            let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
            hi += pad;
            if !from_zero || lo != 0.0 {
                lo -= pad;
            }
        }
        let step = nice_step((hi - lo) / 5.0);
        Axis {
            label: label.into(),
            kind: Kind::Linear,
            min: (lo / step).floor() * step,
            max: (hi / step).ceil() * step,
            fmt,
        }
    }

    /// A logarithmic axis over the positive `values`, widened to 1-2-5 bounds.
    pub(crate) fn log(label: &str, values: &[f64], fmt: TickFmt) -> Axis {
        let pos: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
        let (lo, hi) = finite_range(&pos).unwrap_or((1.0, 10.0));
        let down = |v: f64| {
            let m = 10f64.powf(v.log10().floor());
            [5.0, 2.0, 1.0]
                .iter()
                .map(|k| k * m)
                .find(|b| *b <= v * 1.000_001)
                .unwrap_or(m)
        };
        let up = |v: f64| {
            let m = 10f64.powf(v.log10().floor());
            [1.0, 2.0, 5.0, 10.0]
                .iter()
                .map(|k| k * m)
                .find(|b| *b >= v / 1.000_001)
                .unwrap_or(10.0 * m)
        };
        let (min, mut max) = (down(lo), up(hi));
        if max <= min {
            max = min * 10.0;
        }
        Axis {
            label: label.into(),
            kind: Kind::Log,
            min,
            max,
            fmt,
        }
    }

    /// A percentile axis from 0 to `nines` nines (2: 99 %, 5: 99.999 %).
    pub(crate) fn nines(label: &str, nines: u32) -> Axis {
        Axis {
            label: label.into(),
            kind: Kind::Nines,
            min: 0.0,
            max: f64::from(nines.max(1)),
            fmt: TickFmt::Nines,
        }
    }

    /// Whether a value can be placed on this axis at all.
    pub(crate) fn accepts(&self, v: f64) -> bool {
        v.is_finite()
            && match self.kind {
                Kind::Linear => true,
                Kind::Log => v > 0.0,
                Kind::Nines => (0.0..1.0).contains(&v),
            }
    }

    /// Where `v` falls, 0 at `min` and 1 at `max`, clamped.
    fn frac(&self, v: f64) -> f64 {
        let f = match self.kind {
            Kind::Linear => (v - self.min) / (self.max - self.min),
            Kind::Log => (v.ln() - self.min.ln()) / (self.max.ln() - self.min.ln()),
            Kind::Nines => -(1.0 - v).log10() / self.max,
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    fn ticks(&self) -> Vec<f64> {
        match self.kind {
            Kind::Linear => {
                let step = nice_step((self.max - self.min) / 5.0);
                let n = ((self.max - self.min) / step).round() as i64;
                (0..=n.clamp(0, 50))
                    .map(|i| self.min + i as f64 * step)
                    .collect()
            }
            Kind::Log => {
                let (a, b) = (
                    self.min.log10().floor() as i32,
                    self.max.log10().ceil() as i32,
                );
                let mults: &[f64] = if b - a <= 3 { &[1.0, 2.0, 5.0] } else { &[1.0] };
                (a..=b)
                    .flat_map(|e| mults.iter().map(move |m| m * 10f64.powi(e)))
                    .filter(|v| *v >= self.min / 1.000_001 && *v <= self.max * 1.000_001)
                    .collect()
            }
            Kind::Nines => (0..=self.max as i32)
                .map(|k| 1.0 - 10f64.powi(-k))
                .collect(),
        }
    }
}

/// One plotted value with its tooltip.
#[derive(Debug, Clone)]
pub(crate) struct Point {
    pub x: f64,
    pub y: f64,
    pub tip: String,
}

/// A line with a marker on every point.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub name: String,
    pub colour: &'static str,
    /// Dashed line and hollow markers, for a secondary series in the same colour.
    pub dashed: bool,
    pub points: Vec<Point>,
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

/// A line chart: `series` over axes `x` and `y`; `empty` is shown when nothing can be drawn.
pub(crate) fn line_chart(
    id: &str,
    test: usize,
    title: &str,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    empty: &str,
) -> String {
    const H: f64 = 320.0;
    let drawn: Vec<Vec<&Point>> = series
        .iter()
        .map(|s| {
            s.points
                .iter()
                .filter(|p| x.accepts(p.x) && y.accepts(p.y))
                .collect()
        })
        .collect();
    let n: usize = drawn.iter().map(Vec::len).sum();
    if n == 0 {
        return empty_chart(id, test, title, empty);
    }
    let mut out = String::new();
    open(&mut out, id, test, n, H, title);
    let items: Vec<(&str, &str, bool)> = if series.len() > 1 {
        series
            .iter()
            .map(|s| (s.name.as_str(), s.colour, s.dashed))
            .collect()
    } else {
        vec![]
    };
    let (left, right, bottom) = (70.0, W - 24.0, H - 44.0);
    let top = 34.0 + legend(&mut out, &items, left, 40.0) + 6.0;
    let px = |v: f64| left + x.frac(v) * (right - left);
    let py = |v: f64| bottom - y.frac(v) * (bottom - top);
    // grid and ticks
    for t in y.ticks() {
        let yy = py(t);
        let _ = write!(
            out,
            r##"<line x1="{l}" y1="{y}" x2="{r}" y2="{y}" stroke="#e3e3e3"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            c(left - 6.0),
            c(yy + 4.0),
            escape(&y.fmt.format(t)),
            l = c(left),
            r = c(right),
            y = c(yy)
        );
    }
    for t in x.ticks() {
        let xx = px(t);
        let _ = write!(
            out,
            r##"<line x1="{x}" y1="{b}" x2="{x}" y2="{}" stroke="#999"/><text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
            c(bottom + 4.0),
            c(bottom + 17.0),
            escape(&x.fmt.format(t)),
            x = c(xx),
            b = c(bottom)
        );
    }
    let _ = write!(
        out,
        r##"<path d="M{l} {t}V{b}H{r}" fill="none" stroke="#777"/><text x="{}" y="{}" text-anchor="middle" font-size="12.5">{}</text><text x="14" y="{}" text-anchor="middle" font-size="12.5" transform="rotate(-90 14 {})">{}</text>"##,
        c((left + right) / 2.0),
        c(H - 8.0),
        escape(&x.label),
        c((top + bottom) / 2.0),
        c((top + bottom) / 2.0),
        escape(&y.label),
        l = c(left),
        t = c(top),
        b = c(bottom),
        r = c(right)
    );
    for (s, pts) in series.iter().zip(&drawn) {
        let r = if pts.len() > 120 { 1.6 } else { 2.8 };
        let dash = if s.dashed {
            r#" stroke-dasharray="5 3""#
        } else {
            ""
        };
        if pts.len() > 1 {
            let coords: Vec<String> = pts
                .iter()
                .map(|p| format!("{},{}", c(px(p.x)), c(py(p.y))))
                .collect();
            let _ = write!(
                out,
                r#"<polyline class="line" points="{}" fill="none" stroke="{}" stroke-width="1.8" stroke-linejoin="round"{dash}/>"#,
                coords.join(" "),
                s.colour
            );
        }
        let fill = if s.dashed { "#fff" } else { s.colour };
        for p in pts {
            let _ = write!(
                out,
                r#"<circle class="pt" cx="{}" cy="{}" r="{r}" fill="{fill}" stroke="{}" stroke-width="1.2"><title>{}</title></circle>"#,
                c(px(p.x)),
                c(py(p.y)),
                s.colour,
                escape(&p.tip)
            );
        }
    }
    out.push_str("</svg>");
    out
}

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
    let axis = Axis::linear(axis_label, &values, true, fmt);
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

/// Compact count for tooltips and bar labels.
pub(crate) fn count(v: f64) -> String {
    if v.is_finite() {
        fmt_count(v.max(0.0))
    } else {
        "-".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_linear_ticks() {
        let a = Axis::linear("x", &[3.0, 97.0], true, TickFmt::Plain);
        assert_eq!((a.min, a.max), (0.0, 100.0));
        assert_eq!(a.ticks(), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        let a = Axis::linear("x", &[38_500.0, 41_700.0], true, TickFmt::Si);
        assert_eq!(a.min, 0.0);
        assert!(a.max >= 41_700.0 && a.max <= 50_000.0, "{}", a.max);
        assert_eq!(TickFmt::Si.format(40_000.0), "40k");
        assert_eq!(TickFmt::Si.format(2_500.0), "2.5k");
        assert_eq!(TickFmt::Si.format(1_200_000.0), "1.2M");
    }

    #[test]
    fn degenerate_ranges_do_not_divide_by_zero() {
        for vals in [
            &[][..],
            &[0.0][..],
            &[5.0, 5.0][..],
            &[f64::NAN, f64::INFINITY][..],
        ] {
            let a = Axis::linear("x", vals, true, TickFmt::Plain);
            assert!(a.max > a.min, "{vals:?}: {a:?}");
            assert!(a.frac(1.0).is_finite());
            let l = Axis::log("y", vals, TickFmt::Us);
            assert!(l.max > l.min && l.min > 0.0, "{vals:?}: {l:?}");
        }
    }

    #[test]
    fn log_and_nines_ticks() {
        let a = Axis::log("lat", &[130.0, 4_300.0], TickFmt::Us);
        assert_eq!((a.min, a.max), (100.0, 5000.0));
        assert_eq!(a.ticks(), vec![100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0]);
        let n = Axis::nines("p", 5);
        let labels: Vec<String> = n
            .ticks()
            .iter()
            .map(|t| TickFmt::Nines.format(*t))
            .collect();
        assert_eq!(labels, ["0", "90", "99", "99.9", "99.99", "99.999"]);
        assert!((n.frac(0.99) - 0.4).abs() < 1e-9);
        assert!(!n.accepts(1.0));
    }

    #[test]
    fn no_nan_reaches_an_attribute() {
        let s = Series {
            name: "a".into(),
            colour: colour(0),
            dashed: false,
            points: vec![
                Point {
                    x: 1.0,
                    y: f64::NAN,
                    tip: "nan".into(),
                },
                Point {
                    x: f64::INFINITY,
                    y: 1.0,
                    tip: "inf".into(),
                },
                Point {
                    x: 2.0,
                    y: 3.0,
                    tip: "ok".into(),
                },
            ],
        };
        let x = Axis::linear("t", &[1.0, 2.0], true, TickFmt::Plain);
        let y = Axis::log("v", &[3.0], TickFmt::Us);
        let svg = line_chart("t", 0, "T", &x, &y, &[s], "none");
        assert!(svg.contains(r#"data-points="1""#), "{svg}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }
}

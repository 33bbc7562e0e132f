//! Line charts: one polyline per series with a marker on every drawn point, over a linear,
//! log or percentile axis. Points an axis cannot place are dropped here, before layout, so
//! `data-points` counts exactly the markers drawn.

use std::fmt::Write as _;

use super::{c, empty_chart, legend, open, Axis, W};
use crate::fmt::escape;

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

/// A horizontal reference line across the plot, e.g. a latency target, labelled at its right.
#[derive(Debug, Clone)]
pub(crate) struct HLine {
    pub y: f64,
    pub label: String,
}

/// A point singled out (e.g. the knee of a curve): a ring around it and a label beside it.
/// Not a data point: it is drawn over one and not counted in `data-points`.
#[derive(Debug, Clone)]
pub(crate) struct Highlight {
    pub x: f64,
    pub y: f64,
    pub colour: &'static str,
    pub label: String,
}

/// What a line chart draws over its series.
#[derive(Debug, Clone, Default)]
pub(crate) struct Extras {
    pub hlines: Vec<HLine>,
    pub highlights: Vec<Highlight>,
}

/// A white outline under annotation text, so it reads where it crosses a line.
const HALO: &str =
    r##" stroke="#fff" stroke-width="3" stroke-linejoin="round" paint-order="stroke""##;

/// Where annotation labels go: each is kept inside the plot and off the labels placed before
/// it (widths are estimated generously, as the font is the reader's).
struct Labels {
    placed: Vec<(f64, f64, f64, f64)>,
    area: (f64, f64, f64, f64),
}

impl Labels {
    const CHAR_W: f64 = 6.9;
    const LINE_H: f64 = 14.0;

    /// Finds a free spot for `text` near (`x`, `y`), the text's baseline; returns the baseline
    /// position and whether the text is anchored at its end.
    fn place(&mut self, text: &str, x: f64, y: f64) -> (f64, f64, bool) {
        let w = Self::CHAR_W * text.chars().count() as f64;
        let (l, t, r, b) = self.area;
        let end = x + w > r;
        let x0 = if end { (x - w).max(l) } else { x.max(l) };
        let mut yy = y.clamp(t + Self::LINE_H, b - 2.0);
        for k in 0..12 {
            let hit = |yy: f64| {
                self.placed.iter().any(|&(pl, pt, pr, pb)| {
                    x0 < pr && x0 + w > pl && yy - Self::LINE_H + 2.0 < pb && yy + 2.0 > pt
                })
            };
            if !hit(yy) {
                break;
            }
            // alternate below and above the wanted spot, further each time
            let step = Self::LINE_H * f64::from(k / 2 + 1);
            let cand = if k % 2 == 0 { y + step } else { y - step };
            yy = cand.clamp(t + Self::LINE_H, b - 2.0);
        }
        self.placed
            .push((x0, yy - Self::LINE_H + 2.0, x0 + w, yy + 2.0));
        (if end { x0 + w } else { x0 }, yy, end)
    }
}

/// A line chart: `series` over axes `x` and `y`, with `extras` (reference lines, highlighted
/// points) over them; `empty` is shown when nothing can be drawn.
#[allow(clippy::too_many_arguments)]
pub(crate) fn line_chart(
    id: &str,
    test: usize,
    title: &str,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    empty: &str,
    extras: &Extras,
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
    let mut labels = Labels {
        placed: vec![],
        area: (left + 4.0, top, right - 4.0, bottom),
    };
    for h in extras.hlines.iter().filter(|h| y.accepts(h.y)) {
        let yy = py(h.y);
        let (tx, ty, _) = labels.place(
            &h.label,
            right - 4.0 - Labels::CHAR_W * h.label.chars().count() as f64,
            yy - 4.0,
        );
        let _ = write!(
            out,
            r##"<line class="ref" x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#b91c1c" stroke-width="1.3" stroke-dasharray="6 4"/><text class="ref" x="{}" y="{}" font-size="11" fill="#b91c1c"{HALO}>{}</text>"##,
            c(left),
            c(right),
            c(tx),
            c(ty),
            escape(&h.label),
            y = c(yy)
        );
    }
    for h in extras
        .highlights
        .iter()
        .filter(|h| x.accepts(h.x) && y.accepts(h.y))
    {
        let (hx, hy) = (px(h.x), py(h.y));
        let (tx, ty, end) = labels.place(&h.label, hx + 10.0, hy + 18.0);
        let anchor = if end { r#" text-anchor="end""# } else { "" };
        let _ = write!(
            out,
            r##"<circle class="highlight" cx="{}" cy="{}" r="7.5" fill="none" stroke="{}" stroke-width="2.2"/><text class="highlight" x="{}" y="{}" font-size="11" font-weight="600" fill="{}"{anchor}{HALO}>{}</text>"##,
            c(hx),
            c(hy),
            h.colour,
            c(tx),
            c(ty),
            h.colour,
            escape(&h.label)
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::{colour, TickFmt};

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
        let x = Axis::linear("t", &[1.0, 2.0], TickFmt::Plain);
        let y = Axis::log("v", &[3.0], TickFmt::Us);
        let svg = line_chart("t", 0, "T", &x, &y, &[s], "none", &Extras::default());
        assert!(svg.contains(r#"data-points="1""#), "{svg}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }
}

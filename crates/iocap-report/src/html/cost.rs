//! The "CPU per I/O" section of runs made by `iocap cost`: for each cache mode and queue depth,
//! CPU-µs per I/O against block size (process accounting), one line per engine and direction
//! with its fitted model dashed in the same colour; then the terminal view's tables and answers.

use std::fmt::Write as _;

use iocap_model::{Accounting, CacheMode, CostModel, CostReport, RunResult};

use super::{escape, swatch};
use crate::svg::{self, Axis, Point, Series, TickFmt};

fn line_of(c: &CostReport, m: &CostModel, i: usize) -> Vec<Series> {
    let name = format!("{} {}", crate::cost::engine_name(c, m.engine), m.rw);
    let measured = Series {
        name: name.clone(),
        colour: svg::colour(i),
        dashed: false,
        points: m
            .points
            .iter()
            .map(|p| Point {
                x: p.size_kb,
                y: p.us_per_io,
                tip: format!("{name} {} KiB: {:.2} µs per I/O", p.size_kb, p.us_per_io),
            })
            .collect(),
    };
    let mut out = vec![measured];
    if let (Some(a), Some(b)) = (m.fixed_us, m.per_kb_us) {
        out.push(Series {
            name: format!("{name} model"),
            colour: svg::colour(i),
            dashed: true,
            points: m
                .points
                .iter()
                .map(|p| Point {
                    x: p.size_kb,
                    y: a + b * p.size_kb,
                    tip: format!("{name} model: {a:.2} + {b:.4} × {} KiB", p.size_kb),
                })
                .collect(),
        });
    }
    out
}

pub(super) fn cost(out: &mut String, runs: &[RunResult], names: &[String]) {
    let with: Vec<(usize, &RunResult)> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.cost.is_some())
        .collect();
    if with.is_empty() {
        return;
    }
    out.push_str(r#"<section id="cost"><h2>CPU per I/O</h2>"#);
    for (i, r) in with {
        let Some(c) = &r.cost else { continue };
        if runs.len() > 1 {
            let _ = write!(out, "<h3>{}{}</h3>", swatch(i), escape(&names[i]));
        }
        out.push_str(r#"<div class="charts">"#);
        let mut groups: Vec<(CacheMode, u32)> = Vec::new();
        for m in c
            .models
            .iter()
            .filter(|m| m.accounting == Accounting::Process)
        {
            if !groups.contains(&(m.cache, m.qd)) {
                groups.push((m.cache, m.qd));
            }
        }
        for (g, (cache, qd)) in groups.iter().enumerate() {
            let series: Vec<Series> = c
                .models
                .iter()
                .filter(|m| m.accounting == Accounting::Process && m.cache == *cache && m.qd == *qd)
                .enumerate()
                .flat_map(|(k, m)| line_of(c, m, k))
                .collect();
            let xs: Vec<f64> = series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.x))
                .collect();
            let ys: Vec<f64> = series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.y))
                .collect();
            let svg = svg::line_chart(
                &format!("cost-{g}"),
                i,
                &format!(
                    "CPU per I/O against block size: {cache}, qd {qd} (process; dashed: model)"
                ),
                &Axis::log2("block size (KiB)", &xs),
                &Axis::log("CPU µs per I/O", &ys, TickFmt::Plain),
                &series,
                "no point completed an I/O",
                &svg::Extras::default(),
            );
            let _ = write!(out, r#"<figure class="chart-card">{svg}</figure>"#);
        }
        out.push_str("</div>");
        let _ = write!(out, "<pre>{}</pre>", escape(&crate::cost::render(c)));
    }
    out.push_str("</section>");
}

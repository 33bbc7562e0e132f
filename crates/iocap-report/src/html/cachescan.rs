//! The "Caches below the OS" section: qd-1 mean latency against the working set on log axes
//! (x in MiB, powers of two), each cache level's edge marked, every run that has a scan
//! overlaid in its own colour; the steps table and the sentences are the terminal view's.

use std::fmt::Write as _;

use iocap_model::{CacheScan, RunResult};

use super::charts::lat_axis;
use super::escape;
use super::figures::table_with;
use crate::assess::{cachescan_steps, level_sentences};
use crate::fmt::{self, MISSING};
use crate::svg::{self, Axis, Extras, Highlight, Point, Series};

const MIB: f64 = (1u64 << 20) as f64;

fn series(i: usize, name: &str, many: bool, s: &CacheScan) -> Series {
    let points = s
        .steps
        .iter()
        .filter(|p| p.lat_us_trim_mean.is_finite() && p.lat_us_trim_mean > 0.0)
        .map(|p| Point {
            x: p.working_set_bytes as f64 / MIB,
            y: p.lat_us_trim_mean,
            tip: format!(
                "{}{} MiB: mean {}, {} IOPS at qd 32",
                if many {
                    format!("{name}: ")
                } else {
                    String::new()
                },
                fmt::count_or(p.working_set_bytes as f64 / MIB, MISSING),
                fmt::lat_us(p.lat_us_trim_mean),
                fmt::count_or(p.iops_qd32, MISSING)
            ),
        })
        .collect();
    Series {
        name: name.to_string(),
        colour: svg::colour(i),
        dashed: false,
        points,
    }
}

pub(super) fn cachescan(out: &mut String, runs: &[RunResult], names: &[String]) {
    let with: Vec<(usize, &CacheScan)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.cachescan.as_ref().map(|s| (i, s)))
        .collect();
    if with.is_empty() {
        return;
    }
    let many = with.len() > 1;
    out.push_str(r#"<section id="cachescan"><h2>Caches below the OS</h2><div class="charts">"#);
    let mut all = vec![];
    let mut extras = Extras::default();
    for &(i, s) in &with {
        all.push(series(i, &names[i], many, s));
        for (n, l) in s.levels.iter().enumerate() {
            extras.highlights.push(Highlight {
                x: l.fits_bytes as f64 / MIB,
                y: l.hit_lat_us,
                colour: svg::colour(i),
                label: format!(
                    "cache {}: up to {}",
                    n + 1,
                    iocap_model::human_bytes(l.exceeds_bytes)
                ),
            });
        }
    }
    let xs: Vec<f64> = all
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    let ys: Vec<f64> = all
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.y))
        .collect();
    let x = Axis::log2("working set (MiB)", &xs);
    let y = lat_axis("qd 1 mean latency", &ys, true);
    let _ = write!(
        out,
        r#"<figure class="chart-card">{}</figure></div>"#,
        svg::line_chart(
            "cachescan",
            0,
            "Latency against working set: a step up is the end of a cache",
            &x,
            &y,
            &all,
            "no working set was measured",
            &extras,
        )
    );
    for &(i, s) in &with {
        if many {
            let _ = write!(out, "<h3>{}</h3>", escape(&names[i]));
        }
        let r = cachescan_steps(s);
        table_with(out, &r.header, &r.rows, &r.words);
        out.push_str("<ul>");
        if s.levels.is_empty() {
            let _ = write!(
                out,
                "<li>No cache found up to {}.</li>",
                escape(&iocap_model::human_bytes(s.tried_up_to_bytes))
            );
        }
        for l in level_sentences(s).iter().chain(&s.notes) {
            let _ = write!(out, "<li>{}</li>", escape(l));
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>");
}

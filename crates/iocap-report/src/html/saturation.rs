//! The "Saturation" and "Scale-up" sections: the load–latency curve with its knee and latency
//! target, IOPS by queue depth, each volume alone and the aggregate of 1, 2, 4, ... volumes
//! against linear. Every run that has the result is overlaid in its own colour; the tables and
//! sentences under the charts are the terminal view's ([`crate::assess`]).

use std::fmt::Write as _;

use iocap_model::{RunResult, Saturation, ScaleUp};

use super::charts::lat_axis;
use super::figures::table_with;
use super::{escape, swatch};
use crate::assess::{
    capacity_sentence, drop_sentence, knee_sentence, linear_iops, max_sentence, refill_lines,
    saturation_sizes, saturation_steps, saturation_throttled, scaleup_alone, scaleup_together,
    target, Rows,
};
use crate::change_pct;
use crate::fmt::{self, MISSING, UNKNOWN};
use crate::svg::{self, Axis, Bar, Extras, Group, HLine, Highlight, Point, Series, TickFmt};

/// The colour of a slow volume's bar: not one of the run colours.
const SLOW: &str = "#b91c1c";

fn rows_table(out: &mut String, r: &Rows) {
    table_with(out, &r.header, &r.rows, &r.words);
}

fn figure(out: &mut String, svg: String) {
    let _ = write!(out, r#"<figure class="chart-card">{svg}</figure>"#);
}

/// `name: ` in front of a tooltip with several runs, nothing with one.
fn who(many: bool, name: &str) -> String {
    if many {
        format!("{name}: ")
    } else {
        String::new()
    }
}

/// `name what` with several runs, `what` alone with one.
fn series_name(many: bool, name: &str, what: &str) -> String {
    if many {
        format!("{name} {what}")
    } else {
        what.to_string()
    }
}

fn values(series: &[Series], x: bool) -> Vec<f64> {
    series
        .iter()
        .flat_map(|s| s.points.iter().map(move |p| if x { p.x } else { p.y }))
        .collect()
}

/// IOPS (from zero) over a power-of-two axis named `x_label`: queue depths, volumes.
fn iops_axes(x_label: &str, series: &[Series]) -> (Axis, Axis) {
    let x = Axis::log2(x_label, &values(series, true));
    let y = Axis::linear(
        "IOPS (I/Os per second)",
        &values(series, false),
        TickFmt::Si,
    );
    (x, y)
}

pub(super) fn saturation(out: &mut String, runs: &[RunResult], names: &[String]) {
    let with: Vec<(usize, &RunResult, &Saturation)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.saturation.as_ref().map(|s| (i, r, s)))
        .collect();
    if with.is_empty() {
        return;
    }
    let many = with.len() > 1;
    out.push_str(r#"<section id="saturation"><h2>Saturation</h2><div class="charts">"#);

    // load–latency: p99 over IOPS, the steps and the throttled points
    let mut series = vec![];
    let mut extras = Extras::default();
    let mut targets: Vec<f64> = vec![];
    for &(i, _, s) in &with {
        let step = |p: &iocap_model::CurvePoint| {
            let p99 = p.lat_us_p99?;
            Some(Point {
                x: p.iops,
                y: p99,
                tip: format!(
                    "{}qd {}: {} IOPS, p99 {}",
                    who(many, &names[i]),
                    p.qd,
                    fmt::count_or(p.iops, MISSING),
                    fmt::lat_us(p99)
                ),
            })
        };
        series.push(Series {
            name: series_name(many, &names[i], "steps"),
            colour: svg::colour(i),
            dashed: false,
            points: s.steps.iter().filter_map(step).collect(),
        });
        let mut throttled: Vec<&iocap_model::CurvePoint> = s.throttled.iter().collect();
        throttled.sort_by(|a, b| a.iops.total_cmp(&b.iops));
        if !throttled.is_empty() {
            series.push(Series {
                name: series_name(many, &names[i], "throttled"),
                colour: svg::colour(i),
                dashed: true,
                points: throttled
                    .iter()
                    .filter_map(|p| {
                        let p99 = p.lat_us_p99?;
                        Some(Point {
                            x: p.iops,
                            y: p99,
                            tip: format!(
                                "{}{} load: {} IOPS, p99 {}",
                                who(many, &names[i]),
                                p.load_pct
                                    .map(|l| format!("{l:.0} %"))
                                    .unwrap_or_else(|| UNKNOWN.into()),
                                fmt::count_or(p.iops, MISSING),
                                fmt::lat_us(p99)
                            ),
                        })
                    })
                    .collect(),
            });
        }
        if let Some(k) = s.knee_qd.and_then(|q| s.steps.iter().find(|p| p.qd == q)) {
            if let Some(p99) = k.lat_us_p99 {
                extras.highlights.push(Highlight {
                    x: k.iops,
                    y: p99,
                    colour: svg::colour(i),
                    label: format!("knee: qd {}", k.qd),
                });
            }
        }
        if let Some(t) = s.latency_target_us.filter(|t| t.is_finite() && *t > 0.0) {
            if !targets.contains(&t) {
                targets.push(t);
                extras.hlines.push(HLine {
                    y: t,
                    label: format!("p99 target {}", target(t)),
                });
            }
        }
    }
    let x = Axis::linear(
        "IOPS (I/Os per second)",
        &values(&series, true),
        TickFmt::Si,
    );
    let mut ys = values(&series, false);
    ys.extend(&targets);
    let y = lat_axis("p99 latency", &ys, true);
    figure(
        out,
        svg::line_chart(
            "load-latency",
            0,
            "Load and latency: p99 as IOPS rise",
            &x,
            &y,
            &series,
            "no step completed an I/O",
            &extras,
        ),
    );

    // IOPS by queue depth
    let mut series = vec![];
    let mut extras = Extras::default();
    for &(i, _, s) in &with {
        let mut prev: Option<f64> = None;
        let points = s
            .steps
            .iter()
            .map(|p| {
                let gain = prev
                    .and_then(|b| change_pct(b, p.iops))
                    .map(|g| format!(" ({g:+.1} %)"))
                    .unwrap_or_default();
                prev = Some(p.iops);
                Point {
                    x: f64::from(p.qd),
                    y: p.iops,
                    tip: format!(
                        "{}qd {}: {} IOPS{gain}",
                        who(many, &names[i]),
                        p.qd,
                        fmt::count_or(p.iops, MISSING)
                    ),
                }
            })
            .collect();
        series.push(Series {
            name: names[i].clone(),
            colour: svg::colour(i),
            dashed: false,
            points,
        });
        if let Some(k) = s.knee_qd.and_then(|q| s.steps.iter().find(|p| p.qd == q)) {
            extras.highlights.push(Highlight {
                x: f64::from(k.qd),
                y: k.iops,
                colour: svg::colour(i),
                label: "knee".into(),
            });
        }
    }
    let (x, y) = iops_axes("queue depth (outstanding I/Os per thread)", &series);
    figure(
        out,
        svg::line_chart(
            "qd-iops",
            0,
            "IOPS by queue depth",
            &x,
            &y,
            &series,
            "no steps",
            &extras,
        ),
    );
    out.push_str("</div>");

    for &(i, _, s) in &with {
        let _ = write!(
            out,
            r#"<h3>{}{}</h3><ul class="capacity-lines"><li>Capacity: {}.</li><li>Knee: {}.</li><li>Maximum: {}.</li>"#,
            swatch(i),
            escape(&names[i]),
            escape(&capacity_sentence(s).unwrap_or_else(|| "no latency target was set".into())),
            escape(&knee_sentence(s)),
            escape(&max_sentence(s))
        );
        if !s.stop_reason.trim().is_empty() {
            let _ = write!(
                out,
                "<li>The steps stopped: {}{}</li>",
                escape(s.stop_reason.trim()),
                if s.stop_reason.trim().ends_with(['.', '!', '?']) {
                    ""
                } else {
                    "."
                }
            );
        }
        if let Some(l) = &s.limit {
            let _ = write!(
                out,
                "<li>Limit ({}): {}.<ul>",
                l.kind.name(),
                escape(&l.sentence)
            );
            for e in &l.evidence {
                let _ = write!(out, "<li>{}</li>", escape(e));
            }
            out.push_str("</ul></li>");
        }
        for d in &s.drops {
            let _ = write!(
                out,
                "<li>Burst: {}.</li>",
                escape(&drop_sentence(&runs[i], d))
            );
        }
        if let Some(b) = &s.bucket {
            let _ = write!(out, "<li>Burst bucket: {}.<ul>", escape(&b.sentence));
            for r in refill_lines(b) {
                let _ = write!(out, "<li>{}</li>", escape(&r));
            }
            out.push_str("</ul></li>");
        }
        out.push_str("</ul>");
        if !s.steps.is_empty() {
            out.push_str(r#"<p class="caption">Unthrottled steps, doubling the queue depth:</p>"#);
            rows_table(out, &saturation_steps(s));
        }
        if !s.throttled.is_empty() {
            out.push_str(r#"<p class="caption">Throttled to a share of the maximum:</p>"#);
            rows_table(out, &saturation_throttled(s));
        }
        if let Some(p) = s.size_sweep.first() {
            let _ = write!(
                out,
                r#"<p class="caption">Block sizes at qd {} ({} outstanding):</p>"#,
                p.qd, p.outstanding
            );
            rows_table(out, &saturation_sizes(s));
        }
    }
    out.push_str("</section>");
}

pub(super) fn scaleup(out: &mut String, runs: &[RunResult], names: &[String]) {
    let with: Vec<(usize, &ScaleUp)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.scaleup.as_ref().map(|s| (i, s)))
        .collect();
    if with.is_empty() {
        return;
    }
    let many = with.len() > 1;
    out.push_str(r#"<section id="scaleup"><h2>Scale-up</h2><div class="charts">"#);

    let mut paths: Vec<&str> = vec![];
    for (_, s) in &with {
        for v in &s.alone {
            if !paths.contains(&v.path.as_str()) {
                paths.push(&v.path);
            }
        }
    }
    let groups: Vec<Group> = paths
        .iter()
        .map(|p| Group {
            label: p.to_string(),
            bars: with
                .iter()
                .filter_map(|&(i, s)| {
                    let v = s.alone.iter().find(|v| v.path == *p)?;
                    let mut tip = format!(
                        "{}{p}: {} IOPS, {:.1} MB/s",
                        who(many, &names[i]),
                        fmt::count_or(v.iops, MISSING),
                        v.mb_s
                    );
                    if let Some(l) = v.lat_us_p99 {
                        let _ = write!(tip, ", p99 {}", fmt::lat_us(l));
                    }
                    if v.slow {
                        tip.push_str(" (slow: more than 20 % below the median of the others)");
                    }
                    Some(Bar {
                        value: v.iops,
                        colour: if v.slow { SLOW } else { svg::colour(i) },
                        text: format!(
                            "{}{}",
                            fmt::count_or(v.iops, MISSING),
                            if v.slow { " slow" } else { "" }
                        ),
                        tip,
                    })
                })
                .collect(),
        })
        .collect();
    let mut legend: Vec<(String, &'static str)> = if many {
        with.iter()
            .map(|&(i, _)| (names[i].clone(), svg::colour(i)))
            .collect()
    } else {
        vec![]
    };
    if with.iter().any(|(_, s)| s.alone.iter().any(|v| v.slow)) {
        if !many {
            legend.push(("alone".into(), svg::colour(with[0].0)));
        }
        legend.push(("slow (> 20 % below the median)".into(), SLOW));
    }
    figure(
        out,
        svg::bar_chart(
            "scaleup-alone",
            0,
            "IOPS of each volume alone",
            "IOPS (I/Os per second)",
            TickFmt::Si,
            &groups,
            &legend,
        ),
    );

    let mut series = vec![];
    for &(i, s) in &with {
        let who = who(many, &names[i]);
        let mut steps: Vec<&iocap_model::ScaleStep> = s.together.iter().collect();
        steps.sort_by_key(|t| t.paths.len());
        series.push(Series {
            name: series_name(many, &names[i], "together"),
            colour: svg::colour(i),
            dashed: false,
            points: steps
                .iter()
                .map(|t| Point {
                    x: t.paths.len() as f64,
                    y: t.iops,
                    tip: format!(
                        "{who}{} volumes: {} IOPS, {:.1} % of linear",
                        t.paths.len(),
                        fmt::count_or(t.iops, MISSING),
                        t.efficiency_pct
                    ),
                })
                .collect(),
        });
        series.push(Series {
            name: series_name(many, &names[i], "linear (sum alone)"),
            colour: svg::colour(i),
            dashed: true,
            points: steps
                .iter()
                .map(|t| {
                    let l = linear_iops(s, t);
                    Point {
                        x: t.paths.len() as f64,
                        y: l,
                        tip: format!(
                            "{who}{} volumes alone, summed: {} IOPS",
                            t.paths.len(),
                            fmt::count_or(l, MISSING)
                        ),
                    }
                })
                .collect(),
        });
    }
    let (x, y) = iops_axes("volumes together", &series);
    figure(
        out,
        svg::line_chart(
            "scaleup-together",
            0,
            "Aggregate IOPS against linear",
            &x,
            &y,
            &series,
            "no volumes measured together",
            &Extras::default(),
        ),
    );
    out.push_str("</div>");
    for &(i, s) in &with {
        let _ = write!(out, "<h3>{}{}</h3>", swatch(i), escape(&names[i]));
        if !s.alone.is_empty() {
            out.push_str(r#"<p class="caption">Each volume alone:</p>"#);
            rows_table(out, &scaleup_alone(s));
        }
        if !s.together.is_empty() {
            out.push_str(
                r#"<p class="caption">Together (linear: the sum of the same volumes alone):</p>"#,
            );
            rows_table(out, &scaleup_together(s));
        }
    }
    out.push_str("</section>");
}

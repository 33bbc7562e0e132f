//! The charts of the report, one set per test position, overlaying every run that has that
//! test: IOPS, MB/s and latency over time, the latency percentile curve, and IOPS and p99 per
//! target. This module turns results into series and axes; drawing is [`crate::svg`]'s.

use std::fmt::Write as _;

use iocap_model::hist::{decode_hist, quantile_within_us};
use iocap_model::{OpStats, RunResult, TestResult};

use super::escape;
use crate::fmt::{self, MISSING};
use crate::svg::{self, Axis, Bar, Group, Point, Series, TickFmt};

/// The latency percentile curve of one test: from its histogram where it has one, every tenth
/// of a nine up to what its I/O count supports; else from the stored percentiles.
fn percentile_points(t: &TestResult) -> Vec<Point> {
    let tip = |q: f64, us: f64| format!("{} %: {}", TickFmt::Nines.format(q), fmt::lat_us(us));
    if let Some(Ok(h)) = t.total.lat_hist_ns.as_deref().map(decode_hist) {
        if !h.is_empty() {
            let max_tenths = ((h.len() as f64).log10().min(5.0) * 10.0).floor().max(0.0) as i32;
            let (lo, hi) = t
                .total
                .lat_us
                .as_ref()
                .map_or((0.0, f64::INFINITY), |l| (l.min, l.max));
            return (0..=max_tenths)
                .map(|k| {
                    let q = 1.0 - 10f64.powf(-f64::from(k) / 10.0);
                    let us = quantile_within_us(&h, q, lo, hi);
                    Point {
                        x: q,
                        y: us,
                        tip: tip(q, us),
                    }
                })
                .collect();
        }
    }
    let Some(l) = &t.total.lat_us else {
        return vec![];
    };
    [
        (0.0, l.min),
        (0.5, l.p50),
        (0.9, l.p90),
        (0.95, l.p95),
        (0.99, l.p99),
        (0.999, l.p99_9),
        (0.9999, l.p99_99),
        (0.99999, l.p99_999),
    ]
    .iter()
    .map(|&(q, us)| Point {
        x: q,
        y: us,
        tip: tip(q, us),
    })
    .collect()
}

pub(super) fn lat_axis(label: &str, values: &[f64], log: bool) -> Axis {
    let max = values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let (unit, fmt) = if max >= 1000.0 {
        ("ms", TickFmt::Ms)
    } else {
        ("µs", TickFmt::Us)
    };
    let label = format!("{label} ({unit})");
    if log {
        Axis::log(&label, values, fmt)
    } else {
        Axis::linear(&label, values, fmt)
    }
}

/// Every chart set: test by test, the runs' tests at the same position overlaid, but only
/// tests of the same workload together (as `compare` matches them); a run whose test there ran
/// another workload gets a chart set of its own, headed with its run names.
pub(super) fn chart_sets(out: &mut String, runs: &[RunResult], names: &[String]) {
    let positions = runs.iter().map(|r| r.tests.len()).max().unwrap_or(0);
    let mut set = 0;
    for k in 0..positions {
        let mut groups: Vec<Vec<(usize, &TestResult)>> = Vec::new();
        for (i, t) in runs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.tests.get(k).map(|t| (i, t)))
        {
            match groups
                .iter_mut()
                .find(|g| iocap_assess::compare::same_workload(g[0].1, t))
            {
                Some(g) => g.push((i, t)),
                None => groups.push(vec![(i, t)]),
            }
        }
        let several = groups.len() > 1;
        for g in &groups {
            let mut head = g[0].1.name.clone();
            if several {
                let who: Vec<&str> = g.iter().map(|&(i, _)| names[i].as_str()).collect();
                head = format!("{head}: {}", who.join(", "));
            }
            charts(out, g, names, &head, set);
            set += 1;
        }
    }
}

/// One chart set, `tests` (run index, test) overlaid; `k` numbers the set in the page.
fn charts(
    out: &mut String,
    tests: &[(usize, &TestResult)],
    names: &[String],
    head: &str,
    k: usize,
) {
    if tests.is_empty() {
        return;
    }
    let _ = write!(out, r#"<h3>{}</h3><div class="charts">"#, escape(head));
    let many = tests.len() > 1;
    let over_time = |f: &dyn Fn(&iocap_model::SecondSample) -> Option<f64>,
                     what: &str,
                     unit: &str|
     -> Vec<Series> {
        tests
            .iter()
            .map(|&(i, t)| Series {
                name: names[i].clone(),
                colour: svg::colour(i),
                dashed: false,
                points: t
                    .per_second
                    .iter()
                    .filter_map(|s| {
                        f(s).map(|v| Point {
                            x: s.t_s,
                            y: v,
                            tip: format!("{}: {} s, {what} {v:.1}{unit}", names[i], s.t_s),
                        })
                    })
                    .collect(),
            })
            .collect()
    };
    let all = |series: &[Series], x: bool| -> Vec<f64> {
        series
            .iter()
            .flat_map(|s| s.points.iter().map(move |p| if x { p.x } else { p.y }))
            .collect()
    };
    let time = |series: &[Series]| Axis::linear("time (s)", &all(series, true), TickFmt::Plain);
    let mut figure = |svg: String| {
        let _ = write!(out, r#"<figure class="chart-card">{svg}</figure>"#);
    };
    let no_samples = "no per-second samples";

    let iops = over_time(&|s| Some(s.iops), "IOPS", "");
    let y = Axis::linear("IOPS (I/Os per second)", &all(&iops, false), TickFmt::Si);
    figure(svg::line_chart(
        "iops-over-time",
        k,
        "IOPS over time",
        &time(&iops),
        &y,
        &iops,
        no_samples,
        &svg::Extras::default(),
    ));

    let mbs = over_time(&|s| Some(s.mb_s), "", " MB/s");
    let y = Axis::linear(
        "throughput (MB/s, 10⁶ bytes/s)",
        &all(&mbs, false),
        TickFmt::Si,
    );
    figure(svg::line_chart(
        "mbps-over-time",
        k,
        "MB/s over time",
        &time(&mbs),
        &y,
        &mbs,
        no_samples,
        &svg::Extras::default(),
    ));

    let mut lat = vec![];
    for (p99, mean) in over_time(&|s| s.lat_us_p99, "p99", " µs")
        .into_iter()
        .zip(over_time(&|s| s.lat_us_mean, "mean", " µs"))
    {
        let name = |n: &str, what: &str| {
            if many {
                format!("{n} {what}")
            } else {
                what.to_string()
            }
        };
        lat.push(Series {
            name: name(&p99.name, "p99"),
            ..p99
        });
        lat.push(Series {
            name: name(&mean.name, "mean"),
            dashed: true,
            ..mean
        });
    }
    let y = lat_axis("latency", &all(&lat, false), false);
    figure(svg::line_chart(
        "latency-over-time",
        k,
        "Latency over time: p99 (solid) and mean (dashed)",
        &time(&lat),
        &y,
        &lat,
        no_samples,
        &svg::Extras::default(),
    ));

    let pct: Vec<Series> = tests
        .iter()
        .map(|&(i, t)| Series {
            name: names[i].clone(),
            colour: svg::colour(i),
            dashed: false,
            points: percentile_points(t),
        })
        .collect();
    let top = all(&pct, true)
        .iter()
        .map(|q| -(1.0 - q).log10())
        .filter(|v| v.is_finite())
        .fold(2.0, f64::max);
    let x = Axis::nines("percentile (%)", (top - 1e-9).ceil().clamp(1.0, 5.0) as u32);
    let y = lat_axis("latency", &all(&pct, false), true);
    figure(svg::line_chart(
        "latency-percentiles",
        k,
        "Latency distribution (percentiles)",
        &x,
        &y,
        &pct,
        "no I/O completed",
        &svg::Extras::default(),
    ));

    let mut paths: Vec<&str> = vec![];
    for (_, t) in tests {
        for tr in &t.targets {
            if !paths.contains(&tr.path.as_str()) {
                paths.push(&tr.path);
            }
        }
    }
    let legend: Vec<(String, &'static str)> = if many {
        tests
            .iter()
            .map(|&(i, _)| (names[i].clone(), svg::colour(i)))
            .collect()
    } else {
        vec![]
    };
    let groups = |value: &dyn Fn(&OpStats) -> Option<(f64, String)>| -> Vec<Group> {
        paths
            .iter()
            .map(|p| Group {
                label: p.to_string(),
                bars: tests
                    .iter()
                    .filter_map(|&(i, t)| {
                        let tr = t.targets.iter().find(|tr| tr.path == *p)?;
                        let (v, text) = value(&tr.total)?;
                        Some(Bar {
                            value: v,
                            colour: svg::colour(i),
                            tip: format!("{}: {p}: {text}", names[i]),
                            text,
                        })
                    })
                    .collect(),
            })
            .collect()
    };
    let g = groups(&|o| Some((o.iops, fmt::count_or(o.iops, MISSING))));
    figure(svg::bar_chart(
        "target-iops",
        k,
        "IOPS per target",
        "IOPS (I/Os per second)",
        TickFmt::Si,
        &g,
        &legend,
    ));
    let g = groups(&|o| o.lat_us.as_ref().map(|l| (l.p99, fmt::lat_us(l.p99))));
    let max = g
        .iter()
        .flat_map(|g| g.bars.iter().map(|b| b.value))
        .fold(0.0, f64::max);
    let (label, fmt) = if max >= 1000.0 {
        ("p99 latency (ms)", TickFmt::Ms)
    } else {
        ("p99 latency (µs)", TickFmt::Us)
    };
    figure(svg::bar_chart(
        "target-p99",
        k,
        "p99 latency per target",
        label,
        fmt,
        &g,
        &legend,
    ));
    out.push_str("</div>");
}

//! The "Workload" section of runs made by `iocap capture` or `iocap characterise`: IOPS over
//! time, the size histogram, the queue-depth histogram, a latency CDF per operation and an
//! offset-over-time heat map, then the terminal view.

use std::fmt::Write as _;

use iocap_model::request::Op;
use iocap_model::workload::Workload;
use iocap_model::{format_bytes, RunResult};

use super::{escape, swatch};
use crate::svg::{self, Axis, Bar, Group, Point, Series, TickFmt};

pub(super) fn workload(out: &mut String, runs: &[RunResult], names: &[String]) {
    let with: Vec<(usize, &Workload)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.workload.as_ref().map(|w| (i, w)))
        .collect();
    if with.is_empty() {
        return;
    }
    out.push_str(r#"<section id="workload"><h2>Workload</h2>"#);
    for (i, w) in with {
        if runs.len() > 1 {
            let _ = write!(out, "<h3>{}{}</h3>", swatch(i), escape(&names[i]));
        }
        out.push_str(r#"<div class="charts">"#);
        for chart in [
            rate(w, i),
            sizes(w, i),
            depth(w, i),
            cdf(w, i),
            heatmap(w, i),
        ] {
            let _ = write!(out, r#"<figure class="chart-card">{chart}</figure>"#);
        }
        out.push_str("</div>");
        streams(out, w);
        let _ = write!(out, "<pre>{}</pre>", escape(&crate::workload::render(w)));
    }
    out.push_str("</section>");
}

/// The streams as a table, each over its own busy seconds.
fn streams(out: &mut String, w: &Workload) {
    if w.streams.is_empty() {
        return;
    }
    out.push_str(
        r#"<div class="scroll"><table class="streams"><caption>Streams, each over its own busy seconds</caption><thead><tr><th>role</th><th class="num">IOPS</th><th class="num">busy s</th><th class="num">depth</th><th class="num">read %</th><th class="num">size</th><th class="num">sequential %</th><th class="num">flushes/s</th><th class="num">durable MB/s</th></tr></thead><tbody>"#,
    );
    for s in &w.streams {
        let depth = s
            .depth_mean
            .map_or_else(|| "-".into(), |d| format!("{d:.1}"));
        let _ = write!(
            out,
            r#"<tr><td>{}</td><td class="num">{:.0}</td><td class="num">{:.1}</td><td class="num">{}</td><td class="num">{:.1}</td><td class="num">{}</td><td class="num">{:.1}</td><td class="num">{:.1}</td><td class="num">{:.2}</td></tr>"#,
            s.role.name(),
            s.iops,
            s.busy_s,
            depth,
            s.read_pct,
            escape(&format_bytes(s.size_mode_bytes)),
            s.sequential_pct,
            s.flushes_per_s,
            s.durable_bytes_per_s / 1e6
        );
    }
    out.push_str("</tbody></table></div>");
}

fn rate(w: &Workload, i: usize) -> String {
    let r = &w.rate;
    let at = |k: usize| k as f64 * r.bucket_s;
    let mut series = vec![Series {
        name: "all".into(),
        colour: svg::colour(0),
        dashed: false,
        points: r
            .per_second
            .iter()
            .enumerate()
            .map(|(k, p)| Point {
                x: at(k),
                y: p.iops,
                tip: format!("{:.0} s: {:.0} IOPS", at(k), p.iops),
            })
            .collect(),
    }];
    for (n, (name, pick)) in [("reads", 0usize), ("writes", 1)].into_iter().enumerate() {
        let pts: Vec<Point> = r
            .per_second
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let y = if pick == 0 { p.read_iops } else { p.write_iops };
                Point {
                    x: at(k),
                    y,
                    tip: format!("{:.0} s: {y:.0} {name}/s", at(k)),
                }
            })
            .collect();
        if pts.iter().any(|p| p.y > 0.0)
            && pts.iter().zip(&series[0].points).any(|(a, b)| a.y != b.y)
        {
            series.push(Series {
                name: name.into(),
                colour: svg::colour(n + 1),
                dashed: true,
                points: pts,
            });
        }
    }
    let xs: Vec<f64> = series[0].points.iter().map(|p| p.x).collect();
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.y))
        .collect();
    svg::line_chart(
        "wl-rate",
        i,
        &format!("IOPS over time ({} s buckets)", r.bucket_s),
        &Axis::linear("seconds", &xs, TickFmt::Plain),
        &Axis::linear("IOPS", &ys, TickFmt::Si),
        &series,
        "no requests",
        &svg::Extras::default(),
    )
}

fn sizes(w: &Workload, i: usize) -> String {
    let groups: Vec<Group> = w
        .sizes
        .iter()
        .map(|s| {
            let size = if s.size_bytes == 0 {
                "other".into()
            } else {
                format_bytes(s.size_bytes)
            };
            Group {
                label: format!("{} {size}", s.op),
                bars: vec![Bar {
                    value: s.count as f64,
                    colour: svg::colour(if s.op == Op::Read { 0 } else { 1 }),
                    text: format!("{:.1} %", s.pct),
                    tip: format!("{} {size}: {} requests", s.op, s.count),
                }],
            }
        })
        .collect();
    svg::bar_chart(
        "wl-sizes",
        i,
        "Request sizes",
        "requests",
        TickFmt::Si,
        &groups,
        &[],
    )
}

fn depth(w: &Workload, i: usize) -> String {
    let Some(q) = &w.queue_depth else {
        return svg::bar_chart(
            "wl-qd",
            i,
            "Queue depth",
            "% of time",
            TickFmt::Plain,
            &[],
            &[],
        );
    };
    let groups: Vec<Group> = q
        .depths
        .iter()
        .map(|d| Group {
            label: format!("qd {}", d.depth),
            bars: vec![
                Bar {
                    value: d.time_pct,
                    colour: svg::colour(0),
                    text: format!("{:.1} %", d.time_pct),
                    tip: format!("qd {}: {:.1} % of the time", d.depth, d.time_pct),
                },
                Bar {
                    value: d.issued_pct,
                    colour: svg::colour(1),
                    text: format!("{:.1} %", d.issued_pct),
                    tip: format!("qd {}: {:.1} % of requests issued", d.depth, d.issued_pct),
                },
            ],
        })
        .collect();
    let legend = [
        ("share of time".to_string(), svg::colour(0)),
        ("share of issues".to_string(), svg::colour(1)),
    ];
    svg::bar_chart(
        "wl-qd",
        i,
        "Queue depth (requests in flight)",
        "%",
        TickFmt::Plain,
        &groups,
        &legend,
    )
}

fn cdf(w: &Workload, i: usize) -> String {
    let series: Vec<Series> = w
        .latency
        .iter()
        .filter(|l| l.size_class == "all")
        .enumerate()
        .map(|(k, l)| Series {
            name: l.op.to_string(),
            colour: svg::colour(k),
            dashed: false,
            points: l
                .cdf
                .iter()
                .map(|&(us, pct)| Point {
                    x: us.max(0.001),
                    y: pct,
                    tip: format!("{}: {pct} % within {us:.1} µs", l.op),
                })
                .collect(),
        })
        .collect();
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.y))
        .collect();
    svg::line_chart(
        "wl-cdf",
        i,
        "Latency CDF per operation",
        &Axis::log("latency", &xs, TickFmt::Us),
        &Axis::linear("% of requests at or below", &ys, TickFmt::Plain),
        &series,
        "no completion times in this trace",
        &svg::Extras::default(),
    )
}

/// Counts by time (x) and offset (y, 0 at the bottom), shaded by their share of the busiest cell.
fn heatmap(w: &Workload, i: usize) -> String {
    let h = &w.heatmap;
    let (cols, rows) = (h.time_buckets as usize, h.offset_buckets as usize);
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg class="chart" data-chart="wl-heat" data-test="{i}" viewBox="0 0 640 360" width="640" height="360" role="img" font-size="12" fill="#222"><title>Offset over time</title><text class="chart-title" x="12" y="21" font-size="15" font-weight="600">Offset over time (darker: more requests)</text>"##
    );
    let peak = h.counts.iter().copied().max().unwrap_or(0);
    if cols == 0 || rows == 0 || peak == 0 || h.counts.len() < cols * rows {
        out.push_str(r#"<text x="320" y="180" text-anchor="middle">no requests</text></svg>"#);
        return out;
    }
    let (left, top, width, height) = (70.0, 34.0, 550.0, 290.0);
    let (cw, ch) = (width / cols as f64, height / rows as f64);
    for r in 0..rows {
        for c in 0..cols {
            let n = h.counts[r * cols + c];
            if n == 0 {
                continue;
            }
            let shade = 0.15 + 0.85 * (n as f64 / peak as f64).sqrt();
            let y = top + height - (r + 1) as f64 * ch;
            let tip = format!(
                "{:.0}-{:.0} s, {}-{}: {n} requests",
                c as f64 * h.duration_s / cols as f64,
                (c + 1) as f64 * h.duration_s / cols as f64,
                format_bytes(r as u64 * h.max_offset_bytes / rows as u64),
                format_bytes((r + 1) as u64 * h.max_offset_bytes / rows as u64)
            );
            let _ = write!(
                out,
                r##"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="#0b62a4" fill-opacity="{shade:.2}"><title>{}</title></rect>"##,
                left + c as f64 * cw,
                cw.max(0.5),
                ch.max(0.5),
                escape(&tip)
            );
        }
    }
    let _ = write!(
        out,
        r#"<text x="{left}" y="345" font-size="11">0 s</text><text x="620" y="345" font-size="11" text-anchor="end">{:.0} s</text><text x="64" y="{}" font-size="11" text-anchor="end">0</text><text x="64" y="44" font-size="11" text-anchor="end">{}</text></svg>"#,
        h.duration_s,
        top + height,
        format_bytes(h.max_offset_bytes)
    );
    out
}

#[cfg(test)]
mod tests {
    use iocap_model::workload::*;

    #[test]
    fn a_workload_run_has_its_five_charts() {
        let mut run = iocap_model::fixture::run(&Default::default());
        run.tests.clear();
        run.workload = Some(Workload {
            records: 3,
            has_completions: true,
            sizes: vec![SizeCount {
                op: iocap_model::request::Op::Read,
                size_bytes: 8192,
                count: 3,
                pct: 100.0,
            }],
            queue_depth: Some(QueueDepth {
                depths: vec![DepthShare {
                    depth: 4,
                    time_pct: 60.0,
                    issued_pct: 25.0,
                }],
                ..Default::default()
            }),
            rate: Rate {
                bucket_s: 1.0,
                per_second: vec![
                    RatePoint {
                        iops: 3.0,
                        read_iops: 3.0,
                        ..Default::default()
                    };
                    2
                ],
                ..Default::default()
            },
            latency: vec![LatencyRow {
                op: iocap_model::request::Op::Read,
                size_class: "all".into(),
                count: 3,
                cdf: vec![(80.0, 0.0), (100.0, 50.0), (300.0, 100.0)],
                ..Default::default()
            }],
            heatmap: Heatmap {
                time_buckets: 2,
                offset_buckets: 1,
                duration_s: 2.0,
                max_offset_bytes: 16 << 20,
                counts: vec![2, 1],
            },
            ..Default::default()
        });
        let html = crate::html::render(&[run]);
        for id in ["wl-rate", "wl-sizes", "wl-qd", "wl-cdf", "wl-heat"] {
            assert!(
                html.contains(&format!("data-chart=\"{id}\"")),
                "no chart {id}"
            );
        }
        assert!(
            html.contains("<rect") && html.contains("2 requests"),
            "the heat map's cells"
        );
        assert!(!html.contains("no completion times"), "the CDF is drawn");
        // the summary names what was characterised; no empty sections of test charts
        assert!(
            html.contains(": 0 IOPS mean, 0 peak, 0 % reads, mostly 8K."),
            "the summary's headline: {}",
            &html[html.find("class=\"run-name").unwrap_or(0)..][..300]
        );
        assert!(
            !html.contains("no tests"),
            "a workload is not a run without tests"
        );
        assert!(
            !html.contains("<h2>Charts</h2>"),
            "no empty test-chart heading"
        );
    }
}

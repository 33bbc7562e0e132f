//! The self-contained HTML report: one file a DBA can mail, archive or print, that opens with no
//! network and no script. It reads, top to bottom: a plain-language summary (and how later runs
//! compare with the first), the host and test setup, charts drawn by [`crate::svg`], every
//! warning, and the full figures as the terminal view shows them.
//!
//! Several runs are compared test by test (the first test of each run together, and so on), in
//! one colour per run. Every string that comes from a result is escaped with [`escape`].

use std::fmt::Write as _;

use iocap_model::hist::{decode_hist, quantile_us};
use iocap_model::{format_bytes, human_bytes, OpStats, RunResult, RwMode, TestResult};

use crate::svg::{self, Axis, Bar, Group, Point, Series, TickFmt};
use crate::{fmt_count, fmt_lat_us, text};

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

const CSS: &str = r#"
:root{color-scheme:light}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
 color:#1d1d1f;background:#fff;margin:0 auto;max-width:1240px;padding:20px 28px 48px;line-height:1.45;font-size:15px}
h1{font-size:26px;margin:4px 0 2px}h2{font-size:20px;margin:32px 0 10px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:16px;margin:20px 0 8px}.sub{color:#555;margin:0 0 12px}
.summary li{margin:6px 0}.run-name{font-weight:600}
.swatch{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;vertical-align:baseline}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));gap:14px}
.card{border:1px solid #ddd;border-radius:6px;padding:10px 14px}
.card h3{margin-top:4px}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}
dl.kv dt{color:#555}dl.kv dd{margin:0;overflow-wrap:anywhere}
.tag{display:inline-block;background:#eef2f7;border:1px solid #d4dbe5;border-radius:3px;padding:0 5px;margin:0 4px 2px 0;font-size:13px}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:14px}
figure.chart-card{margin:0;border:1px solid #e2e2e2;border-radius:6px;padding:6px;break-inside:avoid;page-break-inside:avoid}
svg.chart{display:block;width:100%;height:auto}
.warnings{border:1px solid #e0a040;border-left:6px solid #d97706;background:#fff8ec;border-radius:6px;padding:8px 16px}
.warnings.ok{border-color:#9ccf9c;border-left-color:#2e7d32;background:#f3faf3}
.warnings li{margin:4px 0}.error{color:#a01010;font-weight:600}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:6px 0 14px;font-size:13.5px;font-variant-numeric:tabular-nums}
th,td{padding:3px 9px;border-bottom:1px solid #e6e6e6;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}th{background:#f4f5f7;font-weight:600}
td.path{white-space:normal;overflow-wrap:anywhere;max-width:340px}
footer{margin-top:36px;color:#777;font-size:12.5px}
@media print{
 @page{margin:14mm}
 body{max-width:none;padding:0;font-size:10.5pt;background:#fff;color:#000}
 h2,h3{break-after:avoid;page-break-after:avoid}
 .cards{grid-template-columns:1fr 1fr;gap:8px}.charts{display:block}
 .card,figure.chart-card,table,.warnings{break-inside:avoid;page-break-inside:avoid}
 figure.chart-card{max-width:16cm;margin:0 auto 6mm;border:none}
 th{background:#fff;border-bottom:1.5px solid #000}
 .warnings,.warnings.ok{background:#fff}
 .scroll{overflow:visible}table{font-size:8.5pt}
}
"#;

/// The name a run goes by in legends: its label, else its run id; made unique.
fn run_names(runs: &[RunResult]) -> Vec<String> {
    let base: Vec<String> = runs
        .iter()
        .map(|r| {
            r.label
                .clone()
                .filter(|l| !l.trim().is_empty())
                .unwrap_or_else(|| r.run_id.clone())
        })
        .collect();
    base.iter()
        .enumerate()
        .map(|(i, n)| {
            if base.iter().filter(|m| *m == n).count() > 1 {
                format!("{n} (#{})", i + 1)
            } else {
                n.clone()
            }
        })
        .collect()
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

fn mb_s(v: f64) -> String {
    if v >= 1000.0 {
        fmt_count(v)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// "8K random reads", "64K sequential reads and writes (30 % writes)".
fn workload(t: &TestResult) -> String {
    let s = &t.spec;
    let what = match s.rw {
        RwMode::Read => "sequential reads".to_string(),
        RwMode::Write => "sequential writes".to_string(),
        RwMode::RandRead => "random reads".to_string(),
        RwMode::RandWrite => "random writes".to_string(),
        RwMode::Rw => format!("sequential reads and writes ({} % writes)", s.write_pct),
        RwMode::RandRw => format!("random reads and writes ({} % writes)", s.write_pct),
    };
    format!("{} {what}", format_bytes(s.bs_bytes))
}

/// One or two plain sentences about a test.
fn sentence(t: &TestResult) -> String {
    let mut s = format!(
        "{} on {}",
        workload(t),
        plural(t.targets.len().max(t.spec.targets.len()), "target")
    );
    if let Some(rate) = t.spec.effective_rate_iops() {
        let _ = write!(s, ", throttled to {} IOPS", fmt_count(rate));
    }
    match &t.total.lat_us {
        Some(l) if t.total.ios > 0 => {
            let _ = write!(
                s,
                ": {} IOPS ({} MB/s); half the I/Os finished within {}, 99 % within {}.",
                fmt_count(t.total.iops),
                mb_s(t.total.mb_s),
                fmt_lat_us(l.p50),
                fmt_lat_us(l.p99)
            );
        }
        _ => {
            let _ = write!(s, ": no I/O completed in {:.1} s.", t.duration_s);
        }
    }
    if let Some(e) = &t.error {
        let _ = write!(
            s,
            " Stopped early by an I/O error ({e}); the figures cover the time before it."
        );
    }
    if t.interrupted {
        let _ = write!(
            s,
            " Interrupted after {:.1} s; the figures cover the time measured.",
            t.duration_s
        );
    }
    match t.warnings.len() {
        0 if t.error.is_none() => s.push_str(" No warnings."),
        0 => {}
        n => {
            let _ = write!(s, " {} (see Warnings).", plural(n, "warning"));
        }
    }
    s
}

fn change(new: f64, old: f64) -> Option<f64> {
    let c = (new - old) / old * 100.0;
    (old > 0.0 && c.is_finite()).then_some(c)
}

fn change_words(c: f64, up: &str, down: &str) -> String {
    if c.abs() < 0.05 {
        "unchanged".into()
    } else {
        let (v, word) = if c > 0.0 { (c, up) } else { (-c, down) };
        let digits = if v >= 100.0 { 0 } else { 1 };
        format!("{v:.digits$} % {word}")
    }
}

/// How `t` compares with the first run's test `base`.
fn comparison(t: &TestResult, base: &TestResult, base_name: &str) -> String {
    let mut parts = vec![];
    if let Some(c) = change(t.total.iops, base.total.iops) {
        parts.push(format!("IOPS {}", change_words(c, "higher", "lower")));
    }
    if let (Some(a), Some(b)) = (&t.total.lat_us, &base.total.lat_us) {
        if let Some(c) = change(a.p99, b.p99) {
            parts.push(format!(
                "p99 latency {}",
                change_words(c, "higher (worse)", "lower (better)")
            ));
        }
    }
    if parts.is_empty() {
        format!(" Not comparable with {base_name}.")
    } else {
        format!(" Compared with {base_name}: {}.", parts.join(", "))
    }
}

fn swatch(i: usize) -> String {
    format!(
        r#"<span class="swatch" style="background:{}"></span>"#,
        svg::colour(i)
    )
}

fn summary(out: &mut String, runs: &[RunResult], names: &[String]) {
    out.push_str(r#"<section id="summary"><h2>Summary</h2><ul class="summary">"#);
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(
            out,
            r#"<li>{}<span class="run-name">{}</span>"#,
            swatch(i),
            escape(&names[i])
        );
        if r.tests.is_empty() {
            out.push_str(": no tests.");
        }
        for (k, t) in r.tests.iter().enumerate() {
            let mut s = sentence(t);
            if i > 0 {
                if let Some(b) = runs[0].tests.get(k) {
                    s.push_str(&comparison(t, b, &names[0]));
                }
            }
            if r.tests.len() > 1 {
                s = format!("{}: {s}", t.name);
            }
            let _ = write!(out, "<br>{}", escape(&s));
        }
        out.push_str("</li>");
    }
    out.push_str("</ul></section>");
}

fn kv(out: &mut String, k: &str, v: &str) {
    let _ = write!(out, "<dt>{}</dt><dd>{v}</dd>", escape(k));
}

fn memory(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
    } else {
        format!("{:.0} MiB", bytes as f64 / f64::from(1u32 << 20))
    }
}

fn setup(out: &mut String, runs: &[RunResult], names: &[String]) {
    out.push_str(r#"<section id="setup"><h2>Host and test setup</h2><div class="cards">"#);
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(
            out,
            r#"<div class="card"><h3>{}{}</h3><dl class="kv">"#,
            swatch(i),
            escape(&names[i])
        );
        let h = &r.host;
        kv(out, "host", &escape(&h.hostname));
        kv(out, "kernel", &escape(&h.kernel));
        kv(
            out,
            "CPU",
            &format!("{} × {}", h.cpus, escape(&h.cpu_model)),
        );
        kv(out, "memory", &memory(h.memory_bytes));
        if let Some(l) = &r.label {
            kv(out, "label", &escape(l));
        }
        if !r.tags.is_empty() {
            let tags: Vec<String> = r
                .tags
                .iter()
                .map(|t| format!(r#"<span class="tag">{}</span>"#, escape(t)))
                .collect();
            kv(out, "tags", &tags.concat());
        }
        if let Some(n) = &r.note {
            kv(out, "note", &escape(n));
        }
        kv(out, "run id", &escape(&r.run_id));
        kv(out, "started", &escape(&r.started_at));
        kv(out, "iocap", &escape(&r.iocap_version));
        for t in &r.tests {
            kv(out, "test", &format!("<b>{}</b>", escape(&t.name)));
            kv(out, "workload", &escape(&text::describe(t)));
            let mut engine = escape(&t.engine);
            if !t.engine_features.is_empty() {
                let _ = write!(engine, " ({})", escape(&t.engine_features.join(", ")));
            }
            kv(out, "engine", &engine);
            kv(out, "duration", &format!("{:.1} s measured", t.duration_s));
            for tr in &t.targets {
                let dev = tr.device.as_deref().unwrap_or("unknown device");
                let fs = tr
                    .fs_type
                    .as_deref()
                    .map(|f| format!(", {f}"))
                    .unwrap_or_default();
                kv(
                    out,
                    "target",
                    &format!(
                        "<code>{}</code><br>{} ({}{}), {}, {}",
                        escape(&tr.path),
                        escape(&tr.kind),
                        escape(dev),
                        escape(&fs),
                        human_bytes(tr.size_bytes),
                        plural(tr.threads as usize, "thread")
                    ),
                );
            }
        }
        out.push_str("</dl></div>");
    }
    out.push_str("</div></section>");
}

/// The latency percentile curve of one test: from its histogram where it has one, every tenth
/// of a nine up to what its I/O count supports; else from the stored percentiles.
fn percentile_points(t: &TestResult) -> Vec<Point> {
    let tip = |q: f64, us: f64| format!("{} %: {}", TickFmt::Nines.format(q), fmt_lat_us(us));
    if let Some(Ok(h)) = t.total.lat_hist_ns.as_deref().map(decode_hist) {
        if !h.is_empty() {
            let max_tenths = ((h.len() as f64).log10().min(5.0) * 10.0).floor().max(0.0) as i32;
            return (0..=max_tenths)
                .map(|k| {
                    let q = 1.0 - 10f64.powf(-f64::from(k) / 10.0);
                    let us = quantile_us(&h, q);
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

fn lat_axis(label: &str, values: &[f64], log: bool) -> Axis {
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
        Axis::linear(&label, values, true, fmt)
    }
}

/// The charts of test `k`, overlaying every run that has one.
fn charts(out: &mut String, runs: &[RunResult], names: &[String], k: usize) {
    let tests: Vec<(usize, &TestResult)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.tests.get(k).map(|t| (i, t)))
        .collect();
    let Some((_, first)) = tests.first() else {
        return;
    };
    let _ = write!(
        out,
        r#"<h3>{}</h3><div class="charts">"#,
        escape(&first.name)
    );
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
    let time =
        |series: &[Series]| Axis::linear("time (s)", &all(series, true), true, TickFmt::Plain);
    let mut figure = |svg: String| {
        let _ = write!(out, r#"<figure class="chart-card">{svg}</figure>"#);
    };
    let no_samples = "no per-second samples";

    let iops = over_time(&|s| Some(s.iops), "IOPS", "");
    let y = Axis::linear(
        "IOPS (I/Os per second)",
        &all(&iops, false),
        true,
        TickFmt::Si,
    );
    figure(svg::line_chart(
        "iops-over-time",
        k,
        "IOPS over time",
        &time(&iops),
        &y,
        &iops,
        no_samples,
    ));

    let mbs = over_time(&|s| Some(s.mb_s), "", " MB/s");
    let y = Axis::linear(
        "throughput (MB/s, 10⁶ bytes/s)",
        &all(&mbs, false),
        true,
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
    ));

    let mut paths: Vec<&str> = vec![];
    for (_, t) in &tests {
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
    let g = groups(&|o| Some((o.iops, svg::count(o.iops))));
    figure(svg::bar_chart(
        "target-iops",
        k,
        "IOPS per target",
        "IOPS (I/Os per second)",
        TickFmt::Si,
        &g,
        &legend,
    ));
    let g = groups(&|o| o.lat_us.as_ref().map(|l| (l.p99, fmt_lat_us(l.p99))));
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

fn warnings(out: &mut String, runs: &[RunResult], names: &[String]) {
    let mut items = vec![];
    for (i, r) in runs.iter().enumerate() {
        for t in &r.tests {
            let who = format!("{} / {}", names[i], t.name);
            if let Some(e) = &t.error {
                items.push(format!(
                    r#"<li class="error">{}: I/O error: {}</li>"#,
                    escape(&who),
                    escape(&e.to_string())
                ));
            }
            if t.interrupted {
                items.push(format!(
                    "<li>{}: interrupted after {:.1} s</li>",
                    escape(&who),
                    t.duration_s
                ));
            }
            for w in &t.warnings {
                items.push(format!("<li>{}: {}</li>", escape(&who), escape(w)));
            }
        }
    }
    out.push_str(r#"<section id="warnings"><h2>Warnings</h2>"#);
    if items.is_empty() {
        out.push_str(r#"<div class="warnings ok">No warnings and no errors.</div>"#);
    } else {
        let _ = write!(
            out,
            r#"<div class="warnings"><ul>{}</ul></div>"#,
            items.concat()
        );
    }
    out.push_str("</section>");
}

fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    out.push_str(r#"<div class="scroll"><table><thead><tr>"#);
    for h in header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead><tbody>");
    for r in rows {
        out.push_str("<tr>");
        for (j, cell) in r.iter().enumerate() {
            let class = if j == 0 && header[0] == "target" {
                r#" class="path""#
            } else {
                ""
            };
            let _ = write!(out, "<td{class}>{}</td>", escape(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

fn figures(out: &mut String, runs: &[RunResult], names: &[String]) {
    out.push_str(r#"<section id="figures"><h2>Full figures</h2>"#);
    for (i, r) in runs.iter().enumerate() {
        for t in &r.tests {
            let _ = write!(
                out,
                "<h3>{}{} — {}</h3>",
                swatch(i),
                escape(&names[i]),
                escape(&t.name)
            );
            let mut ops: Vec<(&str, &OpStats)> = vec![];
            if t.read.ios > 0 && t.write.ios > 0 {
                ops.extend([("read", &t.read), ("write", &t.write)]);
            }
            ops.push(("total", &t.total));
            if t.sync.ios > 0 {
                ops.push(("fsync", &t.sync));
            }
            let rows: Vec<Vec<String>> = ops
                .iter()
                .map(|(n, o)| {
                    vec![
                        n.to_string(),
                        fmt_count(o.ios as f64),
                        fmt_count(o.iops),
                        format!("{:.1}", o.mib_s),
                        format!("{:.1}", o.mb_s),
                    ]
                })
                .collect();
            table(out, &["", "I/Os", "IOPS", "MiB/s", "MB/s"], &rows);
            let rows: Vec<Vec<String>> = ops
                .iter()
                .filter_map(|(n, o)| {
                    let l = o.lat_us.as_ref()?;
                    let v = [
                        l.min, l.p50, l.p90, l.p95, l.p99, l.p99_9, l.p99_99, l.p99_999, l.max,
                        l.mean, l.stddev,
                    ];
                    Some(
                        std::iter::once(n.to_string())
                            .chain(v.iter().map(|x| fmt_lat_us(*x)))
                            .collect(),
                    )
                })
                .collect();
            if rows.is_empty() {
                out.push_str("<p>No latency figures: no I/O completed.</p>");
            } else {
                table(
                    out,
                    &[
                        "latency", "min", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "p99.999",
                        "max", "mean", "stddev",
                    ],
                    &rows,
                );
            }
            let rows: Vec<Vec<String>> = t
                .targets
                .iter()
                .map(|tr| {
                    let l = tr.total.lat_us.as_ref();
                    let lat = |f: fn(&iocap_model::LatencyUs) -> f64| {
                        l.map(|l| fmt_lat_us(f(l))).unwrap_or_else(|| "-".into())
                    };
                    vec![
                        tr.path.clone(),
                        tr.device.clone().unwrap_or_else(|| "-".into()),
                        tr.fs_type.clone().unwrap_or_else(|| "-".into()),
                        fmt_count(tr.total.iops),
                        format!("{:.1}", tr.total.mb_s),
                        lat(|l| l.p50),
                        lat(|l| l.p99),
                        lat(|l| l.max),
                    ]
                })
                .collect();
            table(
                out,
                &[
                    "target", "device", "fs", "IOPS", "MB/s", "p50", "p99", "max",
                ],
                &rows,
            );
            let _ = write!(
                out,
                "<p>CPU: {:.2} s user + {:.2} s system = {:.1} µs per I/O; mean queue depth {:.1}.</p>",
                t.cpu.user_s, t.cpu.sys_s, t.cpu.us_per_io, t.qd_mean
            );
        }
    }
    out.push_str("</section>");
}

/// Renders `runs` as one self-contained HTML page: summary, setup, charts, warnings and full
/// figures. The page needs no network and runs no script; charts are inline SVG. With several
/// runs, later runs are compared with the first and all runs share the charts, test by test.
/// Never panics: empty input, empty series and tests without I/O give a page that says so.
pub fn render(runs: &[RunResult]) -> String {
    let names = run_names(runs);
    let mut out = String::with_capacity(64 * 1024);
    let hosts: Vec<&str> = runs.iter().fold(vec![], |mut v, r| {
        if !v.contains(&r.host.hostname.as_str()) {
            v.push(r.host.hostname.as_str());
        }
        v
    });
    let title = match runs {
        [] => "iocap report".to_string(),
        [_] => format!("iocap report: {}", names[0]),
        _ => format!("iocap report: {} runs", runs.len()),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{CSS}</style></head><body><h1>{}</h1><p class=\"sub\">{} on {}</p>",
        escape(&title),
        escape(&title),
        plural(runs.len(), "run"),
        escape(&hosts.join(", "))
    );
    if runs.is_empty() {
        out.push_str("<p>No results to show.</p>");
    } else {
        summary(&mut out, runs, &names);
        setup(&mut out, runs, &names);
        out.push_str(r#"<section id="charts"><h2>Charts</h2>"#);
        let tests = runs.iter().map(|r| r.tests.len()).max().unwrap_or(0);
        for k in 0..tests {
            charts(&mut out, runs, &names, k);
        }
        out.push_str("</section>");
        warnings(&mut out, runs, &names);
        figures(&mut out, runs, &names);
    }
    let version = runs.first().map(|r| r.iocap_version.as_str()).unwrap_or("");
    let _ = writeln!(
        out,
        "<footer>Made by iocap {}. Hover over a point or bar for its value.</footer></body></html>",
        escape(version)
    );
    out
}

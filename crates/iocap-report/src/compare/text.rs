//! The terminal view of a [`Comparison`]: per compared run, one side-by-side table per test
//! (and per target when a test has several), the differences that could explain a change, and
//! the verdict. Apart from the model because layout is a concern of its own, and only here do
//! user strings need flattening onto one line.

use iocap_assess::compare::saturation::SaturationComparison;
use iocap_assess::compare::{ChangeVerdict, Flag, Metric, MetricName};
use iocap_model::LimitKind;

use super::{Comparison, RunComparison, Side, TestComparison};
use crate::assess::wrap;
use crate::fmt::{self, MISSING_DASH};
use crate::{plural, table, width};

fn metric_label(m: MetricName) -> &'static str {
    match m {
        MetricName::Iops => "IOPS",
        MetricName::MbS => "MB/s",
        MetricName::LatUsP50 => "p50",
        MetricName::LatUsP99 => "p99",
        MetricName::LatUsP999 => "p99.9",
        MetricName::LatUsMax => "max",
        MetricName::CpuUsPerIo => "CPU µs/I/O",
        MetricName::KneeQd => "knee",
        MetricName::LimitIops => "limit IOPS",
        MetricName::LimitBytesPerS => "limit MB/s",
        MetricName::BucketCreditIos => "credits (I/Os)",
        MetricName::BucketPeakIops => "burst IOPS",
        MetricName::BucketBaselineIops => "baseline IOPS",
        MetricName::BucketBurstS => "burst length",
        MetricName::BucketRefillIosPerS => "refill I/Os/s",
    }
}

fn fmt_value(m: MetricName, v: Option<f64>) -> String {
    match v {
        None => MISSING_DASH.into(),
        Some(v) => match m {
            MetricName::Iops
            | MetricName::LimitIops
            | MetricName::BucketCreditIos
            | MetricName::BucketPeakIops
            | MetricName::BucketBaselineIops
            | MetricName::BucketRefillIosPerS => fmt::count(v),
            MetricName::MbS => format!("{v:.1}"),
            MetricName::LimitBytesPerS => format!("{:.1}", v / 1e6),
            MetricName::KneeQd => format!("qd {v:.0}"),
            MetricName::BucketBurstS => format!("{v:.0} s"),
            MetricName::CpuUsPerIo => format!("{v:.2}"),
            MetricName::LatUsP50
            | MetricName::LatUsP99
            | MetricName::LatUsP999
            | MetricName::LatUsMax => fmt::lat_us(v),
        },
    }
}

/// A value with its 95 % interval as ± percent of the mean: `73,703 ±4.4%`.
fn with_ci(m: MetricName, v: Option<f64>, ci: Option<[f64; 2]>) -> String {
    let mut s = fmt_value(m, v);
    if let Some([lo, hi]) = ci {
        let mid = (lo + hi) / 2.0;
        if mid > 0.0 {
            s.push_str(&format!(" ±{:.1}%", (hi - lo) / 2.0 / mid * 100.0));
        }
    }
    s
}

fn fmt_pct(c: Option<f64>) -> String {
    c.map_or_else(|| MISSING_DASH.into(), |c| format!("{c:+.1} %"))
}

fn with_label(id: &str, label: &Option<String>) -> String {
    match label {
        Some(l) => format!("{id} ({})", one_line(l)),
        None => id.to_string(),
    }
}

/// A percent threshold as typed: `10`, `12.5`.
fn fmt_th(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        MISSING_DASH.into()
    }
}

fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

fn flag_list(flags: &[Flag]) -> String {
    flags
        .iter()
        .map(|f| {
            let p = f
                .p_value
                .map_or(String::new(), |p| format!(", {}", fmt_p(p)));
            format!(
                "{} {} ({}{p})",
                metric_label(f.metric),
                fmt_pct(Some(f.change_pct)),
                one_line(&f.test)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// User strings (test names, labels) on one line, so they cannot break the layout, with no
/// terminal control in them.
fn one_line(s: &str) -> String {
    crate::fmt::printable(&s.replace(['\n', '\r'], " ")).into_owned()
}

/// A figure's row: its name, both values (with their intervals), the change and the verdict.
fn metric_row(m: &Metric) -> Vec<String> {
    let p = m
        .p_value
        .map_or(String::new(), |p| format!(" {}", fmt_p(p)));
    vec![
        metric_label(m.metric).to_string(),
        with_ci(m.metric, m.base, m.base_ci95),
        with_ci(m.metric, m.run, m.run_ci95),
        fmt_pct(m.change_pct),
        match m.verdict {
            Some(ChangeVerdict::Regression) => format!("REGRESSION{p}"),
            Some(ChangeVerdict::Better) => format!("better{p}"),
            Some(ChangeVerdict::WithinNoise) => format!("within noise{p}"),
            None => String::new(),
        },
    ]
}

/// Two saturate runs' knee, limit and bucket in one table, then what changed kind.
fn render_saturation(out: &mut String, s: &SaturationComparison) {
    out.push_str("\nsaturation: the knee, the limit and the burst bucket\n");
    let mut tab = table(&["", "base", "run", "change", ""]);
    if s.base_limit.is_some() || s.run_limit.is_some() {
        let kind = |k: Option<LimitKind>| k.map_or(MISSING_DASH, |k| k.name()).to_string();
        let (b, r) = (kind(s.base_limit), kind(s.run_limit));
        tab.add_row(vec!["limit".into(), b, r, String::new(), String::new()]);
    }
    for m in &s.metrics {
        tab.add_row(metric_row(&m.metric));
    }
    out.push_str(&tab.to_string());
    out.push('\n');
    for n in &s.notes {
        out.push_str(&wrap("called out: ", &one_line(n), width()));
    }
}

fn render_test(out: &mut String, t: &TestComparison) {
    let (n, w) = (one_line(&t.base_name), one_line(&t.base_workload));
    let mut head = format!("test {}", t.index + 1);
    if !w.starts_with(&n) {
        head.push_str(&format!(" ({n})"));
    }
    // paired by part and depth (two saturate runs): the run's test may sit elsewhere
    if t.run_index != t.index {
        head.push_str(&format!(", the run's test {}", t.run_index + 1));
    }
    out.push_str(&format!("\n{head}: {w}\n"));
    if t.part.is_some_and(|p| !p.judged()) {
        out.push_str(
            "  a test of the burst bucket's drain or refill: shown, not checked for regressions (the bucket's baseline is)\n",
        );
    } else if t.different_workload {
        out.push_str(&format!(
            "  different workload: base ran {n} ({w}), this run {} ({}); not checked for regressions\n",
            one_line(&t.run_name),
            one_line(&t.run_workload)
        ));
    }
    let mut tab = table(&["", "base", "run", "change", ""]);
    for m in &t.metrics {
        tab.add_row(metric_row(m));
    }
    out.push_str(&tab.to_string());
    out.push('\n');
    if t.targets.len() > 1 {
        let mut tab = table(&["target", "", "base", "run", "change"]);
        for tc in &t.targets {
            let path = match (&tc.base_path, &tc.run_path) {
                (Some(b), Some(r)) if b == r => one_line(b),
                (b, r) => format!(
                    "{} → {}",
                    one_line(b.as_deref().unwrap_or("none")),
                    one_line(r.as_deref().unwrap_or("none"))
                ),
            };
            for (k, m) in tc.metrics.iter().enumerate() {
                tab.add_row(vec![
                    if k == 0 { path.clone() } else { String::new() },
                    metric_label(m.metric).to_string(),
                    fmt_value(m.metric, m.base),
                    fmt_value(m.metric, m.run),
                    fmt_pct(m.change_pct),
                ]);
            }
        }
        out.push_str(&tab.to_string());
        out.push('\n');
    }
}

fn render_diffs(out: &mut String, r: &RunComparison) {
    let mut lines = Vec::new();
    for d in &r.differences {
        lines.push(format!("  {}: {} → {}", d.field, d.base, d.run));
    }
    for t in &r.tests {
        for d in &t.differences {
            lines.push(format!(
                "  test {} {}: {} → {}",
                t.index + 1,
                d.field,
                d.base,
                d.run
            ));
        }
    }
    if lines.is_empty() {
        out.push_str("\nno differences in spec, engine, host or devices\n");
    } else {
        out.push_str("\ndifferences (base → run):\n");
        for l in lines {
            out.push_str(&one_line(&l));
            out.push('\n');
        }
    }
}

/// Side-by-side tables for a terminal, one section per compared run, each opening with a line
/// for a side (base or run) that was cut short; every line fits [`crate::width`] (a long one,
/// such as the two workloads of a test that differs, wrapped at spaces).
pub fn render_text(c: &Comparison) -> String {
    crate::fit_lines(&render_sections(c))
}

fn render_sections(c: &Comparison) -> String {
    let mut out = String::new();
    let th = &c.thresholds;
    for (k, r) in c.runs.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        // a side cut short says so before its figures
        for (side, p) in [(Side::Base, &c.base.partial), (Side::Run, &r.run.partial)] {
            if let Some(p) = p {
                let head = format!("PARTIAL {}: ", side.name());
                out.push_str(&wrap(&head, &one_line(p), width()));
            }
        }
        out.push_str(&format!(
            "run {} vs base {}\n",
            with_label(&r.run.run_id, &r.run.label),
            with_label(&c.base.run_id, &c.base.label)
        ));
        for t in &r.tests {
            render_test(&mut out, t);
        }
        if let Some(s) = &r.saturation {
            render_saturation(&mut out, s);
        }
        for (title, rows) in [("workload", &r.workload), ("replay", &r.replay)] {
            if rows.is_empty() {
                continue;
            }
            out.push_str(&format!("\n{:<20} {:>26} {:>26}\n", title, "base", "run"));
            for d in rows {
                out.push_str(&format!("{:<20} {:>26} {:>26}\n", d.field, d.base, d.run));
            }
        }
        for u in &r.unmatched {
            out.push_str(&format!(
                "\nunmatched: test {} ({}) only in the {}\n",
                u.index + 1,
                u.workload,
                u.side.name()
            ));
        }
        render_diffs(&mut out, r);
        out.push('\n');
        let n = r.regressions.len();
        if n == 0 {
            let limits = if th.iops_drop_pct == th.mbps_drop_pct {
                format!("IOPS/MB/s -{} %", fmt_th(th.iops_drop_pct))
            } else {
                format!(
                    "IOPS -{} %, MB/s -{} %",
                    fmt_th(th.iops_drop_pct),
                    fmt_th(th.mbps_drop_pct)
                )
            };
            out.push_str(&format!(
                "no regression beyond thresholds ({limits}, p99 +{} %)\n",
                fmt_th(th.p99_rise_pct)
            ));
        } else {
            let head = format!("{}: ", plural(n, "regression"));
            out.push_str(&wrap(&head, &flag_list(&r.regressions), crate::width()));
        }
        if !r.improvements.is_empty() {
            out.push_str(&wrap(
                "better: ",
                &flag_list(&r.improvements),
                crate::width(),
            ));
        }
        if !r.within_noise.is_empty() {
            out.push_str(&wrap(
                "within noise: ",
                &format!(
                    "{} (beyond a threshold, not beyond the two runs' noise)",
                    flag_list(&r.within_noise)
                ),
                crate::width(),
            ));
        }
    }
    if c.runs.is_empty() {
        out.push_str("nothing to compare: no run given besides the base\n");
    }
    out
}

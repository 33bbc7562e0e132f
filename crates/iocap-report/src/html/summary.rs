//! The plain-language summary that opens the report: one or two sentences per test that a
//! reader who never ran a benchmark can follow, and how each later run compares with the first;
//! first, what the assessing commands concluded (preflight verdict counts, the knee and the
//! capacity at the latency target, the scale-up), and after tests that ran at the same time,
//! what they did together. Figures here are rounded for reading; the exact ones are in the full
//! figures.

use std::fmt::Write as _;

use iocap_model::{RunKind, RunResult, RwMode, TestResult};

use super::{escape, swatch};
use crate::assess::{capacity_sentence, max_p99, preflight_what, scaleup_sentence, verdict_counts};
use crate::{change_pct, fmt, plural};

fn mb_s(v: f64) -> String {
    if v >= 1000.0 {
        fmt::count(v)
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
    format!("{} {what}", crate::size_label(s))
}

/// One or two plain sentences about a test.
fn sentence(t: &TestResult) -> String {
    let mut s = format!(
        "{} on {}",
        workload(t),
        plural(t.targets.len().max(t.spec.targets.len()), "target")
    );
    if let Some(rate) = t.spec.effective_rate_iops() {
        let _ = write!(s, ", throttled to {} IOPS", fmt::count(rate));
    }
    match &t.total.lat_us {
        Some(l) if t.total.ios > 0 => {
            let _ = write!(
                s,
                ": {} IOPS ({} MB/s); half the I/Os finished within {}, 99 % within {}.",
                fmt::count(t.total.iops),
                mb_s(t.total.mb_s),
                fmt::lat_us(l.p50),
                fmt::lat_us(l.p99)
            );
        }
        _ => {
            let _ = write!(s, ": no I/O completed in {}.", fmt::secs(t.duration_s));
        }
    }
    if let Some(u) = &t.uncertainty {
        s.push_str(&how_sure(u));
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
            " Interrupted after {}; the figures cover the time measured.",
            fmt::secs(t.duration_s)
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

/// " The IOPS are known to ±1.2 % (95 % confidence); stable." and the reasons when not.
fn how_sure(u: &iocap_model::Uncertainty) -> String {
    let mut s = String::new();
    if let Some(i) = &u.iops {
        let _ = write!(
            s,
            " The IOPS are known to ±{:.1} % (95 % confidence, CV {:.1} %)",
            i.ci95_half_pct, i.cv_pct
        );
        if let Some(st) = u.steal_pct {
            let _ = write!(s, ", {st:.1} % of the CPU stolen by the hypervisor");
        }
        let _ = write!(s, "; {}.", u.verdict.name());
    } else {
        s.push_str(" Too short to judge the noise.");
    }
    if u.verdict == iocap_model::Stability::Unstable {
        for r in &u.reasons {
            let mut c = r.chars();
            let first: String = c
                .next()
                .map(|f| f.to_uppercase().collect())
                .unwrap_or_default();
            let _ = write!(s, " {first}{}.", c.as_str());
        }
    }
    s
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
    if let Some(c) = change_pct(base.total.iops, t.total.iops) {
        parts.push(format!("IOPS {}", change_words(c, "higher", "lower")));
    }
    if let (Some(a), Some(b)) = (&t.total.lat_us, &base.total.lat_us) {
        if let Some(c) = change_pct(b.p99, a.p99) {
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

/// How `t` compares with the first run's test of the same workload: the one at its position,
/// else the first of the same workload; like is compared only with like.
fn against_first(
    t: &TestResult,
    at_k: Option<&TestResult>,
    first: &RunResult,
    base_name: &str,
) -> String {
    let same = |b: &&TestResult| iocap_assess::compare::same_workload(b, t);
    match at_k
        .filter(same)
        .or_else(|| first.tests.iter().find(|b| same(b)))
    {
        Some(b) => comparison(t, b, base_name),
        None => format!(
            " Not compared with {base_name}, which ran no {}.",
            workload(t)
        ),
    }
}

/// After the last test of a group that ran at the same time: what the group did together.
fn together(tests: &[TestResult], k: usize) -> Option<String> {
    let g = tests[k].group?;
    if tests[k + 1..].iter().any(|t| t.group == Some(g)) {
        return None;
    }
    let members: Vec<&TestResult> = tests.iter().filter(|t| t.group == Some(g)).collect();
    if members.len() < 2 {
        return None;
    }
    let names: Vec<String> = members
        .iter()
        .map(|t| {
            t.role
                .map_or_else(|| t.name.clone(), |r| r.name().to_string())
        })
        .collect();
    let iops: f64 = members.iter().map(|t| t.total.iops).sum();
    let mbs: f64 = members.iter().map(|t| t.total.mb_s).sum();
    let mut s = format!(
        "Together ({} at the same time): {} IOPS ({} MB/s)",
        names.join(" and "),
        fmt::count(iops),
        mb_s(mbs)
    );
    if let Some(p99) = max_p99(&members) {
        let _ = write!(s, "; the slowest p99 of them {}", fmt::lat_us(p99));
    }
    s.push('.');
    Some(s)
}

/// What the assessing commands concluded: preflight verdicts, knee and capacity, scale-up.
fn assessed(r: &RunResult) -> Vec<String> {
    let mut v = vec![];
    if let Some(p) = &r.preflight {
        v.push(format!(
            "Preflight ({}): {} (see Preflight).",
            preflight_what(p),
            verdict_counts(p)
        ));
    }
    if let Some(s) = &r.saturation {
        let mut line = format!(
            "Saturation: at most {} IOPS",
            fmt::count(s.max_iops.max(0.0))
        );
        match s.knee_qd {
            Some(q) => {
                let _ = write!(line, "; the knee is at queue depth {q}");
            }
            None => line.push_str("; no knee (throughput never flattened)"),
        }
        if let Some(c) = capacity_sentence(s) {
            let _ = write!(line, "; capacity {c}");
        }
        line.push('.');
        v.push(line);
    }
    if let Some(s) = &r.scaleup {
        let mut parts = vec![];
        if let Some(l) = scaleup_sentence(s) {
            parts.push(l);
        }
        let slow = s.slow_paths();
        if !slow.is_empty() {
            parts.push(format!(
                "{} slow ({})",
                plural(slow.len(), "volume"),
                slow.join(", ")
            ));
        }
        if !parts.is_empty() {
            v.push(format!("Scale-up: {}.", parts.join("; ")));
        }
    }
    v
}

pub(super) fn summary(out: &mut String, runs: &[RunResult], names: &[String]) {
    out.push_str(r#"<section id="summary"><h2>Summary</h2><ul class="summary">"#);
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(
            out,
            r#"<li>{}<span class="run-name">{}</span>"#,
            swatch(i),
            escape(&names[i])
        );
        if r.tests.is_empty() {
            // a run without tests (a characterised workload, a verify) says what it measured
            match r.kind() {
                RunKind::Suite | RunKind::Test => out.push_str(": no tests."),
                _ => {
                    let _ = write!(out, ": {}.", escape(&crate::headline::headline(r).text));
                }
            }
        }
        if let Some(p) = crate::partial_note(r) {
            let _ = write!(
                out,
                r#"<br><strong class="partial">{}</strong>"#,
                escape(&p)
            );
        }
        for line in assessed(r) {
            let _ = write!(out, "<br>{}", escape(&line));
        }
        for (k, t) in r.tests.iter().enumerate() {
            let mut s = sentence(t);
            if i > 0 {
                s.push_str(&against_first(t, runs[0].tests.get(k), &runs[0], &names[0]));
            }
            if r.tests.len() > 1 {
                s = format!("{}: {s}", t.name);
            }
            let _ = write!(out, "<br>{}", escape(&s));
            if let Some(line) = together(&r.tests, k) {
                let _ = write!(
                    out,
                    r#"<br><span class="together">{}</span>"#,
                    escape(&line)
                );
            }
        }
        out.push_str("</li>");
    }
    out.push_str("</ul></section>");
}

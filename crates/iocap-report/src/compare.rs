//! `iocap compare BASE RUN...`: did anything get worse, and what changed around it?
//!
//! A storage change (firmware, kernel, multipath, a new SAN tier) is judged by running the same
//! tests before and after. This module lines the runs up test by test, computes the change of
//! every headline figure, flags regressions beyond user-set thresholds and lists every
//! difference in spec, engine, host and devices that could explain them, so a slower run is
//! never blamed on storage when the queue depth or the kernel changed too.
//!
//! Everything here is pure: [`compare`] builds a [`Comparison`] (whose JSON is the contract of
//! `iocap compare --output json`), [`render_text`] and [`render_json`] present it. No input can
//! make it panic, divide by zero or print `NaN`: a change against a zero or missing base figure
//! is simply "not defined" (`null` in JSON, `–` in text).

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, CellAlignment, Table};
use iocap_model::{human_bytes, JobSpec, OpStats, RunResult, TargetResult, TargetSpec, TestResult};
use serde::Serialize;

use crate::{fmt_count, fmt_lat_us, text::describe};

/// How far a figure may move against the base before it counts; each in percent, strictly
/// beyond (a drop of exactly 10 % with a 10 % threshold is not flagged).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Thresholds {
    pub iops_drop_pct: f64,
    pub mbps_drop_pct: f64,
    pub p99_rise_pct: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            iops_drop_pct: 10.0,
            mbps_drop_pct: 10.0,
            p99_rise_pct: 20.0,
        }
    }
}

/// The whole comparison: one base, one entry per compared run.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub thresholds: Thresholds,
    pub base: RunRef,
    pub runs: Vec<RunComparison>,
    /// Regressions over all runs, for scripts that only need the exit status.
    pub regression_count: usize,
}

/// Which run a side is.
#[derive(Debug, Clone, Serialize)]
pub struct RunRef {
    pub run_id: String,
    pub label: Option<String>,
    pub started_at: String,
    pub hostname: String,
}

/// One run against the base.
#[derive(Debug, Clone, Serialize)]
pub struct RunComparison {
    pub run: RunRef,
    /// Tests matched by position: test i of the base with test i of the run.
    pub tests: Vec<TestComparison>,
    /// Tests that exist in one of the two runs only.
    pub unmatched: Vec<UnmatchedTest>,
    /// Run-wide differences: host and iocap version.
    pub differences: Vec<Difference>,
    pub regressions: Vec<Flag>,
    pub improvements: Vec<Flag>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TestComparison {
    /// Position of the test in both runs, from 0.
    pub index: usize,
    pub base_name: String,
    pub run_name: String,
    /// Set when names or workloads (rw, write share, block size) differ: figures are shown but
    /// nothing is flagged.
    pub different_workload: bool,
    pub base_workload: String,
    pub run_workload: String,
    pub metrics: Vec<Metric>,
    pub targets: Vec<TargetComparison>,
    /// Spec, engine and per-target device differences of this test.
    pub differences: Vec<Difference>,
}

/// One figure side by side. Values are `null` where the side has none (no I/O completed,
/// target missing); `change_pct` is `null` where the change is not defined (zero base).
#[derive(Debug, Clone, Serialize)]
pub struct Metric {
    /// `iops`, `mb_s`, `lat_us_p50`, `lat_us_p99`, `lat_us_p99_9`, `lat_us_max`, `cpu_us_per_io`.
    pub metric: String,
    pub base: Option<f64>,
    pub run: Option<f64>,
    pub change_pct: Option<f64>,
    /// `regression` or `better` when beyond the threshold; `null` otherwise or when the
    /// figure is not gated (only IOPS, MB/s and p99 of whole tests are).
    pub verdict: Option<Verdict>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Regression,
    Better,
}

#[derive(Debug, Clone, Serialize)]
pub struct TargetComparison {
    pub index: usize,
    pub base_path: Option<String>,
    pub run_path: Option<String>,
    /// IOPS, MB/s and p99 of the target; shown, never flagged.
    pub metrics: Vec<Metric>,
}

#[derive(Debug, Clone, Serialize)]
pub struct UnmatchedTest {
    /// `base` or `run`: the side that has the test.
    pub side: String,
    pub index: usize,
    pub name: String,
    pub workload: String,
}

/// A field that differs, with both values as people read them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub field: String,
    pub base: String,
    pub run: String,
}

/// One figure beyond its threshold.
#[derive(Debug, Clone, Serialize)]
pub struct Flag {
    pub test: String,
    pub test_index: usize,
    pub metric: String,
    pub base: f64,
    pub run: f64,
    pub change_pct: f64,
}

impl Comparison {
    /// Regressions over all compared runs.
    pub fn regressions(&self) -> usize {
        self.runs.iter().map(|r| r.regressions.len()).sum()
    }

    pub fn has_regression(&self) -> bool {
        self.regressions() > 0
    }
}

fn run_ref(r: &RunResult) -> RunRef {
    RunRef {
        run_id: r.run_id.clone(),
        label: r.label.clone(),
        started_at: r.started_at.clone(),
        hostname: r.host.hostname.clone(),
    }
}

/// A finite figure, or none.
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Change in percent of `run` against `base`; not defined for a zero, negative or missing base.
fn change_pct(base: Option<f64>, run: Option<f64>) -> Option<f64> {
    let (b, r) = (base?, run?);
    if b > 0.0 {
        finite((r - b) / b * 100.0)
    } else {
        None
    }
}

/// Which way is good for a gated figure, and its threshold.
#[derive(Clone, Copy)]
enum Gate {
    None,
    /// Higher is better; a drop beyond the threshold is a regression.
    Drop(f64),
    /// Lower is better; a rise beyond the threshold is a regression.
    Rise(f64),
}

fn metric(name: &str, base: Option<f64>, run: Option<f64>, gate: Gate) -> Metric {
    let (base, run) = (base.and_then(finite), run.and_then(finite));
    let change = change_pct(base, run);
    let verdict = change.and_then(|c| match gate {
        Gate::Drop(th) if c < -th => Some(Verdict::Regression),
        Gate::Drop(th) if c > th => Some(Verdict::Better),
        Gate::Rise(th) if c > th => Some(Verdict::Regression),
        Gate::Rise(th) if c < -th => Some(Verdict::Better),
        _ => None,
    });
    Metric {
        metric: name.into(),
        base,
        run,
        change_pct: change,
        verdict,
    }
}

fn p(o: Option<&OpStats>, f: impl Fn(&iocap_model::LatencyUs) -> f64) -> Option<f64> {
    o.and_then(|o| o.lat_us.as_ref()).map(f)
}

fn test_metrics(b: &TestResult, r: &TestResult, th: &Thresholds, gated: bool) -> Vec<Metric> {
    let g = |gate| if gated { gate } else { Gate::None };
    let (bt, rt) = (Some(&b.total), Some(&r.total));
    vec![
        metric(
            "iops",
            Some(b.total.iops),
            Some(r.total.iops),
            g(Gate::Drop(th.iops_drop_pct)),
        ),
        metric(
            "mb_s",
            Some(b.total.mb_s),
            Some(r.total.mb_s),
            g(Gate::Drop(th.mbps_drop_pct)),
        ),
        metric("lat_us_p50", p(bt, |l| l.p50), p(rt, |l| l.p50), Gate::None),
        metric(
            "lat_us_p99",
            p(bt, |l| l.p99),
            p(rt, |l| l.p99),
            g(Gate::Rise(th.p99_rise_pct)),
        ),
        metric(
            "lat_us_p99_9",
            p(bt, |l| l.p99_9),
            p(rt, |l| l.p99_9),
            Gate::None,
        ),
        metric("lat_us_max", p(bt, |l| l.max), p(rt, |l| l.max), Gate::None),
        metric(
            "cpu_us_per_io",
            Some(b.cpu.us_per_io),
            Some(r.cpu.us_per_io),
            Gate::None,
        ),
    ]
}

fn target_metrics(b: Option<&TargetResult>, r: Option<&TargetResult>) -> Vec<Metric> {
    let (bt, rt) = (b.map(|t| &t.total), r.map(|t| &t.total));
    vec![
        metric("iops", bt.map(|o| o.iops), rt.map(|o| o.iops), Gate::None),
        metric("mb_s", bt.map(|o| o.mb_s), rt.map(|o| o.mb_s), Gate::None),
        metric("lat_us_p99", p(bt, |l| l.p99), p(rt, |l| l.p99), Gate::None),
    ]
}

/// Pushes a difference when the two renderings differ.
fn diff(out: &mut Vec<Difference>, field: impl Into<String>, base: String, run: String) {
    if base != run {
        out.push(Difference {
            field: field.into(),
            base,
            run,
        });
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "none".to_string(), |v| v.to_string())
}

/// A field's name and how to render it.
type Field<T> = (&'static str, fn(&T) -> String);

/// Renders each field of both sides and records those whose renderings differ.
fn fields<T>(out: &mut Vec<Difference>, b: &T, r: &T, list: &[Field<T>]) {
    for (name, f) in list {
        diff(out, *name, f(b), f(r));
    }
}

/// Every spec field but `name`, which merely labels the test.
const SPEC_FIELDS: [Field<JobSpec>; 19] = [
    ("spec.targets", |s| s.targets.len().to_string()),
    ("spec.rw", |s| s.rw.name().into()),
    ("spec.write_pct", |s| s.write_pct.to_string()),
    ("spec.bs_bytes", |s| s.bs_bytes.to_string()),
    ("spec.qd", |s| s.qd.to_string()),
    ("spec.threads", |s| s.threads.to_string()),
    ("spec.size_bytes", |s| s.size_bytes.to_string()),
    ("spec.duration_s", |s| s.duration_s.to_string()),
    ("spec.warmup_s", |s| s.warmup_s.to_string()),
    ("spec.cooldown_s", |s| s.cooldown_s.to_string()),
    ("spec.seed", |s| s.seed.to_string()),
    ("spec.align_bytes", |s| s.align_bytes.to_string()),
    ("spec.rate_iops", |s| opt(s.rate_iops)),
    ("spec.rate_mb_s", |s| opt(s.rate_mb_s)),
    ("spec.direct", |s| s.direct.to_string()),
    ("spec.write_through", |s| s.write_through.to_string()),
    ("spec.fsync_every", |s| s.fsync_every.to_string()),
    ("spec.engine", |s| format!("{:?}", s.engine)),
    ("spec.allow_overwrite", |s| s.allow_overwrite.to_string()),
];

const TARGET_SPEC_FIELDS: [Field<TargetSpec>; 4] = [
    ("path", |t| t.path.clone()),
    ("size_bytes", |t| opt(t.size_bytes)),
    ("threads", |t| opt(t.threads)),
    ("cpu_mask", |t| opt(t.cpu_mask.map(|m| format!("{m:#x}")))),
];

const TEST_FIELDS: [Field<TestResult>; 3] = [
    ("engine", |t| t.engine.clone()),
    ("engine_features", |t| t.engine_features.join(", ")),
    ("direct", |t| t.direct.to_string()),
];

const TARGET_FIELDS: [Field<TargetResult>; 3] = [
    ("kind", |t| t.kind.clone()),
    ("device", |t| opt(t.device.as_ref())),
    ("fs_type", |t| opt(t.fs_type.as_ref())),
];

const RUN_FIELDS: [Field<RunResult>; 6] = [
    ("host.hostname", |r| r.host.hostname.clone()),
    ("host.kernel", |r| r.host.kernel.clone()),
    ("host.cpu_model", |r| r.host.cpu_model.clone()),
    ("host.cpus", |r| r.host.cpus.to_string()),
    ("host.memory_bytes", |r| human_bytes(r.host.memory_bytes)),
    ("iocap_version", |r| r.iocap_version.clone()),
];

/// Records the fields of matched list items as `prefix[i].field`, and an item present on one
/// side only as its first field against `none`.
fn indexed<T>(out: &mut Vec<Difference>, prefix: &str, b: &[T], r: &[T], list: &[Field<T>]) {
    for i in 0..b.len().max(r.len()) {
        match (b.get(i), r.get(i)) {
            (Some(bt), Some(rt)) => {
                let mut d = Vec::new();
                fields(&mut d, bt, rt, list);
                out.extend(d.into_iter().map(|x| Difference {
                    field: format!("{prefix}[{i}].{}", x.field),
                    ..x
                }));
            }
            (bt, rt) => {
                let (name, f) = list[0];
                let side = |t: Option<&T>| t.map_or_else(|| "none".to_string(), f);
                diff(out, format!("{prefix}[{i}].{name}"), side(bt), side(rt));
            }
        }
    }
}

fn test_differences(b: &TestResult, r: &TestResult) -> Vec<Difference> {
    let mut out = Vec::new();
    fields(&mut out, &b.spec, &r.spec, &SPEC_FIELDS);
    let target_specs = (&b.spec.targets, &r.spec.targets);
    indexed(
        &mut out,
        "spec.targets",
        target_specs.0,
        target_specs.1,
        &TARGET_SPEC_FIELDS,
    );
    fields(&mut out, b, r, &TEST_FIELDS);
    // Targets missing on one side already show in the spec's target paths.
    let n = b.targets.len().min(r.targets.len());
    indexed(
        &mut out,
        "targets",
        &b.targets[..n],
        &r.targets[..n],
        &TARGET_FIELDS,
    );
    out
}

fn run_differences(b: &RunResult, r: &RunResult) -> Vec<Difference> {
    let mut out = Vec::new();
    fields(&mut out, b, r, &RUN_FIELDS);
    out
}

fn same_workload(b: &TestResult, r: &TestResult) -> bool {
    b.name == r.name
        && b.spec.rw == r.spec.rw
        && b.spec.write_pct == r.spec.write_pct
        && b.spec.bs_bytes == r.spec.bs_bytes
}

fn compare_run(base: &RunResult, run: &RunResult, th: &Thresholds) -> RunComparison {
    let mut tests = Vec::new();
    let (mut regressions, mut improvements) = (Vec::new(), Vec::new());
    for (i, (b, r)) in base.tests.iter().zip(&run.tests).enumerate() {
        let different = !same_workload(b, r);
        let metrics = test_metrics(b, r, th, !different);
        for m in &metrics {
            let (Some(v), Some(bv), Some(rv), Some(c)) = (m.verdict, m.base, m.run, m.change_pct)
            else {
                continue;
            };
            let flag = Flag {
                test: b.name.clone(),
                test_index: i,
                metric: m.metric.clone(),
                base: bv,
                run: rv,
                change_pct: c,
            };
            match v {
                Verdict::Regression => regressions.push(flag),
                Verdict::Better => improvements.push(flag),
            }
        }
        let targets = (0..b.targets.len().max(r.targets.len()))
            .map(|t| {
                let (bt, rt) = (b.targets.get(t), r.targets.get(t));
                TargetComparison {
                    index: t,
                    base_path: bt.map(|x| x.path.clone()),
                    run_path: rt.map(|x| x.path.clone()),
                    metrics: target_metrics(bt, rt),
                }
            })
            .collect();
        tests.push(TestComparison {
            index: i,
            base_name: b.name.clone(),
            run_name: r.name.clone(),
            different_workload: different,
            base_workload: describe(b),
            run_workload: describe(r),
            metrics,
            targets,
            differences: test_differences(b, r),
        });
    }
    let n = tests.len();
    let unmatched = [("base", base), ("run", run)]
        .into_iter()
        .flat_map(|(side, rr)| {
            rr.tests
                .iter()
                .enumerate()
                .skip(n)
                .map(move |(i, t)| UnmatchedTest {
                    side: side.into(),
                    index: i,
                    name: t.name.clone(),
                    workload: describe(t),
                })
        })
        .collect();
    RunComparison {
        run: run_ref(run),
        tests,
        unmatched,
        differences: run_differences(base, run),
        regressions,
        improvements,
    }
}

/// Compares each of `runs` with `base`.
pub fn compare(base: &RunResult, runs: &[RunResult], th: &Thresholds) -> Comparison {
    let runs: Vec<RunComparison> = runs.iter().map(|r| compare_run(base, r, th)).collect();
    let regression_count = runs.iter().map(|r| r.regressions.len()).sum();
    Comparison {
        thresholds: *th,
        base: run_ref(base),
        runs,
        regression_count,
    }
}

/// The comparison as pretty JSON with a trailing newline.
pub fn render_json(c: &Comparison) -> String {
    // Non-finite floats can only come from the thresholds; serde_json writes them as null.
    let mut s =
        serde_json::to_string_pretty(c).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

fn metric_label(m: &str) -> &str {
    match m {
        "iops" => "IOPS",
        "mb_s" => "MB/s",
        "lat_us_p50" => "p50",
        "lat_us_p99" => "p99",
        "lat_us_p99_9" => "p99.9",
        "lat_us_max" => "max",
        "cpu_us_per_io" => "CPU µs/I/O",
        other => other,
    }
}

fn fmt_value(m: &str, v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(v) => match m {
            "iops" => fmt_count(v),
            "mb_s" => format!("{v:.1}"),
            "cpu_us_per_io" => format!("{v:.2}"),
            _ => fmt_lat_us(v),
        },
    }
}

fn fmt_pct(c: Option<f64>) -> String {
    c.map_or_else(|| "–".into(), |c| format!("{c:+.1} %"))
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(header.iter().map(Cell::new));
    for i in 1..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
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
        "–".into()
    }
}

fn flag_list(flags: &[Flag]) -> String {
    flags
        .iter()
        .map(|f| {
            format!(
                "{} {} ({})",
                metric_label(&f.metric),
                fmt_pct(Some(f.change_pct)),
                one_line(&f.test)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// User strings (test names, labels) on one line, so they cannot break the layout.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

fn render_test(out: &mut String, t: &TestComparison) {
    let (n, w) = (one_line(&t.base_name), one_line(&t.base_workload));
    if w.starts_with(&n) {
        out.push_str(&format!("\ntest {}: {w}\n", t.index + 1));
    } else {
        out.push_str(&format!("\ntest {} ({n}): {w}\n", t.index + 1));
    }
    if t.different_workload {
        out.push_str(&format!(
            "  different workload: base ran {n} ({w}), this run {} ({}); not checked for regressions\n",
            one_line(&t.run_name),
            one_line(&t.run_workload)
        ));
    }
    let mut tab = table(&["", "base", "run", "change", ""]);
    for m in &t.metrics {
        tab.add_row(vec![
            metric_label(&m.metric).to_string(),
            fmt_value(&m.metric, m.base),
            fmt_value(&m.metric, m.run),
            fmt_pct(m.change_pct),
            match m.verdict {
                Some(Verdict::Regression) => "REGRESSION".into(),
                Some(Verdict::Better) => "better".into(),
                None => String::new(),
            },
        ]);
    }
    out.push_str(&tab.to_string());
    out.push('\n');
    if t.targets.len() > 1 {
        let mut tab = table(&["target", "", "base", "run", "change"]);
        for tc in &t.targets {
            let path = match (&tc.base_path, &tc.run_path) {
                (Some(b), Some(r)) if b == r => b.clone(),
                (b, r) => format!(
                    "{} → {}",
                    b.as_deref().unwrap_or("none"),
                    r.as_deref().unwrap_or("none")
                ),
            };
            for (k, m) in tc.metrics.iter().enumerate() {
                tab.add_row(vec![
                    if k == 0 { path.clone() } else { String::new() },
                    metric_label(&m.metric).to_string(),
                    fmt_value(&m.metric, m.base),
                    fmt_value(&m.metric, m.run),
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

/// Side-by-side tables for a terminal, one section per compared run.
pub fn render_text(c: &Comparison) -> String {
    let mut out = String::new();
    let th = &c.thresholds;
    for (k, r) in c.runs.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        out.push_str(&format!(
            "run {} vs base {}\n",
            with_label(&r.run.run_id, &r.run.label),
            with_label(&c.base.run_id, &c.base.label)
        ));
        for t in &r.tests {
            render_test(&mut out, t);
        }
        for u in &r.unmatched {
            out.push_str(&format!(
                "\nunmatched: test {} ({}) only in the {}\n",
                u.index + 1,
                u.workload,
                u.side
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
            out.push_str(&format!(
                "{n} regression{}: {}\n",
                if n == 1 { "" } else { "s" },
                flag_list(&r.regressions)
            ));
        }
        if !r.improvements.is_empty() {
            out.push_str(&format!("better: {}\n", flag_list(&r.improvements)));
        }
    }
    if c.runs.is_empty() {
        out.push_str("nothing to compare: no run given besides the base\n");
    }
    out
}

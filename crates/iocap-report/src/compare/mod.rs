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
//!
//! A change of IOPS or MB/s beyond its threshold is a regression (or an improvement) only when it
//! is also beyond the noise of both runs: Welch's t-test on the two tests' per-second series,
//! taken over batch means so that correlated seconds are not counted as independent evidence
//! (`iocap-stats`), must give p < [`NOISE_P`]. Otherwise the change is `within_noise`: shown,
//! with both intervals and the p-value, but not flagged. The thresholds stay as the smallest
//! effect worth flagging. Runs saved without a per-second series (fewer than three seconds)
//! fall back to the threshold alone. p99 latency keeps the threshold rule: a run stores one p99,
//! not a distribution of them to test.
//!
//! This file holds the data model and the matching and gating logic; `fields` lists which
//! fields are compared for differences, `text` renders the terminal view.

mod fields;
mod replay;
mod text;
mod workload;

use iocap_model::{OpStats, RunResult, TargetResult, TestResult};
use serde::Serialize;

use crate::{change_pct, text::describe};
use fields::{run_differences, test_differences};
pub use text::render_text;

/// The p-value below which a difference is beyond the noise.
pub const NOISE_P: f64 = 0.05;

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
    /// Set when the run was cut short (Ctrl-C, SIGTERM, an I/O error, a suite that did not
    /// finish): why, and that its figures cover only what ran. Absent for a whole run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
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
    /// Changes beyond a threshold that the noise of the two runs explains.
    #[serde(default)]
    pub within_noise: Vec<Flag>,
    /// Two recorded workloads (capture, characterise): their figures side by side; empty
    /// otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workload: Vec<Difference>,
    /// Two replays (`iocap replay`): their figures side by side; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replay: Vec<Difference>,
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
    /// `regression` or `better` when beyond the threshold (and, for IOPS and MB/s, beyond the
    /// noise); `within_noise` when beyond the threshold but not the noise; `null` otherwise or
    /// when the figure is not gated (only IOPS, MB/s and p99 of whole tests are).
    pub verdict: Option<Verdict>,
    /// 95 % confidence interval of each side's mean, from its per-second series (IOPS and MB/s
    /// of whole tests with at least three seconds); `null` otherwise.
    #[serde(default)]
    pub base_ci95: Option<[f64; 2]>,
    #[serde(default)]
    pub run_ci95: Option<[f64; 2]>,
    /// Welch's test of the two per-second series (over batch means), two-sided; `null` where
    /// either side has fewer than three seconds.
    #[serde(default)]
    pub p_value: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Regression,
    Better,
    /// Beyond the threshold, but not beyond the noise of the two runs (p ≥ [`NOISE_P`]).
    WithinNoise,
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
    /// Welch's p-value of the change, where there were per-second series to test.
    #[serde(default)]
    pub p_value: Option<f64>,
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
        partial: crate::partial::sentence(r),
    }
}

/// A finite figure, or none.
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
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

/// The noise of a figure on both sides: each side's interval, and Welch's test between them.
#[derive(Clone, Copy, Default)]
struct Noise {
    base_ci95: Option<[f64; 2]>,
    run_ci95: Option<[f64; 2]>,
    p_value: Option<f64>,
}

impl Noise {
    /// From the two tests' per-second series of one figure.
    fn of(base: &TestResult, run: &TestResult, f: fn(&iocap_model::SecondSample) -> f64) -> Self {
        let (b, r): (Vec<f64>, Vec<f64>) = (
            base.per_second.iter().map(f).collect(),
            run.per_second.iter().map(f).collect(),
        );
        let ci = |x: &[f64]| iocap_stats::batch_means_ci(x, 0.95).map(|c| [c.lo, c.hi]);
        Noise {
            base_ci95: ci(&b),
            run_ci95: ci(&r),
            p_value: iocap_stats::welch_batch_means(&b, &r).map(|w| w.p_value),
        }
    }
}

fn metric(name: &str, base: Option<f64>, run: Option<f64>, gate: Gate) -> Metric {
    noisy_metric(name, base, run, gate, Noise::default())
}

fn noisy_metric(
    name: &str,
    base: Option<f64>,
    run: Option<f64>,
    gate: Gate,
    noise: Noise,
) -> Metric {
    let (base, run) = (base.and_then(finite), run.and_then(finite));
    // not defined for a missing side
    let change = base.zip(run).and_then(|(b, r)| change_pct(b, r));
    let verdict = change.and_then(|c| match gate {
        Gate::Drop(th) if c < -th => Some(Verdict::Regression),
        Gate::Drop(th) if c > th => Some(Verdict::Better),
        Gate::Rise(th) if c > th => Some(Verdict::Regression),
        Gate::Rise(th) if c < -th => Some(Verdict::Better),
        _ => None,
    });
    let verdict = match (verdict, noise.p_value) {
        (Some(_), Some(p)) if p >= NOISE_P => Some(Verdict::WithinNoise),
        (v, _) => v,
    };
    Metric {
        metric: name.into(),
        base,
        run,
        change_pct: change,
        verdict,
        base_ci95: noise.base_ci95,
        run_ci95: noise.run_ci95,
        p_value: noise.p_value,
    }
}

fn p(o: Option<&OpStats>, f: impl Fn(&iocap_model::LatencyUs) -> f64) -> Option<f64> {
    o.and_then(|o| o.lat_us.as_ref()).map(f)
}

fn test_metrics(b: &TestResult, r: &TestResult, th: &Thresholds, gated: bool) -> Vec<Metric> {
    let g = |gate| if gated { gate } else { Gate::None };
    let (bt, rt) = (Some(&b.total), Some(&r.total));
    vec![
        noisy_metric(
            "iops",
            Some(b.total.iops),
            Some(r.total.iops),
            g(Gate::Drop(th.iops_drop_pct)),
            Noise::of(b, r, |s| s.iops),
        ),
        noisy_metric(
            "mb_s",
            Some(b.total.mb_s),
            Some(r.total.mb_s),
            g(Gate::Drop(th.mbps_drop_pct)),
            Noise::of(b, r, |s| s.mb_s),
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

/// Whether two tests ran the same workload (name, read/write mix and block size): only such
/// tests are compared, here and in the HTML report.
pub(crate) fn same_workload(b: &TestResult, r: &TestResult) -> bool {
    b.name == r.name
        && b.spec.rw == r.spec.rw
        && b.spec.write_pct == r.spec.write_pct
        && b.spec.bs_bytes == r.spec.bs_bytes
}

fn compare_run(base: &RunResult, run: &RunResult, th: &Thresholds) -> RunComparison {
    let mut tests = Vec::new();
    let (mut regressions, mut improvements, mut within_noise) =
        (Vec::new(), Vec::new(), Vec::new());
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
                p_value: m.p_value,
            };
            match v {
                Verdict::Regression => regressions.push(flag),
                Verdict::Better => improvements.push(flag),
                Verdict::WithinNoise => within_noise.push(flag),
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
        within_noise,
        workload: workload::rows(base.workload.as_ref(), run.workload.as_ref()),
        replay: replay::rows(base.replay.as_ref(), run.replay.as_ref()),
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
    crate::to_json(c).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}\n"))
}

/// Several comparisons (one per run held against its baseline): as text, one after another,
/// or as JSON, the object alone for one and an array for several.
pub fn render_all(cs: &[Comparison], json: bool) -> String {
    match cs {
        [c] if json => render_json(c),
        _ if json => crate::to_json(cs).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}\n")),
        _ => cs
            .iter()
            .map(|c| crate::fmt::printable_lines(&render_text(c)).into_owned())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

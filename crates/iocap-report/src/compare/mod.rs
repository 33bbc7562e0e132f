//! `iocap compare BASE RUN...`: did anything get worse, and what changed around it?
//!
//! A storage change (firmware, kernel, multipath, a new SAN tier) is judged by running the same
//! tests before and after. This module lines the runs up test by test, shows the change of
//! every headline figure with the regressions beyond user-set thresholds flagged, and lists every
//! difference in spec, engine, host and devices that could explain them, so a slower run is
//! never blamed on storage when the queue depth or the kernel changed too.
//!
//! Everything here is pure: [`compare`] builds a [`Comparison`] (whose JSON is the contract of
//! `iocap compare --output json`), [`render_text`] and [`render_json`] present it. No input can
//! make it panic, divide by zero or print `NaN`: a change against a zero or missing base figure
//! is simply "not defined" (`null` in JSON, `–` in text).
//!
//! What counts as a regression, an improvement or a change within the noise, and the figures'
//! own values, are judged by `iocap_assess::compare`, and which test is set beside which by its
//! `pairing` (by position, or for two saturate runs by each test's part and depth); this module
//! lines the runs up as paired (unmatched tests by side), lists the differences and shapes the
//! JSON. `fields`
//! lists which fields are compared for differences, `text` renders the terminal view.

mod fields;
mod replay;
mod text;
mod workload;

use iocap_assess::compare::pairing::{pair_tests, PairedBy, PartKind};
use iocap_assess::compare::saturation::SaturationComparison;
use iocap_assess::compare::{
    same_workload, target_metrics, test_metrics, Flag, Flags, Metric, Thresholds,
};
use iocap_model::RunResult;
use serde::{Deserialize, Serialize};

use crate::text::describe;
use fields::{run_differences, test_differences};
pub use text::render_text;

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
    /// How the tests were paired: `position` (test i of the base with test i of the run), or
    /// for two saturate runs `saturate_part` (the drain's tests by their order in the drain,
    /// the steps by queue depth, the size sweep's points by block size, the throttled points
    /// by their load: `iocap_assess::compare::pairing`).
    pub paired_by: PairedBy,
    /// The paired tests, in the base's order.
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
    /// Two saturate runs (or preflights' read curves): the knee, the limit and the burst
    /// bucket side by side, the bucket's baseline and a cap's rate judged; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saturation: Option<SaturationComparison>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TestComparison {
    /// Index of the base's test, from 0.
    pub index: usize,
    /// Index of the run's test it is paired with, from 0: `index` when paired by position.
    pub run_index: usize,
    /// What both tests were in their saturate runs (`drain`, `refill`, `step`, `throttled`,
    /// `sweep`, `device_time`, `unknown`); absent when paired by position. The bucket's
    /// `drain` and `refill` tests are shown but not checked for regressions: the bucket's
    /// figures are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<PartKind>,
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
    /// The side that has the test.
    pub side: Side,
    pub index: usize,
    pub name: String,
    pub workload: String,
}

/// One of the two runs compared: written `base` or `run` in the JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Side {
    #[serde(rename = "base")]
    Base,
    #[serde(rename = "run")]
    Run,
}

impl Side {
    /// As the JSON and the text name it.
    pub const fn name(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::Run => "run",
        }
    }
}

/// A field that differs, with both values as people read them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub field: String,
    pub base: String,
    pub run: String,
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

fn compare_run(base: &RunResult, run: &RunResult, th: &Thresholds) -> RunComparison {
    let mut tests = Vec::new();
    let mut flags = Flags::default();
    let pairing = pair_tests(base, run);
    for pair in &pairing.pairs {
        let (i, j) = (pair.base, pair.run);
        let (b, r) = (&base.tests[i], &run.tests[j]);
        let mut metrics = test_metrics(b, r, th);
        if !pair.judged() {
            // the bucket's drain and probes: its own figures are judged, not its tests
            metrics.iter_mut().for_each(|m| m.verdict = None);
        }
        flags.add(&b.name, i, &metrics);
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
            run_index: j,
            part: pair.part,
            base_name: b.name.clone(),
            run_name: r.name.clone(),
            different_workload: !same_workload(b, r),
            base_workload: describe(b),
            run_workload: describe(r),
            metrics,
            targets,
            differences: test_differences(b, r),
        });
    }
    let saturation = saturation(base, run, th, &mut flags);
    let only = |side, rr: &RunResult, idx: &[usize]| {
        idx.iter()
            .map(|&i| UnmatchedTest {
                side,
                index: i,
                name: rr.tests[i].name.clone(),
                workload: describe(&rr.tests[i]),
            })
            .collect::<Vec<_>>()
    };
    let mut unmatched = only(Side::Base, base, &pairing.base_only);
    unmatched.extend(only(Side::Run, run, &pairing.run_only));
    RunComparison {
        run: run_ref(run),
        paired_by: pairing.by,
        tests,
        unmatched,
        differences: run_differences(base, run),
        regressions: flags.regressions,
        improvements: flags.improvements,
        within_noise: flags.within_noise,
        workload: workload::rows(base.workload.as_ref(), run.workload.as_ref()),
        replay: replay::rows(base.replay.as_ref(), run.replay.as_ref()),
        saturation,
    }
}

/// The knee, limit and bucket of two runs that both have a saturation, with their judged
/// figures flagged under the base's test they were measured in (`saturation` for the knee).
fn saturation(
    base: &RunResult,
    run: &RunResult,
    th: &Thresholds,
    flags: &mut Flags,
) -> Option<SaturationComparison> {
    let (b, r) = (base.saturation.as_ref()?, run.saturation.as_ref()?);
    let c = iocap_assess::compare::saturation::compare(b, r, th);
    for m in &c.metrics {
        let test = m.test_index.and_then(|i| base.tests.get(i));
        let name = test.map_or("saturation", |t| t.name.as_str());
        flags.add(
            name,
            m.test_index.unwrap_or(0),
            std::slice::from_ref(&m.metric),
        );
    }
    Some(c)
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

#[cfg(test)]
mod tests {
    use super::Side;

    #[test]
    fn each_side_serialises_to_its_old_string_and_parses_back() {
        for (side, s) in [(Side::Base, "base"), (Side::Run, "run")] {
            assert_eq!(side.name(), s);
            let json = serde_json::to_string(&side).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<Side>(&json).unwrap(), side);
        }
    }
}

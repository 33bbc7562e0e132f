//! Which test of a run `iocap compare` sets beside which test of the base.
//!
//! Most commands run a fixed sequence of tests, so test i of one run is test i of the other:
//! they are paired by position, and the tests past the shorter run's end are each in one run
//! only. A `saturate` run's sequence is not fixed: `--bucket`'s drain takes as many 5 s tests
//! as the bucket needs to run out and settle, each refill probe as many as it takes to be back
//! at the baseline, the ramp stops at its knee and the sweep runs at the depth of the highest
//! IOPS. Paired by position, a drain that took two more tests in one run would set every step
//! after it beside another depth. So two saturate runs' tests are paired by what each test
//! was in its run, as the run's [`Saturation`] records it (never guessed from the names):
//!
//! - the drain's tests by their order within the drain, and each refill probe's (the k-th
//!   probe after the same idle pause) by their order within the probe;
//! - the steps by queue depth;
//! - the throttled points by their rate, in percent of the maximum (the rate in IOPS follows
//!   each run's own maximum, so it differs whenever the runs do);
//! - the size sweep's points by block size (its point at the run's own size is a step's test,
//!   paired as that step);
//! - the test that timed the device's own requests with the other's;
//! - the repeats of one point (`--repeat`) by their number.
//!
//! A test the other run has no counterpart for is in one run only. The pairs of the bucket's
//! drain and probes are shown but not checked for regressions ([`PartKind::judged`]): one
//! burst that ran out sooner sets a test at the baseline beside one at the burst's rate, and a
//! shorter burst over the same baseline changes no plan; the bucket's baseline is judged. A test the saturation
//! records no part for (a run cut short before it recorded its points) is paired with the
//! other run's such tests in order.

use iocap_model::{RunCommand, RunResult, Saturation, TestResult};
use serde::Serialize;

/// How two runs' tests were paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairedBy {
    /// Test i of the base with test i of the run.
    Position,
    /// Two saturate runs: each test with the other run's test of the same part and depth.
    SaturatePart,
}

/// What a test of a saturate run was in it, as `iocap compare`'s JSON names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartKind {
    /// A test of `--bucket`'s drain.
    Drain,
    /// A test of a refill probe.
    Refill,
    /// A step of the ramp.
    Step,
    /// A throttled point.
    Throttled,
    /// A point of the size sweep.
    Sweep,
    /// The test that timed the device's own requests.
    DeviceTime,
    /// A test the saturation records no part for.
    Unknown,
}

impl PartKind {
    /// Whether a pair of such tests is checked for regressions: not the bucket's drain and
    /// probes, whose tests differ as soon as one burst ran out sooner (which changes no plan);
    /// the bucket's own figures judge them (its baseline, [`super::saturation`]).
    pub fn judged(self) -> bool {
        !matches!(self, PartKind::Drain | PartKind::Refill)
    }
}

/// Two tests set side by side: indexes into the base's and the run's `tests`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub base: usize,
    pub run: usize,
    /// What both were in their saturate runs; `None` when paired by position.
    pub part: Option<PartKind>,
}

impl Pair {
    /// Whether the pair's figures are checked for regressions (where the workloads match).
    pub fn judged(&self) -> bool {
        self.part.is_none_or(PartKind::judged)
    }
}

/// The tests of two runs paired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pairing {
    pub by: PairedBy,
    /// In the base's order.
    pub pairs: Vec<Pair>,
    /// The base's tests that no test of the run pairs with, in order.
    pub base_only: Vec<usize>,
    /// The run's tests that no test of the base pairs with, in order.
    pub run_only: Vec<usize>,
}

/// Whether `r` is a `saturate` run (or, saved before the command was recorded, a run with a
/// saturation and no preflight, whose read curve it would otherwise be).
pub fn is_saturate(r: &RunResult) -> bool {
    match &r.command {
        Some(c) => *c == RunCommand::Saturate,
        None => r.saturation.is_some() && r.preflight.is_none(),
    }
}

/// The tests of `run` paired with `base`'s: by part and depth when both are saturate runs
/// ([`is_saturate`]), by position otherwise.
pub fn pair_tests(base: &RunResult, run: &RunResult) -> Pairing {
    match (saturation_of(base), saturation_of(run)) {
        (Some(b), Some(r)) => by_part(&parts(&base.tests, b), &parts(&run.tests, r)),
        _ => by_position(base.tests.len(), run.tests.len()),
    }
}

fn saturation_of(r: &RunResult) -> Option<&Saturation> {
    r.saturation.as_ref().filter(|_| is_saturate(r))
}

/// Test i with test i; the longer run's tests past the other's end in one run only.
fn by_position(base: usize, run: usize) -> Pairing {
    let n = base.min(run);
    Pairing {
        by: PairedBy::Position,
        pairs: (0..n)
            .map(|i| Pair {
                base: i,
                run: i,
                part: None,
            })
            .collect(),
        base_only: (n..base).collect(),
        run_only: (n..run).collect(),
    }
}

/// What a test of a saturate run was in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// A test of `--bucket`'s drain.
    Drain,
    /// A test of the k-th refill probe, after an idle pause of so many milliseconds.
    Probe { k: usize, idle_ms: u64 },
    /// A step of the ramp at this queue depth.
    Step { qd: u32 },
    /// A throttled point at this load, in tenths of a percent of the maximum.
    Throttled { load: i64 },
    /// A point of the size sweep at this block size.
    Sweep { bs_bytes: u64 },
    /// The test that timed the device's own requests.
    DeviceTime,
    /// A test the saturation records no part for.
    Unknown,
}

impl Part {
    fn kind(self) -> PartKind {
        match self {
            Part::Drain => PartKind::Drain,
            Part::Probe { .. } => PartKind::Refill,
            Part::Step { .. } => PartKind::Step,
            Part::Throttled { .. } => PartKind::Throttled,
            Part::Sweep { .. } => PartKind::Sweep,
            Part::DeviceTime => PartKind::DeviceTime,
            Part::Unknown => PartKind::Unknown,
        }
    }
}

/// Each test's part, and its order among the run's tests of the same part (the drain's 1st,
/// 2nd, ... test; a point's 1st, 2nd, ... repeat).
fn parts(tests: &[TestResult], s: &Saturation) -> Vec<(Part, usize)> {
    let mut part = vec![None; tests.len()];
    let mark = |i: u32, p: Part, part: &mut Vec<Option<Part>>| {
        // the repeats of a point (`--repeat`) ran one after another; the point names the
        // median's test
        for j in repeats_of(tests, i as usize) {
            part[j].get_or_insert(p);
        }
    };
    for p in &s.steps {
        mark(p.test_idx, Part::Step { qd: p.qd }, &mut part);
    }
    for p in &s.throttled {
        let load = p.load_pct.map_or(i64::MIN, |l| (l * 10.0).round() as i64);
        mark(p.test_idx, Part::Throttled { load }, &mut part);
    }
    for p in &s.size_sweep {
        mark(
            p.test_idx,
            Part::Sweep {
                bs_bytes: p.bs_bytes,
            },
            &mut part,
        );
    }
    if let Some(i) = s.limit.as_ref().and_then(|l| l.device_time_test_idx) {
        mark(i, Part::DeviceTime, &mut part);
    }
    if let Some(b) = &s.bucket {
        // the bucket ran first, before any point: its drain, then each probe, each as many
        // tests as its seconds take
        let before = part.iter().position(Option::is_some).unwrap_or(tests.len());
        let seconds = |i: usize| tests[i].per_second.len();
        let mut next = 0;
        let mut take = |len: usize, p: Part, part: &mut Vec<Option<Part>>| {
            let mut got = 0;
            while next < before && got < len {
                got += seconds(next);
                part[next] = Some(p);
                next += 1;
            }
        };
        take(b.per_second_iops.len(), Part::Drain, &mut part);
        for (k, r) in b.refills.iter().enumerate() {
            let idle_ms = (r.idle_s.max(0.0) * 1000.0).round() as u64;
            take(
                r.per_second_iops.len(),
                Part::Probe { k, idle_ms },
                &mut part,
            );
        }
    }
    let mut seen: Vec<(Part, usize)> = Vec::new();
    part.into_iter()
        .map(|p| {
            let p = p.unwrap_or(Part::Unknown);
            let n = seen.iter().filter(|(q, _)| *q == p).count();
            seen.push((p, n));
            (p, n)
        })
        .collect()
}

/// Test `i` and the other repeats of its point (`--repeat`): the tests around it whose
/// `repeat` numbers count up by one to it and on from it; `i` alone when it is no repeat, and
/// nothing when it is out of range.
fn repeats_of(tests: &[TestResult], i: usize) -> std::ops::Range<usize> {
    if i >= tests.len() {
        return i..i;
    }
    let n = |j: usize| tests[j].repeat;
    let follows = |a: usize, b: usize| matches!((n(a), n(b)), (Some(x), Some(y)) if x + 1 == y);
    let mut from = i;
    while from > 0 && follows(from - 1, from) {
        from -= 1;
    }
    let mut to = i + 1;
    while to < tests.len() && follows(to - 1, to) {
        to += 1;
    }
    from..to
}

/// Each of the base's tests with the run's test of the same part and order.
fn by_part(base: &[(Part, usize)], run: &[(Part, usize)]) -> Pairing {
    let mut pairs = Vec::new();
    let mut base_only = Vec::new();
    let mut taken = vec![false; run.len()];
    for (i, key) in base.iter().enumerate() {
        match run.iter().position(|k| k == key) {
            Some(j) => {
                pairs.push(Pair {
                    base: i,
                    run: j,
                    part: Some(key.0.kind()),
                });
                taken[j] = true;
            }
            None => base_only.push(i),
        }
    }
    Pairing {
        by: PairedBy::SaturatePart,
        pairs,
        base_only,
        run_only: (0..run.len()).filter(|&j| !taken[j]).collect(),
    }
}

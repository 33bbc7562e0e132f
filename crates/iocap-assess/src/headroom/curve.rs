//! The saturate curve as requests in flight against IOPS and latency: its steps in the
//! device's terms (a step's queue depth is per thread and per target; the workload's is the
//! device's), its knee, and a point between two steps.

use iocap_model::workload::AtDepth;
use iocap_model::{CurvePoint, RunResult, Saturation};

/// One unthrottled step that measured I/O.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Step {
    /// The step's queue depth.
    pub qd: u32,
    /// Requests in flight over every thread and target.
    pub outstanding: f64,
    pub iops: f64,
    pub mb_s: f64,
    pub p50: Option<f64>,
    pub p99: Option<f64>,
}

/// Threads over all targets of the test a point was measured by (1 when the test is not in
/// the run).
fn threads(run: &RunResult, p: &CurvePoint) -> u32 {
    run.tests.get(p.test_idx as usize).map_or(1, |t| {
        let s = &t.spec;
        let n: u32 = s
            .targets
            .iter()
            .map(|x| x.threads.unwrap_or(s.threads))
            .sum();
        n.max(1)
    })
}

/// Whether the test a point was measured by did not run to its end: interrupted, or stopped
/// by an I/O error (its figures are then over part of its window, or none of it).
pub(super) fn cut(run: &RunResult, p: &CurvePoint) -> bool {
    run.tests
        .get(p.test_idx as usize)
        .is_some_and(|t| t.interrupted || t.error.is_some())
}

/// The steps that measured I/O and ran to their end, by requests in flight.
pub(super) fn steps(run: &RunResult, sat: &Saturation) -> Vec<Step> {
    let fin = |v: Option<f64>| v.filter(|x| x.is_finite() && *x >= 0.0);
    let mut v: Vec<Step> = sat
        .steps
        .iter()
        .filter(|p| p.iops.is_finite() && p.iops > 0.0 && p.qd > 0 && !cut(run, p))
        .map(|p| Step {
            qd: p.qd,
            outstanding: f64::from(p.qd) * f64::from(threads(run, p)),
            iops: p.iops,
            mb_s: if p.mb_s.is_finite() { p.mb_s } else { 0.0 },
            p50: fin(p.lat_us_p50),
            p99: fin(p.lat_us_p99),
        })
        .collect();
    v.sort_by(|a, b| a.outstanding.total_cmp(&b.outstanding));
    v
}

/// The knee's step and true; or, for a curve that never flattened (or whose knee step is
/// missing, or whose knee cannot be trusted: `trust` is false when a step of its ramp did not
/// run to its end, and the ramp judged the knee on its figures), its step with the most IOPS
/// and false. `None` without a step.
pub(super) fn knee(sat: &Saturation, steps: &[Step], trust: bool) -> Option<(Step, bool)> {
    let knee_qd = sat.knee_qd.filter(|_| trust);
    if let Some(s) = knee_qd.and_then(|q| steps.iter().find(|s| s.qd == q)) {
        return Some((*s, true));
    }
    let best = steps.iter().max_by(|a, b| a.iops.total_cmp(&b.iops))?;
    Some((*best, false))
}

/// The curve at `depth` requests in flight (read at 1 at the least: the curve has no step
/// below one request), held against `need_iops`; `source` says where the depth came from.
/// Between two steps each figure is interpolated on log2 of the requests in flight (the steps
/// double); below the first step its latency stands and its IOPS and MB/s shrink with the
/// depth (Little's law); above the last, the last step stands.
pub(super) fn at_depth(steps: &[Step], depth: f64, need_iops: f64, source: &str) -> AtDepth {
    let d = if depth.is_finite() {
        depth.max(1.0)
    } else {
        1.0
    };
    let (first, last) = (steps[0], steps[steps.len() - 1]);
    let (iops, mb_s, p50, p99, outside) = if d < first.outstanding {
        let share = d / first.outstanding;
        (
            first.iops * share,
            first.mb_s * share,
            first.p50,
            first.p99,
            true,
        )
    } else if d > last.outstanding {
        (last.iops, last.mb_s, last.p50, last.p99, true)
    } else {
        let i = steps
            .windows(2)
            .position(|w| d <= w[1].outstanding)
            .unwrap_or(0);
        let (a, b) = (steps[i], *steps.get(i + 1).unwrap_or(&steps[i]));
        let span = b.outstanding.log2() - a.outstanding.log2();
        let t = if span > 0.0 {
            ((d.log2() - a.outstanding.log2()) / span).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let lerp = |x: f64, y: f64| x + (y - x) * t;
        let opt = |x: Option<f64>, y: Option<f64>| Some(lerp(x?, y?));
        (
            lerp(a.iops, b.iops),
            lerp(a.mb_s, b.mb_s),
            opt(a.p50, b.p50),
            opt(a.p99, b.p99),
            false,
        )
    };
    AtDepth {
        outstanding: (d.round() as u64).max(1),
        iops,
        lat_us_p50: p50,
        lat_us_p99: p99,
        iops_headroom: if need_iops > 0.0 {
            iops / need_iops
        } else {
            0.0
        },
        outside_curve: outside,
        depth: d,
        depth_source: source.into(),
        mb_s,
    }
}

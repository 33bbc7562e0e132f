//! A recorded workload placed on a storage's capacity curve (`iocap characterise TRACE
//! --against RUN`). The DBA's question before a move: "my production I/O on the new array: how
//! much room is left, and what runs out first?" A saturate run measured the curve; the trace
//! says what the workload asks at its busiest. Pure: both come in as model types.
//!
//! The rules (docs/capture.md, "Headroom", says them to users):
//! - Demand: a rate bucket's reads and writes per second, and its MB/s. Flushes and discards
//!   are not on a saturate curve and are left out of the IOPS. The busiest bucket and the
//!   99th-percentile bucket are taken per resource (a backup's MB/s peak need not be the IOPS
//!   peak's second).
//! - Supply: the knee's step, the last queue depth that still gained. A curve that never
//!   flattened offers its highest step instead, and every headroom is then a lower bound.
//! - Sizes: the workload's IOPS are held against the knee's IOPS and its MB/s against the knee's
//!   MB/s, each a resource of its own, and the lesser headroom stands. Where the workload's
//!   requests are larger than the curve's, that is scaling by bytes (the storage is assumed to
//!   move no more MB/s with larger requests than the curve showed); where they are smaller, it
//!   assumes no more IOPS than the curve's. Both err on the side of less headroom; the view
//!   says when the sizes differ.
//! - Latency at the workload's depth: the curve's IOPS and latency at the busiest bucket's own
//!   mean queue depth (a trace without per-bucket depths: the depth the device spent most of
//!   its busy time at), interpolated on log2 of the requests in flight between the steps, and
//!   read at 1 at the least. More load than that IOPS queues deeper than when recorded, and
//!   waits longer. The busiest second of a capture ran 5.4 deep where the trace's typical
//!   depth was 1: read at 1, the curve said 1.0×; at 5.4 it gives 4-6.5×.
//! - Streams (`workload.streams`): each alone on the same curve, its busiest second's demand
//!   against the knee and against the curve at its own busiest second's depth; a log at queue
//!   depth 1 whatever it recorded (its writer waits on each flush). A note says when the
//!   curve's workload is not the stream's (random reads against sequential durable writes):
//!   the curve cannot speak for it (`streams.rs`).
//! - A partial run (interrupted, or a step stopped by an I/O error): the steps that did not
//!   run to their end are left off the curve, a knee the ramp judged over such a step is not
//!   trusted (the highest whole step stands for it), and every headroom is a lower bound: "at
//!   least", and under 1 no verdict, never "falls behind". A curve that never flattened is
//!   judged the same way.

mod curve;
mod streams;
#[cfg(test)]
mod tests;

use iocap_model::request::Op;
use iocap_model::workload::{AtDepth, Headroom, Placement, Workload};
use iocap_model::{RunKind, RunResult, Saturation, StopCause};
use thiserror::Error;

use curve::Step;

/// Why a workload cannot be placed on a run's curve.
#[derive(Debug, Error, PartialEq)]
pub enum HeadroomError {
    #[error(
        "run {run_id} is {what}, which has no capacity curve: --against needs a `saturate` run \
         (or a `preflight`, which measures the same curve); `iocap history` lists them"
    )]
    NotACurve { run_id: String, what: String },
    #[error(
        "run {run_id}'s curve has no step that measured any I/O: there is no knee to hold the \
         workload against"
    )]
    EmptyCurve { run_id: String },
    #[error("the trace has no reads or writes: nothing to place on a capacity curve")]
    NoDataRequests,
    #[error(
        "run {run_id} was cut short ({why}) before any step of its curve ran to its end: \
         there is no curve to hold the workload against; a whole saturate run would tell"
    )]
    CutShort { run_id: String, why: String },
}

/// The run's capacity curve, or why it has none (what kind of run it is instead).
pub fn curve_of(run: &RunResult) -> Result<&Saturation, HeadroomError> {
    run.saturation
        .as_ref()
        .ok_or_else(|| HeadroomError::NotACurve {
            run_id: run.run_id.clone(),
            what: kind_words(run),
        })
}

/// What a run is, in words, for a refusal: ``a `run` run (tests at set queue depths)``.
fn kind_words(run: &RunResult) -> String {
    let what = match run.kind() {
        RunKind::Cachescan => "a cache scan",
        RunKind::Cost => "CPU per I/O over a matrix",
        RunKind::Fsync => "log-flush methods compared",
        RunKind::Scaleup => "volumes alone and together",
        RunKind::Verify => "an integrity check",
        RunKind::Suite => "a suite's tests",
        RunKind::Workload => "a recorded workload",
        RunKind::Replay => "a recorded workload replayed",
        RunKind::Test => "tests at set queue depths",
        RunKind::Preflight | RunKind::Saturation => "stopped before its curve",
    };
    match &run.command {
        Some(c) => format!("a `{c}` run ({what})"),
        None => format!("a run of {what}"),
    }
}

/// The workload `w` on the curve of `run` (a saturate run, or a preflight's read curve).
pub fn place(w: &Workload, run: &RunResult) -> Result<Headroom, HeadroomError> {
    let sat = curve_of(run)?;
    let partial = partial_words(run, sat);
    let steps = curve::steps(run, sat);
    if steps.is_empty() {
        return Err(match partial {
            Some(why) if sat.steps.iter().any(|p| curve::cut(run, p)) => HeadroomError::CutShort {
                run_id: run.run_id.clone(),
                why,
            },
            _ => HeadroomError::EmptyCurve {
                run_id: run.run_id.clone(),
            },
        });
    }
    let ramp_whole = !sat.steps.iter().any(|p| curve::cut(run, p));
    let (knee, knee_reached) =
        curve::knee(sat, &steps, ramp_whole).ok_or_else(|| HeadroomError::EmptyCurve {
            run_id: run.run_id.clone(),
        })?;
    let (iops, mb_s) = demand(w);
    let peak = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let Some(at_peak) = busiest_bucket(&iops) else {
        return Err(HeadroomError::NoDataRequests);
    };
    let busiest = placement(peak(&iops), peak(&mb_s), &knee);
    let p99_second = placement(p99(&iops), p99(&mb_s), &knee);
    let at_depth = w.queue_depth.as_ref().map(|q| {
        let own = q
            .per_second_mean
            .get(at_peak)
            .copied()
            .filter(|d| d.is_finite() && *d > 0.0);
        let (depth, source) = match own {
            Some(d) => (d, "busiest_second"),
            None => (q.typical.max(1) as f64, "typical"),
        };
        curve::at_depth(&steps, depth, busiest.iops, source)
    });
    let spec = sat
        .steps
        .iter()
        .find_map(|p| run.tests.get(p.test_idx as usize))
        .map(|t| &t.spec);
    let bs = spec.map_or_else(|| bytes_per_io(&knee), |s| s.bs_bytes);
    let workload_bs = commonest_size(w);
    let (limit, headroom) = first_to_run_out(&busiest, at_depth.as_ref());
    let lower_bound = !knee_reached || partial.is_some();
    let mut h = Headroom {
        against_run_id: run.run_id.clone(),
        curve_rw: spec.map_or("?".into(), |s| s.rw.name().to_string()),
        curve_bs_bytes: bs,
        curve_write_pct: spec.map_or(0, |s| s.rw.write_pct(s.write_pct)),
        workload_bs_bytes: workload_bs,
        workload_write_pct: write_pct(w),
        same_size: workload_bs == bs,
        knee_reached,
        knee_outstanding: knee.outstanding.round() as u32,
        knee_iops: knee.iops,
        knee_mb_s: knee.mb_s,
        knee_lat_us_p50: knee.p50,
        knee_lat_us_p99: knee.p99,
        busiest,
        p99_second,
        bucket_s: w.rate.bucket_s,
        at_depth,
        limit: limit.into(),
        headroom,
        notes: vec![],
        lower_bound,
        verdict: verdict(headroom, lower_bound).into(),
        partial_run: partial,
        streams: vec![],
    };
    let shape = spec.map(streams::CurveShape::of);
    h.streams = w
        .streams
        .iter()
        .map(|s| streams::place(s, &steps, &knee, shape.as_ref(), lower_bound))
        .collect();
    h.notes = notes(&h, w, sat, spec.map(|s| s.rw.is_random()));
    Ok(h)
}

/// The busiest bucket's index (the first of equals); `None` when no bucket has a read or write.
fn busiest_bucket(iops: &[f64]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &v) in iops.iter().enumerate() {
        if v > 0.0 && best.is_none_or(|b| v > iops[b]) {
            best = Some(i);
        }
    }
    best
}

/// The verdict on a headroom: `fits`, `at_least` (a lower bound of 1 or more), `falls_behind`,
/// or `none` (a lower bound under 1 says nothing).
pub(crate) fn verdict(headroom: f64, lower_bound: bool) -> &'static str {
    match (headroom >= 1.0, lower_bound) {
        (true, false) => "fits",
        (true, true) => "at_least",
        (false, false) => "falls_behind",
        (false, true) => "none",
    }
}

/// Why the run's figures cover only part of its curve, in words; `None` for a whole run.
fn partial_words(run: &RunResult, sat: &Saturation) -> Option<String> {
    let c = run.cut_short()?;
    let step = |f: &dyn Fn(&iocap_model::TestResult) -> bool| {
        sat.steps.iter().find_map(|p| {
            let t = run.tests.get(p.test_idx as usize)?;
            f(t).then_some((p.qd, t))
        })
    };
    if let Some((qd, t)) = step(&|t| t.error.is_some()) {
        let e = t.error.as_ref().expect("found by its error");
        return Some(format!(
            "its step at qd {qd} stopped on an I/O error: {} failed: {}",
            e.op, e.message
        ));
    }
    let cause = match &c.cause {
        StopCause::Signal(s) if s == "stop" => "interrupted".to_string(),
        StopCause::Signal(s) if s == "SIGINT" || s == "CTRL_C_EVENT" => {
            format!("interrupted by {s} (Ctrl-C)")
        }
        StopCause::Signal(s) => format!("interrupted by {s}"),
        StopCause::IoError => "stopped by an I/O error".into(),
        StopCause::Unknown => "interrupted".into(),
    };
    Some(match step(&|t| t.interrupted) {
        Some((qd, _)) => format!("{cause} during its step at qd {qd}"),
        None => cause,
    })
}

/// Each bucket's reads and writes per second, and its MB/s. A last bucket that covers less
/// than half its width is left out: its rate is a few requests over a sliver of time.
fn demand(w: &Workload) -> (Vec<f64>, Vec<f64>) {
    let s = &w.rate.per_second;
    let width = w.rate.bucket_s;
    let last_covers = w.duration_s - (s.len().max(1) - 1) as f64 * width;
    let s = if s.len() > 1 && width > 0.0 && last_covers < width / 2.0 {
        &s[..s.len() - 1]
    } else {
        &s[..]
    };
    let ok = |v: f64| if v.is_finite() { v.max(0.0) } else { 0.0 };
    (
        s.iter().map(|p| ok(p.read_iops + p.write_iops)).collect(),
        s.iter().map(|p| ok(p.mb_s)).collect(),
    )
}

/// The 99th-percentile bucket, by the rank the rate's own `iops_p99` uses.
fn p99(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let i = ((s.len() as f64 * 0.99).ceil() as usize).saturating_sub(1);
    s.get(i).copied().unwrap_or(0.0)
}

fn ratio(supply: f64, need: f64) -> Option<f64> {
    (need > 0.0 && supply.is_finite()).then(|| supply / need)
}

fn placement(iops: f64, mb_s: f64, knee: &Step) -> Placement {
    Placement {
        iops,
        mb_s,
        iops_headroom: ratio(knee.iops, iops),
        mb_s_headroom: ratio(knee.mb_s, mb_s),
    }
}

/// The resource with the least headroom at the busiest bucket: `iops`, `mb_s` or `latency`
/// (on a tie, the first of these; a measured MB/s is the IOPS times the size only to within
/// rounding, so a tie is within a billionth).
fn first_to_run_out(busiest: &Placement, at: Option<&AtDepth>) -> (&'static str, f64) {
    least([
        ("iops", busiest.iops_headroom),
        ("mb_s", busiest.mb_s_headroom),
        ("latency", at.map(|a| a.iops_headroom)),
    ])
    .unwrap_or(("iops", 0.0))
}

/// The least of the headrooms there are, by the rule of [`first_to_run_out`].
pub(crate) fn least(
    v: impl IntoIterator<Item = (&'static str, Option<f64>)>,
) -> Option<(&'static str, f64)> {
    v.into_iter()
        .filter_map(|(name, h)| h.map(|h| (name, h)))
        .reduce(|a, b| if b.1 < a.1 * (1.0 - 1e-9) { b } else { a })
}

/// The curve's bytes per request, where the run's tests are not there to say.
fn bytes_per_io(knee: &Step) -> u64 {
    (knee.mb_s * 1e6 / knee.iops).round() as u64
}

/// The workload's commonest read or write size (the smaller on a tie); where the sizes are not
/// known, the mean bytes per read or write.
fn commonest_size(w: &Workload) -> u64 {
    let mut by: Vec<(u64, u64)> = vec![];
    for s in w
        .sizes
        .iter()
        .filter(|s| s.op.moves_data() && s.size_bytes > 0)
    {
        match by.iter_mut().find(|e| e.0 == s.size_bytes) {
            Some(e) => e.1 += s.count,
            None => by.push((s.size_bytes, s.count)),
        }
    }
    let commonest = by
        .into_iter()
        .max_by_key(|&(size, n)| (n, std::cmp::Reverse(size)));
    commonest.map_or_else(
        || {
            let (n, b) = w
                .mix
                .iter()
                .filter(|m| m.op.moves_data())
                .fold((0, 0), |(n, b), m| (n + m.count, b + m.bytes));
            b / n.max(1)
        },
        |e| e.0,
    )
}

/// Writes among the reads and writes, in percent.
fn write_pct(w: &Workload) -> f64 {
    let n = |op: Op| {
        w.mix
            .iter()
            .filter(|m| m.op == op)
            .map(|m| m.count)
            .sum::<u64>()
    };
    let (r, wr) = (n(Op::Read), n(Op::Write));
    if r + wr == 0 {
        0.0
    } else {
        wr as f64 * 100.0 / (r + wr) as f64
    }
}

/// What the comparison cannot see, each in one sentence.
fn notes(h: &Headroom, w: &Workload, sat: &Saturation, curve_random: Option<bool>) -> Vec<String> {
    let mut n = vec![];
    let size = iocap_model::format_bytes;
    if !h.same_size && h.curve_bs_bytes > 0 && h.workload_bs_bytes > 0 {
        n.push(format!(
            "the curve measured {} requests, the workload's commonest are {}: compared across \
             sizes, IOPS against IOPS and MB/s against MB/s, the lesser headroom standing",
            size(h.curve_bs_bytes),
            size(h.workload_bs_bytes)
        ));
    }
    if let Some(why) = &h.partial_run {
        n.push(format!(
            "run {} was cut short ({why}): the steps that did not run to their end are left \
             off its curve, which may stop short of the storage's knee, so each headroom is a \
             lower bound, and one under 1 is no verdict (a whole saturate run would tell)",
            h.against_run_id
        ));
    } else if !h.knee_reached {
        n.push(format!(
            "the curve never flattened ({}): its highest step stands for the knee, and each \
             headroom is a lower bound",
            sat.stop_reason.trim_end_matches('.')
        ));
    }
    if (h.workload_write_pct - f64::from(h.curve_write_pct)).abs() >= 20.0 {
        n.push(format!(
            "the curve wrote {} % of its requests, the workload {:.0} %: writes may cost this \
             storage more or less than reads (saturate --rw randrw --write-pct {:.0} measures \
             the mix)",
            h.curve_write_pct, h.workload_write_pct, h.workload_write_pct
        ));
    }
    let workload_random = w.randomness.sequential_pct < 50.0;
    if curve_random.is_some_and(|c| c != workload_random) {
        let word = |r: bool| if r { "random" } else { "sequential" };
        n.push(format!(
            "the curve is {}, the workload mostly {}",
            word(!workload_random),
            word(workload_random)
        ));
    }
    if !w.has_completions {
        n.push(
            "the trace has no completion times: its queue depth, and the latency there, are not \
             known"
                .into(),
        );
    }
    if let Some(a) = &h.at_depth {
        if a.depth > f64::from(h.knee_outstanding) && h.knee_reached {
            n.push(format!(
                "the workload ran at {} in flight, past the knee's {}: its requests queue in \
                 the storage, and the curve's latency there is past the knee's",
                depth_words(a.depth),
                h.knee_outstanding
            ));
        }
    }
    n
}

/// A depth as the view says it: `5.4`, or `4` for a whole number.
pub(crate) fn depth_words(d: f64) -> String {
    if (d - d.round()).abs() < 0.05 {
        format!("{:.0}", d.round())
    } else {
        format!("{d:.1}")
    }
}

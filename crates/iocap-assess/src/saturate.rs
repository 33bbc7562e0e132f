//! The saturation knee: raise the outstanding I/O 1, 2, 4, ... until latency climbs while
//! throughput stays flat. Practitioners read that knee off a chart by eye; `iocap saturate`
//! has to decide it after every step, on noisy measurements, without overshooting into queue
//! depths that only add latency.
//!
//! The rule, with the defaults of [`SaturateConfig`]:
//! - A step is *flat* when its IOPS did not really beat the best IOPS of all earlier steps
//!   **and** its p99 latency (p50 if p99 is missing) rose over the previous step. A real gain is
//!   at least `min_gain_pct` (5 %) **and** beyond the noise: Welch's test of the two steps'
//!   per-second IOPS (over batch means, as `compare` does) gives p < 0.05. On a shared disk
//!   whose seconds swing by ±30 %, 5 % alone is inside the noise, and a lucky step would push
//!   the knee up. Steps without a per-second series (fewer than three seconds, or saved before
//!   it was kept) are judged by the 5 % alone. Comparing with the best so far, not only the
//!   previous step, keeps a single dip from making the next step look like a fresh gain.
//! - With `confirm_flat` (default on) the knee needs two flat steps in a row; one flat step
//!   followed by a real gain was noise. The knee is the qd of the last step before the first
//!   flat one: the last qd that still gained.
//! - The steps also stop when p99 reaches `lat_ceiling_us`, when the next doubling would pass
//!   `max_qd` (256), or when a step measured no I/O. If the step that hit the ceiling or the
//!   largest qd was flat, that stands as the knee unconfirmed: there is no further step to
//!   confirm it with.

use iocap_model::{CurvePoint, Saturation};

use crate::fmt;

/// When to stop raising the queue depth, and the latency target of the capacity figure.
#[derive(Debug, Clone, PartialEq)]
pub struct SaturateConfig {
    /// Gain per doubling below which throughput counts as flat, in percent (default 5).
    pub min_gain_pct: f64,
    /// The largest queue depth to try (default 256).
    pub max_qd: u32,
    /// Stop once p99 reaches this, in microseconds.
    pub lat_ceiling_us: Option<f64>,
    /// The p99 target for [`Saturation::capacity_iops_at_target`], in microseconds.
    pub latency_target_us: Option<f64>,
    /// Require two flat steps in a row before calling the knee (default true).
    pub confirm_flat: bool,
}

impl Default for SaturateConfig {
    fn default() -> Self {
        Self {
            min_gain_pct: 5.0,
            max_qd: 256,
            lat_ceiling_us: None,
            latency_target_us: None,
            confirm_flat: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// Throughput flattened while latency kept rising.
    Knee,
    /// p99 reached the ceiling.
    LatencyCeiling,
    /// The next doubling would pass `max_qd`.
    MaxQd,
    /// The last step completed no I/O (an error, or a device that stopped answering).
    NoIo,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepDecision {
    /// Measure the next step at this queue depth.
    Continue { qd: u32 },
    Stop {
        reason: StopReason,
        /// The last qd that still gained, if the steps flattened.
        knee_qd: Option<u32>,
    },
}

fn ok(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

fn latency(p: &CurvePoint) -> Option<f64> {
    p.lat_us_p99.or(p.lat_us_p50).filter(|v| v.is_finite())
}

/// Gain of step `i` over the best IOPS of the steps before it, in percent, and that best step;
/// `None` for the first step or when no earlier step measured anything.
fn gain_over_best(steps: &[CurvePoint], i: usize) -> Option<(f64, &CurvePoint)> {
    if i == 0 {
        return None;
    }
    let best = steps[..i]
        .iter()
        .filter(|p| ok(p.iops))
        .max_by(|a, b| a.iops.total_cmp(&b.iops))?;
    let cur = if steps[i].iops.is_finite() {
        steps[i].iops
    } else {
        0.0
    };
    Some(((cur / best.iops - 1.0) * 100.0, best))
}

fn gain_pct(steps: &[CurvePoint], i: usize) -> Option<f64> {
    gain_over_best(steps, i).map(|(g, _)| g)
}

/// Whether the difference between two steps' IOPS is beyond their noise; true (the threshold
/// alone decides) when either has no per-second series to test.
fn beyond_noise(a: &CurvePoint, b: &CurvePoint) -> bool {
    iocap_stats::welch_batch_means(&a.per_second_iops, &b.per_second_iops)
        .is_none_or(|w| w.p_value < GAIN_P)
}

/// The p-value below which a step's gain is beyond the noise.
pub const GAIN_P: f64 = 0.05;

fn is_flat(steps: &[CurvePoint], i: usize, cfg: &SaturateConfig) -> bool {
    let Some((gain, best)) = gain_over_best(steps, i) else {
        return false;
    };
    // Without latencies to compare, throughput alone decides.
    let rose = match (latency(&steps[i - 1]), latency(&steps[i])) {
        (Some(a), Some(b)) => b > a,
        _ => true,
    };
    let gained = gain >= cfg.min_gain_pct && beyond_noise(best, &steps[i]);
    !gained && rose
}

/// The queue-depth ramp that `saturate` and `preflight` share: `step(qd)` measures one step and
/// says whether the run must stop there (an error, Ctrl-C); after each, [`next_step`] picks the
/// next queue depth (1, 2, 4, ...) or ends the ramp. Returns the steps measured.
pub fn ramp<E>(
    cfg: &SaturateConfig,
    mut step: impl FnMut(u32) -> Result<(CurvePoint, bool), E>,
) -> Result<Vec<CurvePoint>, E> {
    let mut steps = Vec::new();
    let mut qd = 1;
    loop {
        let (p, stop) = step(qd)?;
        steps.push(p);
        if stop {
            return Ok(steps);
        }
        match next_step(&steps, cfg) {
            StepDecision::Continue { qd: n } => qd = n,
            StepDecision::Stop { .. } => return Ok(steps),
        }
    }
}

/// After each measured step: the next queue depth, or why to stop.
pub fn next_step(steps: &[CurvePoint], cfg: &SaturateConfig) -> StepDecision {
    let Some(last) = steps.last() else {
        return StepDecision::Continue { qd: 1 };
    };
    let k = steps.len() - 1;
    if !ok(last.iops) {
        return StepDecision::Stop {
            reason: StopReason::NoIo,
            knee_qd: None,
        };
    }
    let flat = is_flat(steps, k, cfg);
    let knee_if_flat = if flat { Some(steps[k - 1].qd) } else { None };
    if flat && (!cfg.confirm_flat || (k >= 2 && is_flat(steps, k - 1, cfg))) {
        let first_flat = if cfg.confirm_flat { k - 1 } else { k };
        return StepDecision::Stop {
            reason: StopReason::Knee,
            knee_qd: Some(steps[first_flat - 1].qd),
        };
    }
    if let (Some(ceiling), Some(p99)) = (cfg.lat_ceiling_us, last.lat_us_p99) {
        if p99 >= ceiling {
            return StepDecision::Stop {
                reason: StopReason::LatencyCeiling,
                knee_qd: knee_if_flat,
            };
        }
    }
    let next = last.qd.saturating_mul(2).max(1);
    if last.qd >= cfg.max_qd || next > cfg.max_qd {
        return StepDecision::Stop {
            reason: StopReason::MaxQd,
            knee_qd: knee_if_flat,
        };
    }
    StepDecision::Continue { qd: next }
}

/// The gain of the last step over the best before it, in percent: positive and at least
/// `min_gain_pct` means the curve was still rising when the steps ended.
pub fn last_gain_pct(steps: &[CurvePoint]) -> Option<f64> {
    if steps.is_empty() {
        return None;
    }
    gain_pct(steps, steps.len() - 1)
}

/// The point with the most IOPS whose p99 is at or under `limit_us`; the first such on a tie.
pub fn best_under<'a>(
    points: impl IntoIterator<Item = &'a CurvePoint>,
    limit_us: f64,
) -> Option<&'a CurvePoint> {
    let mut best: Option<&CurvePoint> = None;
    for p in points {
        let under = p.lat_us_p99.is_some_and(|l| l.is_finite() && l <= limit_us);
        if under && ok(p.iops) && best.is_none_or(|b| p.iops > b.iops) {
            best = Some(p);
        }
    }
    best
}

/// The whole curve in one record: maximum, knee, capacity at the target, and why it stopped.
pub fn summarize(
    steps: &[CurvePoint],
    throttled: &[CurvePoint],
    cfg: &SaturateConfig,
) -> Saturation {
    let mut stop = None;
    for k in 1..=steps.len() {
        if let StepDecision::Stop { reason, knee_qd } = next_step(&steps[..k], cfg) {
            stop = Some((reason, knee_qd, k - 1));
            break;
        }
    }
    let all = || steps.iter().chain(throttled);
    let finite_max = |f: fn(&CurvePoint) -> f64| {
        all()
            .map(f)
            .filter(|v| v.is_finite())
            .fold(0.0_f64, f64::max)
    };
    let capacity = cfg.latency_target_us.and_then(|t| best_under(all(), t));
    Saturation {
        steps: steps.to_vec(),
        throttled: throttled.to_vec(),
        knee_qd: stop.and_then(|s| s.1),
        stop_reason: describe(steps, stop, cfg),
        max_iops: finite_max(|p| p.iops),
        max_mb_s: finite_max(|p| p.mb_s),
        min_gain_pct: cfg.min_gain_pct,
        lat_ceiling_us: cfg.lat_ceiling_us,
        latency_target_us: cfg.latency_target_us,
        capacity_iops_at_target: capacity.map(|p| p.iops),
        capacity_qd_at_target: capacity.map(|p| p.qd),
        size_sweep: Vec::new(),
        limit: None,
        drops: Vec::new(),
        bucket: None,
    }
}

fn describe(
    steps: &[CurvePoint],
    stop: Option<(StopReason, Option<u32>, usize)>,
    cfg: &SaturateConfig,
) -> String {
    let gain = fmt::pct(cfg.min_gain_pct);
    let Some((reason, knee, at)) = stop else {
        return match steps.last() {
            None => "no steps were measured".into(),
            Some(p) => format!("the steps ended at qd {} before throughput flattened", p.qd),
        };
    };
    let p = &steps[at];
    let knee_words = |k: Option<u32>| match k {
        Some(q) => format!(" (throughput had stopped gaining past qd {q})"),
        None => String::new(),
    };
    match reason {
        StopReason::Knee => {
            let q = knee.unwrap_or(p.qd);
            let at_knee = steps.iter().find(|s| s.qd == q).map_or(p.iops, |s| s.iops);
            format!(
                "throughput gained less than {gain} per doubling past qd {q} ({} IOPS) while \
                    p99 latency kept rising",
                fmt::count(at_knee)
            )
        }
        StopReason::LatencyCeiling => format!(
            "p99 latency reached {} at qd {}, at or above the {} ceiling{}",
            fmt::ms(p.lat_us_p99.unwrap_or(f64::NAN)),
            p.qd,
            fmt::ms(cfg.lat_ceiling_us.unwrap_or(f64::NAN)),
            knee_words(knee)
        ),
        StopReason::MaxQd => match knee {
            Some(_) => format!(
                "reached the largest queue depth, {}{}",
                cfg.max_qd,
                knee_words(knee)
            ),
            None => format!(
                "reached the largest queue depth, {}, with throughput still gaining {gain} or more",
                cfg.max_qd
            ),
        },
        StopReason::NoIo => format!("the step at qd {} measured no I/O", p.qd),
    }
}

/// The throttled loads to measure once the maximum is known: 10, 50, 70, 80, 90 and 100 % of
/// `max_iops`, as (load in percent, I/O rate). Empty when the maximum is not a positive number.
pub fn throttle_points(max_iops: f64) -> Vec<(f64, f64)> {
    if !ok(max_iops) {
        return Vec::new();
    }
    [10.0, 50.0, 70.0, 80.0, 90.0, 100.0]
        .into_iter()
        .map(|pct| (pct, max_iops * pct / 100.0))
        .collect()
}

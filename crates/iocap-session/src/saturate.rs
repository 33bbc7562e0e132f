//! Saturate: raise the outstanding I/O step by step (1, 2, 4, ...) until throughput stops rising
//! while latency keeps climbing (the knee), or latency passes a ceiling; then run throttled
//! points at 10 to 100 % of the maximum for a load–latency curve.

use anyhow::Result;
use iocap_assess::{ramp, summarize, throttle_points, SaturateConfig};
use iocap_model::Payload;
use iocap_model::{format_bytes, CurvePoint, JobSpec};

use crate::session::Session;

/// What a saturate session measures: the base spec (the queue depth is set per step) and the
/// rules.
pub struct SaturateSpec {
    pub base: JobSpec,
    pub cfg: SaturateConfig,
    /// Run the throttled points after the ramp.
    pub throttled: bool,
}

/// Runs one point (`--repeat` times), adds its tests to the run and returns the point, taken
/// from the median run.
fn measure(s: &mut Session, spec: &JobSpec, qd: u32, load: Option<f64>) -> Result<CurvePoint> {
    let label = match load {
        Some(_) => format!("{}, throttled point", spec.name),
        None => format!(
            "{}, step {}",
            spec.name,
            s.run.tests.len() / s.repeat as usize + 1
        ),
    };
    s.exec.label(&label);
    let at = s.measure(&[(None, spec.clone())], None)?[0];
    let p = CurvePoint::of(at, qd, load, &s.run.tests[at as usize]);
    let p99 = p
        .lat_us_p99
        .map_or_else(|| "-".into(), iocap_model::figures::lat_us);
    s.exec.say(&format!(
        "{}: {} IOPS, {:.1} MB/s, p99 {p99}",
        spec.name,
        iocap_model::figures::count(p.iops),
        p.mb_s,
    ));
    Ok(p)
}

/// The ramp, then the throttled points, into the session's run: the knee and the curve in
/// `run.saturation`.
pub fn saturate(s: &mut Session, sat: &SaturateSpec) -> Result<()> {
    let base = &sat.base;
    let what = format!("{} {}", base.rw.name(), format_bytes(base.bs_bytes));
    let steps = ramp(&sat.cfg, |qd| {
        let spec = JobSpec {
            name: format!("{what} qd {qd}"),
            qd,
            ..base.clone()
        };
        let p = measure(s, &spec, qd, None)?;
        anyhow::Ok((p, s.stopped()))
    })?;
    let mut throttled = Vec::new();
    let best = steps
        .iter()
        .filter(|p| p.iops.is_finite())
        .max_by(|x, y| x.iops.total_cmp(&y.iops))
        .cloned();
    if let (true, false, Some(best)) = (sat.throttled, s.stopped(), best) {
        for (pct, rate) in throttle_points(best.iops) {
            let spec = JobSpec {
                name: format!("{what} qd {} at {pct:.0} %", best.qd),
                qd: best.qd,
                rate_iops: Some(rate),
                ..base.clone()
            };
            throttled.push(measure(s, &spec, best.qd, Some(pct))?);
            if s.stopped() {
                break;
            }
        }
    }
    s.check_classes();
    s.run
        .set(Payload::Saturation(summarize(&steps, &throttled, &sat.cfg)));
    Ok(())
}

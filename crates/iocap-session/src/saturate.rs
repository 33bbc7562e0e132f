//! Saturate: raise the outstanding I/O step by step (1, 2, 4, ...) until throughput stops rising
//! while latency keeps climbing (the knee), or latency passes a ceiling; then run throttled
//! points at 10 to 100 % of the maximum for a load–latency curve, and a sweep over block sizes
//! at the depth of the highest IOPS, to tell a cap from the device's own limit. Where the block
//! layer can be recorded, one more test at that depth and the run's block size times the
//! device's own part of each request, so a cap held above the driver (blk-throttle) is told
//! from one in or below it.

use anyhow::Result;
use iocap_assess::limit::sweep_step;
use iocap_assess::{
    judge_limit, ramp, summarize, throttle_points, DeviceTime, DriverTime, SaturateConfig,
};
use iocap_model::Payload;
use iocap_model::{format_bytes, CurvePoint, JobSpec, SizePoint, TestResult};

use crate::session::Session;

/// What a saturate session measures: the base spec (the queue depth is set per step) and the
/// rules.
pub struct SaturateSpec {
    pub base: JobSpec,
    pub cfg: SaturateConfig,
    /// Run the throttled points after the ramp.
    pub throttled: bool,
    /// The block sizes of the sweep, at the deepest step near the highest IOPS
    /// (`iocap_assess::limit::sweep_step`; the base size's point is that step); empty to skip
    /// it.
    pub sizes: Vec<u64>,
    /// Measure a burst bucket before the steps (`--bucket`), so the steps meet the baseline.
    pub bucket: Option<crate::BucketSpec>,
    /// Time the device's own part of each request after the sweep, where the executor can
    /// record the block layer (`false`: `--no-device-time`).
    pub device_time: bool,
}

impl SaturateSpec {
    /// Refuses a base workload that cannot run, a bad `--max-qd`, sizes the base workload
    /// cannot run at, and a bucket's bad depth or pauses, naming the flag.
    pub fn check(&self) -> Result<()> {
        self.base.validate()?;
        if self.cfg.max_qd == 0 || self.cfg.max_qd > iocap_model::MAX_QD {
            anyhow::bail!("--max-qd must be 1 to {}", iocap_model::MAX_QD);
        }
        for &bs in &self.sizes {
            let at = JobSpec {
                bs_bytes: bs,
                align_bytes: bs,
                ..self.base.clone()
            };
            at.validate()
                .map_err(|e| anyhow::anyhow!("--sizes {}: {e}", format_bytes(bs)))?;
        }
        if let Some(b) = &self.bucket {
            if b.qd == 0 || b.qd > iocap_model::MAX_QD {
                anyhow::bail!("--bucket-qd must be 1 to {}", iocap_model::MAX_QD);
            }
            if b.max_s.is_nan() || b.max_s < b.chunk_s {
                anyhow::bail!("--bucket-max must be at least {} s", b.chunk_s);
            }
            if b.idle_s.iter().any(|s| s.is_nan() || *s <= 0.0) {
                anyhow::bail!("--refill pauses must be longer than 0 s");
            }
        }
        Ok(())
    }
}

/// Runs one point (`--repeat` times) under `label`, adds its tests to the run and returns the
/// point, taken from the median run.
fn measure(
    s: &mut Session,
    spec: &JobSpec,
    qd: u32,
    load: Option<f64>,
    label: String,
) -> Result<CurvePoint> {
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

/// The burst bucket (`--bucket`), the ramp, the throttled points and the sweep over sizes,
/// into the session's run: the bucket, the knee, the curve, the limit and any drop in
/// `run.saturation`. Ctrl-C during the bucket keeps what it measured and runs no step.
pub fn saturate(s: &mut Session, sat: &SaturateSpec) -> Result<()> {
    let base = &sat.base;
    let bucket = match &sat.bucket {
        Some(b) => Some(crate::measure_bucket(s, base, b)?),
        None => None,
    };
    if s.stopped() {
        s.run.set(Payload::Saturation(iocap_model::Saturation {
            bucket,
            ..summarize(&[], &[], &sat.cfg)
        }));
        return Ok(());
    }
    let first_step = s.run.tests.len();
    let what = format!("{} {}", base.rw.name(), format_bytes(base.bs_bytes));
    let steps = ramp(&sat.cfg, |qd| {
        let spec = JobSpec {
            name: format!("{what} qd {qd}"),
            qd,
            ..base.clone()
        };
        let label = format!("{}, step {}", spec.name, qd.trailing_zeros() + 1);
        let p = measure(s, &spec, qd, None, label)?;
        anyhow::Ok((p, s.stopped()))
    })?;
    let mut throttled = Vec::new();
    let best = best_step(&steps);
    if let (true, false, Some(best)) = (sat.throttled, s.stopped(), best) {
        for (pct, rate) in throttle_points(best.iops) {
            let spec = JobSpec {
                name: format!("{what} qd {} at {pct:.0} %", best.qd),
                qd: best.qd,
                rate_iops: Some(rate),
                ..base.clone()
            };
            let label = format!("{}, throttled point", spec.name);
            throttled.push(measure(s, &spec, best.qd, Some(pct), label)?);
            if s.stopped() {
                break;
            }
        }
    }
    let mut summary = summarize(&steps, &throttled, &sat.cfg);
    let sweeping = !sat.sizes.is_empty() && !s.stopped();
    if let (true, Some(at)) = (sweeping, sweep_step(&steps).cloned()) {
        summary.size_sweep = sweep(s, sat, &at)?;
        let unmeasured = DriverTime::NotMeasured(String::new());
        if judge_limit(&summary.size_sweep, summary.max_iops, &unmeasured).is_some() {
            let driver = device_time(s, sat, at.qd)?;
            summary.limit = judge_limit(&summary.size_sweep, summary.max_iops, &driver);
        }
    }
    // the bucket's own drain is not a step that a burst ran out in
    summary.drops = iocap_assess::burst::drops(&s.run.tests[first_step..]);
    for d in &mut summary.drops {
        d.test_idx += first_step as u32;
    }
    summary.bucket = bucket;
    s.check_classes();
    s.run.set(Payload::Saturation(summary));
    Ok(())
}

fn best_step(steps: &[CurvePoint]) -> Option<CurvePoint> {
    steps
        .iter()
        .filter(|p| p.iops.is_finite())
        .max_by(|x, y| x.iops.total_cmp(&y.iops))
        .cloned()
}

/// A sweep point from test `test_idx` of a spec.
fn size_point(test_idx: u32, spec: &JobSpec, t: &TestResult) -> SizePoint {
    let lat = t.total.lat_us.as_ref();
    SizePoint {
        test_idx,
        bs_bytes: spec.bs_bytes,
        qd: spec.qd,
        outstanding: spec.qd * spec.threads * spec.targets.len().max(1) as u32,
        iops: t.total.iops,
        mb_s: t.total.mb_s,
        lat_us_mean: lat.map(|l| l.mean),
        lat_us_p50: lat.map(|l| l.p50),
        lat_us_p99: lat.map(|l| l.p99),
        per_second_iops: t.per_second.iter().map(|s| s.iops).collect(),
    }
}

/// The sweep over `sat.sizes` at `best`'s depth, with `best` itself as the base size's point;
/// stops early on Ctrl-C.
fn sweep(s: &mut Session, sat: &SaturateSpec, best: &CurvePoint) -> Result<Vec<SizePoint>> {
    let base = JobSpec {
        qd: best.qd,
        ..sat.base.clone()
    };
    let mut points = vec![size_point(
        best.test_idx,
        &base,
        &s.run.tests[best.test_idx as usize],
    )];
    for &bs in sat.sizes.iter().filter(|&&b| b != base.bs_bytes) {
        let spec = JobSpec {
            name: format!("{} {} qd {}", base.rw.name(), format_bytes(bs), best.qd),
            bs_bytes: bs,
            align_bytes: bs,
            ..base.clone()
        };
        let label = format!("{}, size sweep", spec.name);
        let at = measure(s, &spec, best.qd, None, label)?.test_idx;
        points.push(size_point(at, &spec, &s.run.tests[at as usize]));
        if s.stopped() {
            break;
        }
    }
    points.sort_by_key(|p| p.bs_bytes);
    Ok(points)
}

/// The device's own time per request beside iocap's: one test at `qd` and the run's block
/// size with the block layer recorded, added to the run; why not, where it cannot run (said
/// once, and saturate carries on).
fn device_time(s: &mut Session, sat: &SaturateSpec, qd: u32) -> Result<DriverTime> {
    if !sat.device_time {
        return Ok(DriverTime::NotMeasured("skipped (--no-device-time)".into()));
    }
    if s.stopped() {
        return Ok(DriverTime::NotMeasured(String::new()));
    }
    let base = &sat.base;
    let spec = JobSpec {
        name: format!(
            "{} {} qd {qd}, device time",
            base.rw.name(),
            format_bytes(base.bs_bytes)
        ),
        qd,
        ..base.clone()
    };
    s.exec.label(&spec.name);
    let timed = match s.exec.device_times() {
        None => {
            return not_measured(
                s,
                "the tests run on several hosts: the block layer is recorded on one".into(),
            )
        }
        Some(d) => d.timed_run(&spec),
    };
    // a test that could not start is said, as a capture that could not: saturate carries on
    let run = match timed {
        Ok(Ok(run)) => run,
        Ok(Err(why)) => return not_measured(s, why),
        Err(e) => return not_measured(s, format!("{e:#}")),
    };
    let test_idx = s.run.tests.len() as u32;
    let ios = run.result.total.ios;
    let iocap = run.result.total.lat_us.as_ref().map(|l| l.mean);
    let complete = run.result.error.is_none() && !run.result.interrupted;
    s.run.tests.push(run.result);
    let (device_us_mean, iocap_us_mean) = match (run.device_us_mean, iocap) {
        _ if !complete => return not_measured(s, format!("{} did not finish", spec.name)),
        (None, _) => return not_measured(s, "no request of the test reached the device".into()),
        (_, None) => return not_measured(s, format!("{} measured no latency", spec.name)),
        (Some(d), Some(i)) => (d, i),
    };
    s.exec.say(&format!(
        "{}: {} per request in the device, {} in iocap",
        spec.name,
        iocap_model::figures::lat_us(device_us_mean),
        iocap_model::figures::lat_us(iocap_us_mean),
    ));
    Ok(DriverTime::Measured(DeviceTime {
        test_idx,
        requests: run.requests,
        iocap_ios: ios,
        device_us_mean,
        iocap_us_mean,
    }))
}

/// Why the device's own time was not measured, said as progress and kept for the evidence.
fn not_measured(s: &mut Session, why: String) -> Result<DriverTime> {
    s.exec
        .say(&format!("the device's own time was not measured: {why}"));
    Ok(DriverTime::NotMeasured(why))
}

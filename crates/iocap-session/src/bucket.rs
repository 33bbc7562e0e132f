//! `saturate --bucket`: a cloud volume's burst bucket measured before the steps. The drain runs
//! at full speed in short tests back to back (so the drop is looked for as the seconds come)
//! until the rate has fallen and held the lower level (`iocap_assess::bucket::drained`), or
//! until the time limit; each refill probe then idles and runs again until it is back at the
//! baseline. The steps after it run against the baseline, with the bucket spent: the knee and
//! capacity a plan can rest on.

use anyhow::Result;
use iocap_assess::bucket::{back_at_baseline, bucket, drained};
use iocap_model::{format_bytes, BurstBucket, JobSpec};

use crate::session::Session;

/// Seconds of each test of the drain and the probes: short, so the drain stops soon after the
/// rate settles, and the gaps between tests (milliseconds) give the bucket almost nothing back.
pub const BUCKET_CHUNK_S: f64 = 5.0;

/// How the bucket is measured.
#[derive(Debug, Clone, PartialEq)]
pub struct BucketSpec {
    /// Outstanding I/Os per thread per target of the drain and the probes.
    pub qd: u32,
    /// Seconds of each test of the drain and the probes.
    pub chunk_s: f64,
    /// The longest the drain runs, in seconds.
    pub max_s: f64,
    /// The idle pauses of the refill probes, in seconds, in order.
    pub idle_s: Vec<f64>,
}

/// Runs tests of `chunk_s` one after another until `done` says the series is finished, at most
/// `max_s` seconds; their per-second IOPS in order (each test's own seconds).
fn run_until(
    s: &mut Session,
    spec: &JobSpec,
    max_s: f64,
    done: impl Fn(&[f64]) -> bool,
) -> Result<Vec<f64>> {
    let mut series = Vec::new();
    while (series.len() as f64) < max_s && !s.stopped() {
        s.exec.label(&spec.name);
        let had = series.len();
        s.exec
            .run(std::slice::from_ref(spec))?
            .into_iter()
            .for_each(|t| {
                series.extend(t.per_second.iter().map(|p| p.iops));
                s.run.tests.push(t);
            });
        // a test that gave no seconds (it measured nothing) would loop for ever
        if done(&series) || series.len() == had {
            break;
        }
    }
    Ok(series)
}

/// The bucket under `base`'s workload: the drain, then a probe per idle pause.
pub fn measure_bucket(s: &mut Session, base: &JobSpec, b: &BucketSpec) -> Result<BurstBucket> {
    let spec = JobSpec {
        name: format!(
            "{} {} qd {}, bucket",
            base.rw.name(),
            format_bytes(base.bs_bytes),
            b.qd
        ),
        qd: b.qd,
        duration_s: b.chunk_s,
        warmup_s: 0.0,
        ..base.clone()
    };
    s.exec
        .say("draining the burst bucket: full speed until the rate falls and holds");
    let drain = run_until(s, &spec, b.max_s, |x| drained(x).is_some())?;
    let baseline = drained(&drain).map(|d| d.after_iops);
    let mut probes = Vec::new();
    if let Some(base_iops) = baseline {
        for &idle in &b.idle_s {
            s.exec
                .say(&format!("refill: {idle:.0} s idle, then full speed"));
            if s.stopped() || s.exec.pause(idle) {
                break;
            }
            let probe = JobSpec {
                name: format!("{}, after {idle:.0} s idle", spec.name),
                ..spec.clone()
            };
            let series = run_until(s, &probe, b.max_s, |x| back_at_baseline(x, base_iops))?;
            probes.push((idle, series));
        }
    }
    let found = bucket(&drain, base.bs_bytes, b.qd, &probes);
    s.exec.say(&found.sentence);
    Ok(found)
}

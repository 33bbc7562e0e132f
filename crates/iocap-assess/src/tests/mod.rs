//! Tests on constructed curves and results: every rule of the crate, every verdict and every
//! likely cause reachable.

mod cachescan;
mod links;
mod pairing;
mod saturation;
mod scale;
mod verdicts;

use iocap_model::fixture::{run, FixtureRun};
use iocap_model::{CurvePoint, LatencyUs, RwMode, TestResult};

pub(crate) fn pt(qd: u32, iops: f64, p99_us: f64) -> CurvePoint {
    CurvePoint {
        test_idx: qd,
        qd,
        load_pct: None,
        iops,
        mb_s: iops * 8192.0 / 1e6,
        lat_us_p50: Some(p99_us / 3.0),
        lat_us_p99: Some(p99_us),
        per_second_iops: vec![],
    }
}

/// A fixture test with exact latencies, 60 s long, durable writes.
pub(crate) fn test(rw: RwMode, iops: f64, bs: u64, p50_us: f64, p99_us: f64) -> TestResult {
    let mut t = run(&FixtureRun {
        rw,
        iops,
        bs_bytes: bs,
        p50_us,
        ..FixtureRun::default()
    })
    .tests
    .remove(0);
    for ops in [&mut t.total, &mut t.read, &mut t.write] {
        if let Some(l) = ops.lat_us.as_mut() {
            *l = LatencyUs {
                p50: p50_us,
                p99: p99_us,
                ..l.clone()
            };
        }
    }
    t.duration_s = 60.0;
    t.spec.write_through = true;
    t
}

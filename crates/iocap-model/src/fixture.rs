//! Realistic constructed results for tests and benchmarks of everything downstream of the
//! engine (store, comparison, exports, HTML report). The figures are self-consistent: the
//! percentiles are read from the very histograms the result carries, the per-second series
//! adds up to the totals, so a view that recomputes a figure gets the one the result states.

use hdrhistogram::Histogram;

use crate::hist::{encode_hist, quantile_us};
use crate::{
    rfc3339_utc, CpuStats, HostInfo, JobSpec, LatencyUs, OpStats, RunResult, RwMode, SecondSample,
    TargetResult, TargetSpec, TestResult,
};

/// What to vary between constructed runs.
#[derive(Debug, Clone)]
pub struct FixtureRun {
    pub hostname: String,
    pub kernel: String,
    pub targets: Vec<String>,
    /// Seconds since the Unix epoch of the run's start.
    pub started_unix_s: u64,
    /// Median latency in microseconds; the tail scales with it.
    pub p50_us: f64,
    /// I/Os per second over the whole test (all targets).
    pub iops: f64,
    pub bs_bytes: u64,
    pub rw: RwMode,
    pub duration_s: u32,
    pub label: Option<String>,
    pub tags: Vec<String>,
    pub note: Option<String>,
    /// Varies the run id's suffix, so runs started in the same second differ.
    pub salt: u64,
}

impl Default for FixtureRun {
    fn default() -> Self {
        Self {
            hostname: "db01".into(),
            kernel: "6.1.0-27-amd64".into(),
            targets: vec!["/data/iocap.testfile".into()],
            started_unix_s: 1_795_312_800,
            p50_us: 180.0,
            iops: 40_000.0,
            bs_bytes: 8192,
            rw: RwMode::RandRead,
            duration_s: 10,
            label: None,
            tags: vec![],
            note: None,
            salt: 0,
        }
    }
}

fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 2).expect("static bounds are valid")
}

/// A deterministic latency sample: a body around `p50_ns` and a tail out to 40x.
fn latency_ns(i: u64, p50_ns: f64) -> u64 {
    let u = ((i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64) / (1u64 << 53) as f64;
    // inverse of a Pareto-like tail above the median, a narrow body below it
    let f = if u < 0.5 {
        0.4 + 1.2 * u
    } else {
        (0.5 / (1.0 - u).max(1e-6)).powf(0.55).min(40.0)
    };
    (p50_ns * f).max(1.0) as u64
}

fn op_stats(h: &Histogram<u64>, ios: u64, bs: u64, secs: f64) -> OpStats {
    if ios == 0 {
        return OpStats::default();
    }
    let mean_ns = h.mean();
    let q = |p| quantile_us(h, p);
    OpStats {
        ios,
        bytes: ios * bs,
        iops: ios as f64 / secs,
        mib_s: (ios * bs) as f64 / secs / 1_048_576.0,
        mb_s: (ios * bs) as f64 / secs / 1e6,
        lat_us: Some(LatencyUs {
            min: h.min() as f64 / 1000.0,
            mean: mean_ns / 1000.0,
            stddev: h.stdev() / 1000.0,
            p50: q(0.5),
            p90: q(0.9),
            p95: q(0.95),
            p99: q(0.99),
            p99_9: q(0.999),
            p99_99: q(0.9999),
            p99_999: q(0.99999),
            max: h.max() as f64 / 1000.0,
        }),
        lat_hist_ns: Some(encode_hist(h)),
    }
}

/// The `i`-th of a store's worth of varied runs (`iocap store-fill`, the store benchmark): four
/// hosts, three targets, four workloads, every fifth labelled, every third tagged `nightly`,
/// ten minutes apart.
pub fn filler(i: u64) -> RunResult {
    let hosts = ["db01", "db02", "db03", "dw01"];
    let targets = [
        "/data/iocap.testfile",
        "/log/iocap.testfile",
        "/dev/nvme1n1",
    ];
    let workloads = [
        (RwMode::RandRead, 8192),
        (RwMode::RandWrite, 8192),
        (RwMode::Write, 8192),
        (RwMode::Read, 1 << 20),
    ];
    let (rw, bs) = workloads[(i % 4) as usize];
    run(&FixtureRun {
        hostname: hosts[(i / 4 % 4) as usize].into(),
        targets: vec![targets[(i / 16 % 3) as usize].into()],
        started_unix_s: 1_760_000_000 + i * 600,
        p50_us: 100.0 + (i % 37) as f64 * 10.0,
        iops: 10_000.0 + (i % 101) as f64 * 300.0,
        bs_bytes: bs,
        rw,
        duration_s: 10,
        label: (i % 5 == 0).then(|| format!("fill batch {}", i / 100)),
        tags: if i % 3 == 0 {
            vec!["nightly".into()]
        } else {
            vec![]
        },
        note: None,
        salt: i,
        ..FixtureRun::default()
    })
}

/// Builds one run with one test from `f`. At most 200,000 latencies are sampled into the
/// histograms, each counted as often as needed to give exactly the stated IOPS.
pub fn run(f: &FixtureRun) -> RunResult {
    let secs = f64::from(f.duration_s.max(1));
    let ios_total = (f.iops * secs).round() as u64;
    let write_share = match f.rw {
        RwMode::Read | RwMode::RandRead => 0.0,
        RwMode::Write | RwMode::RandWrite => 1.0,
        RwMode::Rw | RwMode::RandRw => 0.3,
    };
    let n_targets = f.targets.len().max(1) as u64;
    let p50_ns = f.p50_us * 1000.0;
    let samples = ios_total.min(200_000);
    let mut read_h = new_hist();
    let mut write_h = new_hist();
    let mut per_target: Vec<Histogram<u64>> = (0..n_targets).map(|_| new_hist()).collect();
    let (mut reads, mut writes) = (0u64, 0u64);
    for i in 0..samples {
        // spread the I/O count over the samples exactly, whatever the ratio
        let scale = ios_total * (i + 1) / samples - ios_total * i / samples;
        let seed = i ^ f.salt.rotate_left(17);
        let is_write = ((i * 7919) % 1000) as f64 / 1000.0 < write_share;
        let lat = latency_ns(seed, if is_write { p50_ns * 1.4 } else { p50_ns });
        let h = if is_write { &mut write_h } else { &mut read_h };
        h.record_n(lat, scale).expect("within bounds");
        per_target[(i % n_targets) as usize]
            .record_n(lat, scale)
            .expect("within bounds");
        if is_write {
            writes += scale;
        } else {
            reads += scale;
        }
    }
    let mut total_h = read_h.clone();
    total_h.add(&write_h).expect("same bounds");
    let bs = f.bs_bytes;
    let ios = reads + writes;
    let spec = JobSpec {
        name: format!("{} {}", f.rw.name(), crate::format_bytes(bs)),
        targets: f.targets.iter().map(TargetSpec::new).collect(),
        rw: f.rw,
        write_pct: (write_share * 100.0) as u8,
        bs_bytes: bs,
        duration_s: secs,
        ..JobSpec::default()
    };
    let per_second = (1..=f.duration_s.max(1))
        .map(|t| {
            let wobble = 1.0 + 0.04 * ((f64::from(t) * 1.7 + f.salt as f64).sin());
            SecondSample {
                t_s: f64::from(t),
                iops: ios as f64 / secs * wobble,
                mb_s: (ios * bs) as f64 / secs / 1e6 * wobble,
                lat_us_mean: Some(total_h.mean() / 1000.0 / wobble),
                lat_us_p99: Some(quantile_us(&total_h, 0.99) / wobble),
                submit_each_pct: None,
                read: None,
                write: None,
            }
        })
        .collect();
    let targets = f
        .targets
        .iter()
        .zip(&per_target)
        .map(|(p, h)| TargetResult {
            path: p.clone(),
            size_bytes: 1 << 30,
            kind: crate::TargetKind::File,
            device: Some("nvme0n1p2".into()),
            fs_type: Some("xfs".into()),
            direct: true,
            logical_block_bytes: 512,
            created: true,
            threads: 1,
            total: op_stats(h, h.len(), bs, secs),
            read: OpStats::default(),
            write: OpStats::default(),
        })
        .collect();
    let salt = f.salt;
    RunResult {
        iocap_version: "0.1.0".into(),
        run_id: format!(
            "{}-{:06x}",
            rfc3339_utc(f.started_unix_s)
                .replace(['-', ':'], "")
                .trim_end_matches('Z'),
            salt.wrapping_mul(0x9E37_79B9) & 0xff_ffff
        ),
        started_at: rfc3339_utc(f.started_unix_s),
        host: HostInfo {
            hostname: f.hostname.clone(),
            kernel: f.kernel.clone(),
            cpu_model: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz".into(),
            cpus: 32,
            memory_bytes: 128 << 30,
            topology: None,
            power_policy: None,
        },
        tests: vec![TestResult {
            name: spec.name.clone(),
            role: None,
            group: None,
            spec,
            engine: crate::Engine::IoUring,
            engine_features: vec![
                crate::EngineFeature::RegisteredBuffers,
                crate::EngineFeature::RegisteredFiles,
            ],
            direct: true,
            duration_s: secs,
            total: op_stats(&total_h, ios, bs, secs),
            read: op_stats(&read_h, reads, bs, secs),
            write: op_stats(&write_h, writes, bs, secs),
            sync: OpStats::default(),
            cpu: CpuStats {
                user_s: 0.4,
                sys_s: 2.1,
                us_per_io: if ios > 0 { 2.5e6 / ios as f64 } else { 0.0 },
                system: vec![],
            },
            qd_mean: 15.9,
            targets,
            per_second,
            ..TestResult::default()
        }],
        label: f.label.clone(),
        tags: f.tags.clone(),
        note: f.note.clone(),
        command: None,
        suite: None,
        saturation: None,
        scaleup: None,
        preflight: None,
        config: vec![],
        timer: None,
        verify: None,
        cost: None,
        fsync: None,
        repeats: vec![],
        cachescan: None,
        workload: None,
        replay: None,
        interrupted_by: None,
        stored_bucket: None,
    }
}

/// A saturate limit of `kind` at `rate` (IOPS, or bytes per second for a throughput cap), flat
/// and steady over sizes 16x apart, with no device time: for the comparison's and the views'
/// tests.
pub fn limit(kind: crate::LimitKind, rate: f64) -> crate::Limit {
    crate::Limit {
        kind,
        rate,
        rate_unit: match kind {
            crate::LimitKind::ThroughputCap => crate::RateUnit::BytesPerS,
            _ => crate::RateUnit::Iops,
        },
        spread_pct: 1.0,
        iops_ratio: 1.0,
        mb_s_ratio: 16.0,
        size_ratio: 16.0,
        per_second_mad_pct: Some(0.0),
        p99_over_p50: Some(1.2),
        evidence: vec![],
        sentence: format!("a cap near {rate}"),
        device_time_test_idx: None,
        device_requests: None,
        device_time_us_mean: None,
        iocap_lat_us_mean: None,
        above_driver_pct: None,
    }
}

/// A burst bucket of `credit` I/Os over `baseline` IOPS, as `saturate --bucket` records one: its
/// drain 4 s at 1,000 IOPS, then 20 s at the baseline (±2 %); a refill of 0.98 of the
/// baseline, no probes: for the comparison's and the views' tests.
pub fn bucket(credit: f64, baseline: f64) -> crate::BurstBucket {
    let mut drain = vec![1000.0; 4];
    drain.extend((0..20).map(|i| baseline * (1.0 + 0.02 * (f64::from(i) * 2.3).sin())));
    crate::BurstBucket {
        bs_bytes: 8192,
        qd: 32,
        per_second_iops: drain,
        drop: Some(crate::LevelDrop {
            test_idx: 0,
            at_s: 4.0,
            at_s_low: 4.0,
            at_s_high: 4.0,
            before_iops: 1000.0,
            after_iops: baseline,
        }),
        peak_iops: Some(1000.0),
        baseline_iops: Some(baseline),
        ratio: Some(1000.0 / baseline),
        burst_s: Some(4.0),
        burst_ios: Some(4000.0),
        burst_bytes: Some(4000.0 * 8192.0),
        credit_ios: Some(credit),
        refills: vec![],
        refill_ios_per_s: Some(baseline * 0.98),
        sentence: "a burst".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hist::decode_hist;

    #[test]
    fn figures_agree_with_the_histograms() {
        let r = run(&FixtureRun {
            rw: RwMode::RandRw,
            targets: vec!["/a".into(), "/b".into()],
            ..FixtureRun::default()
        });
        let t = &r.tests[0];
        assert_eq!(t.total.ios, t.read.ios + t.write.ios);
        assert_eq!(t.total.iops, 40_000.0);
        let h = decode_hist(t.total.lat_hist_ns.as_ref().unwrap()).unwrap();
        assert_eq!(h.len(), t.total.ios);
        let l = t.total.lat_us.as_ref().unwrap();
        assert_eq!(quantile_us(&h, 0.99), l.p99);
        assert!(l.p50 > 150.0 && l.p50 < 220.0, "{}", l.p50);
        assert!(l.p99 > 3.0 * l.p50, "a tail: {} vs {}", l.p99, l.p50);
        assert!(t.write.lat_us.as_ref().unwrap().p50 > t.read.lat_us.as_ref().unwrap().p50);
        let per_target: u64 = t.targets.iter().map(|x| x.total.ios).sum();
        assert_eq!(per_target, t.total.ios);
    }
}

//! Constructed results of the assessing commands (saturate, scaleup, preflight, concurrent
//! groups), shared by the view, HTML and browser tests. Round, realistic figures: a SAN volume
//! that flattens at qd 16 and reaches its 10 ms p99 target at qd 32.
#![allow(dead_code)]

use iocap_model::fixture::{self, FixtureRun};
use iocap_model::*;

/// One test of `iops` and median `p50_us`, from the shared fixture.
fn test(name: &str, targets: &[&str], iops: f64, p50_us: f64, qd: u32, salt: u64) -> TestResult {
    let mut t = fixture::run(&FixtureRun {
        targets: targets.iter().map(|t| t.to_string()).collect(),
        iops,
        p50_us,
        duration_s: 5,
        salt,
        ..FixtureRun::default()
    })
    .tests
    .remove(0);
    t.name = name.into();
    t.spec.qd = qd;
    t
}

fn point(test_idx: u32, qd: u32, load: Option<f64>, iops: f64, p50: f64, p99: f64) -> CurvePoint {
    CurvePoint {
        test_idx,
        qd,
        load_pct: load,
        iops,
        mb_s: iops * 8192.0 / 1e6,
        lat_us_p50: Some(p50),
        lat_us_p99: Some(p99),
        per_second_iops: vec![],
    }
}

/// The steps (qd, IOPS, p50 µs, p99 µs) of a volume that flattens at qd 16; `scale` multiplies
/// the IOPS, `slow` the latencies.
pub const STEPS: [(u32, f64, f64, f64); 7] = [
    (1, 4_100.0, 230.0, 610.0),
    (2, 7_900.0, 240.0, 700.0),
    (4, 15_200.0, 250.0, 900.0),
    (8, 27_800.0, 280.0, 1_400.0),
    (16, 39_500.0, 390.0, 3_100.0),
    (32, 42_000.0, 740.0, 8_900.0),
    (64, 42_600.0, 1_480.0, 21_000.0),
];

/// The saturation of a run whose tests are the steps then the throttled points.
pub fn saturation(scale: f64, slow: f64) -> Saturation {
    let steps: Vec<CurvePoint> = STEPS
        .iter()
        .enumerate()
        .map(|(i, &(qd, iops, p50, p99))| {
            point(i as u32, qd, None, iops * scale, p50 * slow, p99 * slow)
        })
        .collect();
    let max = 42_600.0 * scale;
    let throttled = [10.0, 50.0, 70.0, 90.0]
        .iter()
        .enumerate()
        .map(|(k, &load)| {
            let f: f64 = load / 100.0;
            point(
                (STEPS.len() + k) as u32,
                64,
                Some(load),
                max * f,
                (220.0 + 900.0 * f.powi(4)) * slow,
                (560.0 + 9_000.0 * f.powi(5)) * slow,
            )
        })
        .collect();
    Saturation {
        steps,
        throttled,
        knee_qd: Some(16),
        stop_reason: "p99 passed the 20 ms ceiling at qd 64".into(),
        max_iops: max,
        max_mb_s: max * 8192.0 / 1e6,
        min_gain_pct: 10.0,
        lat_ceiling_us: Some(20_000.0),
        latency_target_us: Some(10_000.0),
        capacity_iops_at_target: Some(42_000.0 * scale),
        capacity_qd_at_target: Some(32),
        size_sweep: Vec::new(),
        limit: None,
        drops: Vec::new(),
        bucket: None,
    }
}

/// A `saturate` run: one test per step and per throttled point, and its saturation.
pub fn saturation_run(label: &str, salt: u64, scale: f64, slow: f64) -> RunResult {
    let s = saturation(scale, slow);
    let mut r = fixture::run(&FixtureRun {
        label: Some(label.into()),
        salt,
        started_unix_s: 1_795_312_800 + salt * 3600,
        ..FixtureRun::default()
    });
    r.tests = s
        .steps
        .iter()
        .chain(&s.throttled)
        .map(|p| {
            let name = match p.load_pct {
                Some(l) => format!("randread 8K at {l:.0} % load"),
                None => format!("randread 8K qd {}", p.qd),
            };
            test(
                &name,
                &["/data/iocap.testfile"],
                p.iops,
                p.lat_us_p50.unwrap(),
                p.qd,
                salt * 100 + u64::from(p.test_idx),
            )
        })
        .collect();
    r.command = Some(RunCommand::Saturate);
    r.saturation = Some(s);
    r
}

pub const VOLUMES: [&str; 4] = ["/mnt/vol1/t", "/mnt/vol2/t", "/mnt/vol3/t", "/mnt/vol4/t"];

pub fn scaleup() -> ScaleUp {
    let alone_iops = [61_000.0, 59_500.0, 41_200.0, 60_300.0];
    let alone = VOLUMES
        .iter()
        .zip(alone_iops)
        .enumerate()
        .map(|(i, (p, iops))| VolumeAlone {
            path: p.to_string(),
            test_idx: i as u32,
            iops,
            mb_s: iops * 8192.0 / 1e6,
            lat_us_p99: Some(if iops < 50_000.0 { 2_900.0 } else { 1_150.0 }),
            slow: iops < 50_000.0,
        })
        .collect();
    let together = [(1usize, 61_000.0), (2, 117_800.0), (4, 196_400.0)]
        .iter()
        .enumerate()
        .map(|(k, &(n, iops))| {
            let linear: f64 = alone_iops[..n].iter().sum();
            ScaleStep {
                test_idx: (VOLUMES.len() + k) as u32,
                paths: VOLUMES[..n].iter().map(|p| p.to_string()).collect(),
                iops,
                mb_s: iops * 8192.0 / 1e6,
                efficiency_pct: iops / linear * 100.0,
            }
        })
        .collect();
    ScaleUp { alone, together }
}

fn row(
    role: &str,
    metric: &str,
    value: f64,
    unit: &str,
    v: Verdict,
    against: &str,
    s: &str,
) -> CapacityRow {
    CapacityRow {
        role: Role::parse_file_role(role).unwrap(),
        metric: metric.into(),
        value: Some(value),
        unit: unit.into(),
        verdict: v,
        against: (!against.is_empty()).then(|| against.into()),
        sentence: s.into(),
        test_idx: vec![0],
    }
}

pub fn preflight() -> Preflight {
    Preflight {
        profile: "sqlserver".into(),
        quick: false,
        device_class: "flash".into(),
        rows: vec![
            row("data", "8K random read IOPS at p99 <= 10 ms", 42_000.0, "IOPS", Verdict::Pass, ">= 20,000 IOPS",
                "The data volume serves 42,000 random 8K reads per second within 10 ms, twice what this profile asks for."),
            row("data", "8K random read p99 at qd 1", 612.0, "us", Verdict::Pass, "<= 1 ms on flash",
                "A single outstanding read completes in well under a millisecond, as flash should."),
            row("log", "64K sequential write p99 (O_DSYNC)", 2_450.0, "us", Verdict::Fail, "<= 1 ms",
                "Log writes take 2.45 ms at p99, more than twice Microsoft's 1 ms guideline for the transaction log: commits will wait on the log; check the write cache and the path to the log volume."),
            row("log", "64K sequential write throughput", 212.4, "MB/s", Verdict::Warn, ">= 250 MB/s",
                "The log takes 212 MB/s, a little below what large index rebuilds and bulk loads would write."),
            row("temp", "64K random write MB/s", 1_480.25, "MB/s", Verdict::Pass, ">= 500 MB/s",
                "tempdb spills and sorts have ample write bandwidth."),
            row("backup", "1M sequential read MB/s", 2_210.0, "MB/s", Verdict::Info, "",
                "A full backup of 1 TB would read for about 8 minutes at this rate."),
        ],
        warnings: vec![
            "the log test ran on the same device as the data file (nvme0n1)".into(),
            "quick mode was off: each test ran 60 s".into(),
        ],
        file_bytes: None,
        cache_included: false,
    }
}

/// Two tests that ran at the same time: OLTP on the data file while the log is written.
pub fn group_tests() -> Vec<TestResult> {
    let mut data = test("oltp data", &["/data/db.mdf"], 31_000.0, 310.0, 16, 7);
    data.role = Some(Role::Data);
    data.group = Some(1);
    let mut log = test("log writes", &["/log/db.ldf"], 2_400.0, 450.0, 1, 8);
    log.role = Some(Role::Log);
    log.group = Some(1);
    log.spec.rw = RwMode::Write;
    log.spec.bs_bytes = 65_536;
    log.total.mb_s = 2_400.0 * 65_536.0 / 1e6;
    vec![data, log]
}

/// A run with every assessment: saturation, scale-up, preflight and a concurrent group.
pub fn assessed_run() -> RunResult {
    let mut r = saturation_run("san-a preflight", 1, 1.0, 1.0);
    r.command = Some(RunCommand::Preflight);
    r.tests.extend(group_tests());
    r.scaleup = Some(scaleup());
    r.preflight = Some(preflight());
    r
}

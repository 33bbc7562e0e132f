//! The text and CSV views of a constructed result, snapshot-tested: a change in what users see
//! shows up as a reviewed diff.

use iocap_model::*;

fn op(ios: u64, bs: u64, secs: f64, p50: f64) -> OpStats {
    OpStats {
        ios,
        bytes: ios * bs,
        iops: ios as f64 / secs,
        mib_s: (ios * bs) as f64 / secs / 1048576.0,
        mb_s: (ios * bs) as f64 / secs / 1e6,
        lat_us: Some(LatencyUs {
            min: p50 / 4.0,
            mean: p50 * 1.1,
            stddev: p50 / 3.0,
            p50,
            p90: p50 * 1.5,
            p95: p50 * 1.8,
            p99: p50 * 2.5,
            p99_9: p50 * 6.0,
            p99_99: p50 * 40.0,
            p99_999: p50 * 60.0,
            max: p50 * 80.0,
        }),
        lat_hist_ns: None,
    }
}

fn result() -> RunResult {
    let spec = JobSpec {
        rw: RwMode::RandRw,
        write_pct: 30,
        targets: vec![
            TargetSpec::new("/data/a.dat"),
            TargetSpec::new("/log/b,1.dat"),
        ],
        ..JobSpec::default()
    };
    let target = |path: &str, ios| TargetResult {
        path: path.into(),
        size_bytes: 1 << 30,
        kind: "file".into(),
        device: Some("nvme0n1p2".into()),
        fs_type: Some("xfs".into()),
        direct: true,
        logical_block_bytes: 512,
        created: true,
        threads: 1,
        total: op(ios, 8192, 10.0, 180.0),
        read: op(ios * 7 / 10, 8192, 10.0, 150.0),
        write: op(ios * 3 / 10, 8192, 10.0, 250.0),
    };
    RunResult {
        iocap_version: "0.1.0".into(),
        run_id: "20261122T020000-abcdef".into(),
        started_at: "2026-11-22T02:00:00Z".into(),
        host: HostInfo::default(),
        tests: vec![TestResult {
            name: "randrw 8K".into(),
            role: None,
            group: None,
            spec,
            engine: "io_uring".into(),
            engine_features: vec!["registered_buffers".into()],
            direct: true,
            duration_s: 10.0,
            total: op(1_000_000, 8192, 10.0, 180.0),
            read: op(700_000, 8192, 10.0, 150.0),
            write: op(300_000, 8192, 10.0, 250.0),
            sync: OpStats::default(),
            cpu: CpuStats {
                user_s: 0.5,
                sys_s: 3.5,
                us_per_io: 4.0,
            },
            qd_mean: 31.8,
            targets: vec![
                target("/data/a.dat", 600_000),
                target("/log/b,1.dat", 400_000),
            ],
            per_second: vec![],
            warnings: vec!["something to know".into()],
            interrupted: false,
            error: None,
        }],
        label: None,
        tags: vec![],
        note: None,
        command: None,
        suite: None,
        saturation: None,
        scaleup: None,
        preflight: None,
    }
}

#[test]
fn text_summary() {
    insta::assert_snapshot!(iocap_report::text::render_test(&result().tests[0]));
}

#[test]
fn csv_export() {
    insta::assert_snapshot!(iocap_report::csv::render(&result()));
}

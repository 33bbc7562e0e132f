//! The text and CSV views of a constructed result, snapshot-tested: a change in what users see
//! shows up as a reviewed diff.

use iocap_model::*;
use iocap_report::assess::{
    concurrent_groups, render_group, render_preflight, render_saturation, render_scaleup,
};

mod common;

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
        kind: iocap_model::TargetKind::File,
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
            engine: iocap_model::Engine::IoUring,
            engine_features: vec![iocap_model::EngineFeature::RegisteredBuffers],
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
                system: vec![],
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
            os_counters: None,
            submit: None,
            uncertainty: None,
            repeat: None,
            ranks: None,
            workers: vec![],
        }],
        label: None,
        tags: vec![],
        note: None,
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

#[test]
fn text_summary() {
    insta::assert_snapshot!(iocap_report::text::render_test(&result().tests[0]));
}

#[test]
fn csv_export() {
    insta::assert_snapshot!(iocap_report::csv::render(&result()));
}

#[test]
fn saturation_view() {
    let r = common::saturation_run("san-a", 1, 1.0, 1.0);
    insta::assert_snapshot!(render_saturation(&r, r.saturation.as_ref().unwrap()));
}

#[test]
fn saturation_without_knee_or_target() {
    let r = common::saturation_run("san-a", 1, 1.0, 1.0);
    let mut s = r.saturation.clone().unwrap();
    s.knee_qd = None;
    s.latency_target_us = None;
    s.capacity_iops_at_target = None;
    s.capacity_qd_at_target = None;
    s.lat_ceiling_us = None;
    s.throttled.clear();
    s.stop_reason = "reached qd 64, the largest asked for".into();
    let text = render_saturation(&r, &s);
    assert!(
        text.contains("knee:     none (throughput never flattened"),
        "{text}"
    );
    assert!(
        text.contains("capacity: no latency target was set"),
        "{text}"
    );
    assert!(text.contains("stopped:  reached qd 64"), "{text}");
    assert!(!text.contains("throttled") && !text.contains("◀"), "{text}");
    // a target no step met
    s.latency_target_us = Some(500.0);
    let text = render_saturation(&r, &s);
    assert!(
        text.contains("capacity: no step kept p99 <= 500 µs"),
        "{text}"
    );
    // nothing measured at all
    let empty = Saturation {
        steps: vec![],
        throttled: vec![],
        max_iops: 0.0,
        max_mb_s: 0.0,
        ..s
    };
    let text = render_saturation(&r, &empty);
    assert!(text.contains("no steps measured"), "{text}");
}

#[test]
fn scaleup_view() {
    insta::assert_snapshot!(render_scaleup(&common::scaleup()));
}

#[test]
fn preflight_view() {
    let r = common::assessed_run();
    insta::assert_snapshot!(render_preflight(&r, r.preflight.as_ref().unwrap()));
}

#[test]
fn preflight_values_and_missing_figures() {
    let r = common::assessed_run();
    let mut p = r.preflight.clone().unwrap();
    for row in &mut p.rows {
        row.against = None;
    }
    p.rows[0].value = None;
    p.rows[1].value = Some(f64::NAN);
    p.warnings.clear();
    let text = render_preflight(&r, &p);
    assert!(
        !text.contains("against") && !text.contains("warning"),
        "{text}"
    );
    assert!(!text.contains("NaN"), "{text}");
    assert!(text.contains("2,450") || text.contains("2.45 ms"), "{text}");
    assert!(!text.contains("cache included"), "{text}");
    // files that could not be sized past the cache: the figures are marked, in text and HTML
    p.cache_included = true;
    let text = render_preflight(&r, &p);
    assert!(text.contains("figures: cache included:"), "{text}");
    let mut marked = r.clone();
    marked.preflight = Some(p.clone());
    let html = iocap_report::html::render(std::slice::from_ref(&marked));
    assert!(html.contains("Cache included:"));
    p.rows.clear();
    let text = render_preflight(&r, &p);
    assert!(text.contains("verdicts: no verdicts") && text.contains("no capacity rows"));
}

#[test]
fn group_view() {
    let tests = common::group_tests();
    let groups = concurrent_groups(&tests);
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].0, 1);
    insta::assert_snapshot!(render_group(&groups[0].1));
}

#[test]
fn groups_leave_lone_tests_out() {
    let mut tests = common::group_tests();
    tests.insert(0, result().tests[0].clone());
    tests.push(result().tests[0].clone());
    tests[3].group = Some(2);
    let groups = concurrent_groups(&tests);
    let sizes: Vec<(u32, usize)> = groups.iter().map(|(g, v)| (*g, v.len())).collect();
    assert_eq!(sizes, [(1, 2), (2, 1)]);
    assert_eq!(render_group(&[]), "no tests\n");
}

/// `text::render_test` is what `iocap run` prints; a role and a group must not change it.
#[test]
fn render_test_is_unaffected_by_role_and_group() {
    let plain = result();
    let mut tagged = plain.clone();
    tagged.tests[0].role = Some(Role::Data);
    tagged.tests[0].group = Some(3);
    tagged.saturation = Some(common::saturation(1.0, 1.0));
    assert_eq!(
        iocap_report::text::render_test(&plain.tests[0]),
        iocap_report::text::render_test(&tagged.tests[0])
    );
}

//! The session flows driven by the mock executor: what each command decides (how far a ramp
//! goes, which run a repeated step stands for, what a stopped suite resumes, what preflight
//! measures and judges), deterministically and without I/O.

use iocap_assess::{Guidelines, SaturateConfig};
use iocap_model::{JobSpec, Role, RunCommand, RunResult, RwMode, TargetSpec};
use iocap_session::{
    new_run, MockExecutor, PreflightConfig, PreflightScan, SaturateSpec, ScaleupSpec, Session,
    SuiteEnd, SuiteRun, SuiteStep, Timing,
};

fn spec(name: &str, path: &str) -> JobSpec {
    JobSpec {
        name: name.into(),
        targets: vec![TargetSpec::new(path)],
        rw: RwMode::RandRead,
        bs_bytes: 8192,
        align_bytes: 8192,
        duration_s: 2.0,
        warmup_s: 0.0,
        ..JobSpec::default()
    }
}

fn saturate(exec: &mut MockExecutor, repeat: u32, throttled: bool) -> RunResult {
    saturate_sizes(exec, repeat, throttled, Vec::new())
}

fn saturate_sizes(
    exec: &mut MockExecutor,
    repeat: u32,
    throttled: bool,
    sizes: Vec<u64>,
) -> RunResult {
    let mut s = Session::new(new_run(RunCommand::Saturate), exec).repeating(repeat, 0.0);
    let sat = SaturateSpec {
        base: spec("", "/t/iocap.testfile"),
        cfg: SaturateConfig::default(),
        throttled,
        sizes,
        bucket: None,
        device_time: true,
    };
    iocap_session::saturate(&mut s, &sat).unwrap();
    s.finish()
}

/// After the ramp, the sweep runs each size at the deepest step within 5 % of the highest IOPS
/// (the base size's point is that step), and the limit is judged from it: a device whose IOPS fall
/// as the size grows is the device.
#[test]
fn saturate_sweeps_the_sizes_at_the_best_depth_and_judges_the_limit() {
    let mut exec = MockExecutor::new(|s| {
        let qd = f64::from(s.qd.max(1));
        let iops = 80_000.0 * (qd / 8.0).min(1.0) * (8192.0 / s.bs_bytes as f64).powf(0.7);
        (iops, qd / iops * 1e6)
    });
    let run = saturate_sizes(&mut exec, 1, false, vec![4096, 8192, 65536]);
    let sat = run.saturation.as_ref().unwrap();
    // the deepest step within 5 % of the highest IOPS: past the knee at qd 8
    let best = sat.steps.last().unwrap();
    assert!(best.qd > 8, "{:?}", sat.steps);
    let sizes: Vec<(u64, u32)> = sat.size_sweep.iter().map(|p| (p.bs_bytes, p.qd)).collect();
    assert_eq!(sizes, [(4096, best.qd), (8192, best.qd), (65536, best.qd)]);
    // 8K is the ramp's own step, not measured again: two tests beyond the ramp
    assert_eq!(run.tests.len(), sat.steps.len() + 2);
    for p in &sat.size_sweep {
        let t = &run.tests[p.test_idx as usize];
        assert_eq!((t.spec.bs_bytes, t.spec.qd), (p.bs_bytes, p.qd));
        assert_eq!(p.outstanding, p.qd);
    }
    let limit = sat.limit.as_ref().unwrap();
    assert_eq!(limit.kind, iocap_model::LimitKind::Device, "{limit:?}");
    assert!(
        limit.iops_ratio < 0.3 && limit.size_ratio == 16.0,
        "{limit:?}"
    );
}

/// Flat IOPS over the sizes with a device's spread of latency (the mock's p99 is 8x its p50)
/// is not called a cap; with no sizes asked for, there is no sweep and no verdict.
#[test]
fn a_flat_sweep_with_a_wide_latency_is_not_a_cap_and_no_sizes_skip_it() {
    let mut exec = MockExecutor::knee(80_000.0, 8);
    let run = saturate_sizes(&mut exec, 1, false, vec![4096, 65536]);
    let limit = run.saturation.as_ref().unwrap().limit.clone().unwrap();
    assert_eq!(limit.kind, iocap_model::LimitKind::Device);
    assert!(limit
        .evidence
        .iter()
        .any(|e| e.contains("not called a cap")));
    let mut exec = MockExecutor::knee(80_000.0, 8);
    let run = saturate(&mut exec, 1, false);
    let sat = run.saturation.as_ref().unwrap();
    assert!(sat.size_sweep.is_empty() && sat.limit.is_none());
    assert_eq!(run.tests.len(), sat.steps.len());
}

/// After the sweep, one more test at its depth and the run's block size times the device's
/// own part of each request, and the limit carries it beside iocap's latency; where the
/// executor cannot record the block layer (it refuses, or lends nothing as an MPI job's does),
/// or `--no-device-time`, the evidence says why once and nothing more runs.
#[test]
fn saturate_times_the_device_at_the_sweep_depth_or_says_why_not() {
    let sizes = vec![4096, 8192, 65536];
    let mut exec = MockExecutor::knee(80_000.0, 8);
    exec.device_time = Some(Ok(0.03));
    let run = saturate_sizes(&mut exec, 1, false, sizes.clone());
    let sat = run.saturation.as_ref().unwrap();
    let best = sat.size_sweep[1].qd;
    let l = sat.limit.as_ref().unwrap();
    let idx = l.device_time_test_idx.unwrap() as usize;
    assert_eq!(idx, run.tests.len() - 1, "the last test, after the sweep");
    let t = &run.tests[idx];
    assert_eq!((t.spec.bs_bytes, t.spec.qd), (8192, best));
    assert_eq!(t.name, format!("randread 8K qd {best}, device time"));
    let mean = t.total.lat_us.as_ref().unwrap().mean;
    assert_eq!(l.iocap_lat_us_mean, Some(mean));
    assert!((l.device_time_us_mean.unwrap() / mean - 0.03).abs() < 1e-9);
    assert!((l.above_driver_pct.unwrap() - 97.0).abs() < 1e-6, "{l:?}");
    assert_eq!(l.device_requests, Some(t.total.ios));
    assert!(l
        .evidence
        .iter()
        .any(|e| e.starts_with("requests waited 97 % of their time above the driver")));
    assert!(exec.said.iter().any(|s| s.contains("in the device")));
    // refused: said once, in the evidence and as progress, and no test beyond the sweep
    for (device_time, lends, why) in [
        (
            true,
            Some(Err("a capture needs root".to_string())),
            "a capture needs root",
        ),
        (true, None, "the tests run on several hosts"),
        (false, Some(Ok(0.5)), "skipped (--no-device-time)"),
    ] {
        let mut exec = MockExecutor::knee(80_000.0, 8);
        exec.device_time = lends;
        let mut s = Session::new(new_run(RunCommand::Saturate), &mut exec);
        let sat = SaturateSpec {
            base: spec("", "/t/iocap.testfile"),
            cfg: SaturateConfig::default(),
            throttled: false,
            sizes: sizes.clone(),
            bucket: None,
            device_time,
        };
        iocap_session::saturate(&mut s, &sat).unwrap();
        let run = s.finish();
        let sat = run.saturation.as_ref().unwrap();
        assert_eq!(run.tests.len(), sat.steps.len() + 2, "{why}");
        let l = sat.limit.as_ref().unwrap();
        assert_eq!((l.device_time_us_mean, l.above_driver_pct), (None, None));
        let notes: Vec<&String> = l
            .evidence
            .iter()
            .filter(|e| e.starts_with("the device's own time was not measured: "))
            .collect();
        assert_eq!(notes.len(), 1, "{:?}", l.evidence);
        assert!(notes[0].contains(why), "{notes:?}");
    }
}

/// `--bucket` drains before the steps, in tests of `chunk_s` back to back, at its own depth,
/// with no warm-up; a rate that never falls runs to the limit and finds no burst (so no
/// probes), and the steps' tests follow, their indexes past the drain's.
#[test]
fn a_bucket_that_never_runs_out_drains_to_its_limit_then_the_steps_run() {
    let mut exec = MockExecutor::knee(80_000.0, 8);
    let mut s = Session::new(new_run(RunCommand::Saturate), &mut exec);
    let sat = SaturateSpec {
        base: spec("", "/t/iocap.testfile"),
        cfg: SaturateConfig::default(),
        throttled: false,
        sizes: Vec::new(),
        bucket: Some(iocap_session::BucketSpec {
            qd: 16,
            chunk_s: 2.0,
            max_s: 6.0,
            idle_s: vec![1.0],
        }),
        device_time: true,
    };
    sat.check().unwrap();
    iocap_session::saturate(&mut s, &sat).unwrap();
    let run = s.finish();
    let drain: Vec<&JobSpec> = exec.ran.iter().flatten().take(3).collect();
    assert!(drain
        .iter()
        .all(|d| d.qd == 16 && d.duration_s == 2.0 && d.warmup_s == 0.0));
    assert!(exec.paused_s.is_empty(), "no drop, so no refill probe");
    let sat = run.saturation.as_ref().unwrap();
    let b = sat.bucket.as_ref().unwrap();
    assert_eq!(b.per_second_iops.len(), 6, "{b:?}");
    assert!(b.drop.is_none() && b.sentence.contains("no burst ran out"));
    assert_eq!(
        sat.steps[0].test_idx, 3,
        "the steps follow the drain's 3 tests"
    );
    assert_eq!(run.tests.len(), 3 + sat.steps.len());
}

/// Ctrl-C during the drain keeps what it measured and runs no step.
#[test]
fn ctrl_c_in_the_bucket_keeps_the_drain_and_runs_no_step() {
    let mut exec = MockExecutor::knee(80_000.0, 8);
    exec.interrupt_at = Some(1);
    let mut s = Session::new(new_run(RunCommand::Saturate), &mut exec);
    let sat = SaturateSpec {
        base: spec("", "/t/iocap.testfile"),
        cfg: SaturateConfig::default(),
        throttled: true,
        sizes: vec![4096, 65536],
        bucket: Some(iocap_session::BucketSpec {
            qd: 16,
            chunk_s: 2.0,
            max_s: 60.0,
            idle_s: vec![1.0],
        }),
        device_time: true,
    };
    iocap_session::saturate(&mut s, &sat).unwrap();
    let run = s.finish();
    assert_eq!(run.tests.len(), 2, "the drain's two tests, no step");
    let sat = run.saturation.as_ref().unwrap();
    assert!(sat.steps.is_empty() && sat.size_sweep.is_empty());
    assert_eq!(sat.bucket.as_ref().unwrap().per_second_iops.len(), 4);
}

/// A bucket's bad flags are refused by name before anything runs.
#[test]
fn a_bucket_with_a_bad_depth_or_pause_is_refused_by_flag() {
    let bucket = |qd, idle: f64| SaturateSpec {
        base: spec("", "/t/iocap.testfile"),
        cfg: SaturateConfig::default(),
        throttled: false,
        sizes: vec![4096],
        bucket: Some(iocap_session::BucketSpec {
            qd,
            chunk_s: 5.0,
            max_s: 60.0,
            idle_s: vec![idle],
        }),
        device_time: true,
    };
    let err = |s: SaturateSpec| s.check().unwrap_err().to_string();
    assert!(err(bucket(0, 1.0)).contains("--bucket-qd"));
    assert!(err(bucket(8, 0.0)).contains("--refill"));
    assert!(bucket(8, 1.0).check().is_ok());
}

#[test]
fn saturate_stops_past_the_knee_and_throttles_below_the_maximum() {
    // 80K IOPS reached at qd 8: 16 and 32 gain nothing
    let mut exec = MockExecutor::knee(80_000.0, 8);
    let run = saturate(&mut exec, 1, true);
    let sat = run.saturation.as_ref().unwrap();
    let qds: Vec<u32> = sat.steps.iter().map(|p| p.qd).collect();
    assert_eq!(&qds[..4], &[1, 2, 4, 8], "{qds:?}");
    assert!(qds.len() <= 6, "the ramp went on past the knee: {qds:?}");
    assert_eq!(sat.knee_qd, Some(8), "{sat:?}");
    assert!((sat.max_iops - 80_000.0).abs() < 1.0, "{}", sat.max_iops);
    // the throttled points ask for a share of the maximum, at the best step's depth
    assert!(!sat.throttled.is_empty());
    let rates: Vec<f64> = exec
        .ran
        .iter()
        .flatten()
        .filter_map(|s| s.rate_iops)
        .collect();
    assert_eq!(rates.len(), sat.throttled.len());
    assert!(
        rates.iter().all(|r| *r <= 80_000.0 && *r > 0.0),
        "{rates:?}"
    );
    // every test is in the run, each point pointing at its own
    assert_eq!(run.tests.len(), exec.names().len());
    for p in sat.steps.iter().chain(&sat.throttled) {
        assert_eq!(run.tests[p.test_idx as usize].spec.qd, p.qd);
    }
}

#[test]
fn a_repeated_step_stands_for_its_median_run() {
    // each run of a step differs: the third of every three is the fastest
    let mut n = 0u32;
    let counter = std::cell::Cell::new(0u32);
    let mut exec = MockExecutor::new(move |s| {
        counter.set(counter.get() + 1);
        let k = f64::from(counter.get() % 3);
        let iops = 10_000.0 * f64::from(s.qd.min(4)) * (1.0 + 0.1 * k);
        (iops, f64::from(s.qd) / iops * 1e6)
    });
    let run = saturate(&mut exec, 3, false);
    let sat = run.saturation.as_ref().unwrap();
    for p in &sat.steps {
        let t = &run.tests[p.test_idx as usize];
        let same: Vec<f64> = run
            .tests
            .iter()
            .filter(|x| x.name == t.name)
            .map(|x| x.total.iops)
            .collect();
        assert_eq!(same.len(), 3, "every step three times");
        let mut sorted = same.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(
            t.total.iops, sorted[1],
            "{} picks the median of {same:?}",
            t.name
        );
        n += 1;
    }
    assert!(n >= 3);
    assert_eq!(
        run.repeats.len(),
        sat.steps.len(),
        "a spread for every step"
    );
    assert!(
        exec.said.iter().any(|l| l == "run 2 of 3"),
        "{:?}",
        exec.said
    );
}

#[test]
fn a_failed_step_ends_the_ramp_and_skips_the_throttled_points() {
    let mut exec = MockExecutor::knee(80_000.0, 64);
    exec.fail_at = Some(2);
    let run = saturate(&mut exec, 1, true);
    assert_eq!(run.tests.len(), 3, "qd 1, 2 and the failed qd 4");
    assert!(run.tests[2].error.is_some());
    assert!(run.saturation.unwrap().throttled.is_empty());
}

/// An interrupted saturate records what stopped it, so every view can say it is partial and
/// name the signal (issue 23 item 5); a whole one records nothing.
#[test]
fn an_interrupted_ramp_is_recorded_as_interrupted() {
    let mut exec = MockExecutor::knee(80_000.0, 64);
    exec.interrupt_at = Some(1);
    let run = saturate(&mut exec, 1, true);
    assert_eq!(run.tests.len(), 2, "qd 1 and the interrupted qd 2");
    assert_eq!(run.interrupted_by.as_deref(), Some("stop"));
    let cut = run.cut_short().expect("partial");
    assert_eq!(cut.done, 1);
    let mut exec = MockExecutor::knee(80_000.0, 8);
    assert_eq!(saturate(&mut exec, 1, false).interrupted_by, None);
}

#[test]
fn scaleup_runs_each_volume_alone_then_together() {
    let mut exec = MockExecutor::knee(20_000.0, 16);
    let mut s = Session::new(new_run(RunCommand::Scaleup), &mut exec);
    let sc = ScaleupSpec {
        paths: vec!["/a/f".into(), "/b/f".into(), "/c/f".into()],
        base: JobSpec {
            qd: 32,
            ..spec("", "/x")
        },
    };
    iocap_session::scaleup(&mut s, &sc).unwrap();
    let run = s.finish();
    let names = exec.names();
    assert_eq!(names.len(), 3 + 2, "{names:?}");
    assert!(names[0].ends_with("/a/f alone"));
    assert!(names[4].ends_with("3 volumes together"));
    let last = &exec.ran[4][0];
    assert_eq!(last.targets.len(), 3);
    assert!(run.scaleup.is_some());
    // a volume given twice is refused before anything runs
    let dup = ScaleupSpec {
        paths: vec!["/a/f".into(), "/a/f".into()],
        base: spec("", "/x"),
    };
    let e = dup.check().unwrap_err().to_string();
    assert!(e.contains("given twice"), "{e}");
}

fn suite() -> SuiteRun {
    let step = |name: &str, roles: &[&str]| SuiteStep {
        name: name.into(),
        specs: roles
            .iter()
            .map(|r| {
                let n = if roles.len() > 1 {
                    format!("{name} [{r}]")
                } else {
                    name.to_string()
                };
                (
                    Role::parse_file_role(r).unwrap(),
                    spec(&n, &format!("/{r}/f")),
                )
            })
            .collect(),
    };
    SuiteRun {
        name: "mini".into(),
        steps: vec![
            step("reads", &["data"]),
            step("oltp", &["data", "log"]),
            step("scan", &["data"]),
        ],
        pause_s: 5.0,
    }
}

#[test]
fn a_stopped_suite_keeps_its_tests_and_resumes_where_it_stopped() {
    let plan = suite();
    // Ctrl-C during the second test (the oltp pair: tests 1 and 2)
    let mut exec = MockExecutor::knee(50_000.0, 8);
    exec.interrupt_at = Some(2);
    let mut s = Session::new(new_run(RunCommand::Suite), &mut exec);
    let mut handed = Vec::new();
    let end = plan
        .run(&mut s, |run, first| {
            handed.push((first, run.tests.len()));
            Ok(())
        })
        .unwrap();
    assert_eq!(end, SuiteEnd::Interrupted);
    assert_eq!(
        handed,
        vec![(0, 1), (1, 3)],
        "each test handed over as it ended"
    );
    let stopped = s.run.clone();
    assert_eq!(stopped.interrupted_by.as_deref(), Some("stop"));
    assert_eq!(stopped.tests[1].group, stopped.tests[2].group);
    assert_eq!(stopped.tests[2].role, Some(Role::Log));
    assert_eq!(
        exec.paused_s,
        vec![5.0],
        "a pause between tests, none before the first"
    );

    // resumed: the finished tests are skipped, the interrupted pair is not finished either
    // way, so only what is missing runs
    let mut again = MockExecutor::knee(50_000.0, 8);
    let mut s = Session::new(stopped, &mut again);
    let end = plan.run(&mut s, |_, _| Ok(())).unwrap();
    assert_eq!(end, SuiteEnd::Finished);
    assert_eq!(s.run.tests.len(), 4);
    assert_eq!(
        s.run.interrupted_by, None,
        "a resumed suite that finished is whole"
    );
    assert_eq!(again.names(), vec!["scan"]);
}

/// Ctrl-C in a test, or between tests (no new test then): the run handed over to be saved says
/// it was interrupted, so the saved copy does too.
#[test]
fn a_suite_stopped_in_a_pause_is_saved_as_interrupted() {
    let mut exec = MockExecutor::knee(50_000.0, 8);
    exec.interrupt_at = Some(0);
    let mut s = Session::new(new_run(RunCommand::Suite), &mut exec);
    let mut handed = Vec::new();
    // the first test ends interrupted
    let end = suite()
        .run(&mut s, |run, first| {
            handed.push((first, run.interrupted_by.clone()));
            Ok(())
        })
        .unwrap();
    assert_eq!(end, SuiteEnd::Interrupted);
    assert_eq!(handed, vec![(0, Some("stop".to_string()))]);

    let mut exec = MockExecutor::knee(50_000.0, 8);
    exec.interrupt();
    let mut s = Session::new(new_run(RunCommand::Suite), &mut exec);
    let mut handed = Vec::new();
    let end = suite()
        .run(&mut s, |run, first| {
            handed.push((first, run.tests.len(), run.interrupted_by.clone()));
            Ok(())
        })
        .unwrap();
    assert_eq!(end, SuiteEnd::Interrupted);
    assert_eq!(handed, vec![(0, 0, Some("stop".to_string()))]);
}

#[test]
fn an_io_error_ends_a_suite() {
    let mut exec = MockExecutor::knee(50_000.0, 8);
    exec.fail_at = Some(0);
    let mut s = Session::new(new_run(RunCommand::Suite), &mut exec);
    let end = suite().run(&mut s, |_, _| Ok(())).unwrap();
    assert_eq!(end, SuiteEnd::Error);
    assert_eq!(exec.names(), vec!["reads"]);
}

fn preflight_config(size: Option<u64>) -> PreflightConfig {
    PreflightConfig {
        profile: iocap_plan::profile("sqlserver").unwrap(),
        guidelines: Guidelines::default(),
        expectations: None,
        forced_class: None,
        quick: true,
        timing: Timing {
            step_s: 1.0,
            step_warmup_s: 0.0,
            test_s: 2.0,
            test_warmup_s: 0.0,
        },
        size_bytes: size,
        cache_size_bytes: None,
        scan: PreflightScan {
            max_bytes: 64 << 20,
            step_s: 0.5,
            budget_s: 60.0,
            files: 3,
            fill_budget_s: 30.0,
            allow_overwrite: false,
        },
        default_size_bytes: 1 << 30,
        allow_overwrite: false,
        role_target: Box::new(|r| format!("/vol/{r}/iocap-{r}.testfile")),
        tune: Box::new(|_| {}),
    }
}

#[test]
fn preflight_measures_every_role_and_judges_each_line() {
    let mut exec = MockExecutor::knee(60_000.0, 16);
    let mut s = Session::new(new_run(RunCommand::Preflight), &mut exec);
    iocap_session::preflight(&mut s, &preflight_config(Some(1 << 30))).unwrap();
    let run = s.finish();
    assert!(run.cachescan.is_none(), "a size given: no scan");
    let roles: Vec<&str> = run
        .tests
        .iter()
        .filter_map(|t| t.role.map(Role::name))
        .collect();
    for r in ["data", "log", "backup"] {
        assert!(roles.contains(&r), "{r} missing from {roles:?}");
    }
    // the backup reads data while writing the backup volume, together
    let pair: Vec<_> = run.tests.iter().rev().take(2).collect();
    assert!(pair[0].group.is_some() && pair[0].group == pair[1].group);
    // the log writes are at queue depth 1 on the log volume
    let log = run
        .tests
        .iter()
        .find(|t| t.role == Some(Role::Log))
        .unwrap();
    assert_eq!(log.spec.qd, 1);
    assert!(log.targets[0].path.starts_with("/vol/log/"));
    let p = run.preflight.as_ref().unwrap();
    assert!(p.rows.len() >= 4, "{:?}", p.rows);
    let sat = run.saturation.as_ref().unwrap();
    assert!(sat.max_iops > 59_000.0, "{}", sat.max_iops);
}

#[test]
fn preflight_without_a_size_scans_the_caches_first() {
    let mut exec = MockExecutor::knee(60_000.0, 16);
    exec.range_bytes = 64 << 20;
    let mut s = Session::new(new_run(RunCommand::Preflight), &mut exec);
    iocap_session::preflight(&mut s, &preflight_config(None)).unwrap();
    let run = s.finish();
    let scan = run.cachescan.as_ref().expect("a scan");
    assert!(!scan.steps.is_empty());
    assert_eq!(run.tests[0].role, Some(Role::Cachescan));
    let p = run.preflight.as_ref().unwrap();
    assert!(p.file_bytes.is_some());
    // the workloads after the scan are sized by it
    let data = run
        .tests
        .iter()
        .find(|t| t.role == Some(Role::Data))
        .unwrap();
    assert_eq!(data.spec.size_bytes, p.file_bytes.unwrap());
}

/// A cache scan of 16M to 256M on `exec`.
fn cachescan(exec: &mut MockExecutor) -> iocap_model::CacheScan {
    exec.range_bytes = 256 << 20;
    let mut s = Session::new(new_run(RunCommand::Cachescan), exec);
    let c = iocap_session::ScanConfig {
        target: "/t/iocap.testfile".into(),
        size_bytes: 256 << 20,
        max_bytes: None,
        bs_bytes: 8192,
        step_s: 0.5,
        budget_s: None,
        write_check: false,
        engine: iocap_model::EngineChoice::Auto,
        allow_overwrite: false,
    };
    iocap_session::scan(&mut s, &c).unwrap()
}

/// (IOPS, p50 µs) of a device answering reads in `lat_us`, at the spec's depth.
fn at_depth(s: &JobSpec, lat_us: f64) -> (f64, f64) {
    (f64::from(s.qd.max(1)) * 1e6 / lat_us, lat_us)
}

fn working_set(s: &JobSpec) -> u64 {
    s.targets[0].size_bytes.unwrap_or(256 << 20)
}

#[test]
fn a_cache_measured_again_still_rises_at_its_edge_and_stands() {
    // a 40 MiB cache: hits 50 µs, misses 500 µs, shares by C/W past it
    let mut exec = MockExecutor::new(|s| {
        let hit = (40.0 * 1048576.0 / working_set(s) as f64).min(1.0);
        at_depth(s, 50.0 * hit + 500.0 * (1.0 - hit))
    });
    let scan = cachescan(&mut exec);
    let found: Vec<_> = scan
        .levels
        .iter()
        .map(|l| (l.fits_bytes >> 20, l.exceeds_bytes >> 20))
        .collect();
    assert_eq!(found, vec![(32, 64)], "{scan:#?}");
    assert_eq!(scan.rechecks.len(), 1, "{:#?}", scan.rechecks);
    assert!(scan.rechecks[0].confirmed);
    assert_eq!(scan.rechecks[0].fit.working_set_bytes, 32 << 20);
    assert_eq!(scan.rechecks[0].over.working_set_bytes, 64 << 20);
    // the recheck's tests are in the run, after the sweep's, named as a second look
    assert!(exec.names().iter().any(|n| n.starts_with("again: ")));
}

#[test]
fn load_that_grows_during_the_sweep_is_not_called_a_cache() {
    // a memory-fast device (40 µs) that other work slows to 120 µs from the third step on:
    // the sweep alone sees a rise that holds past 32M, like the end of a cache
    let reads = std::cell::Cell::new(0u32);
    let mut exec = MockExecutor::new(move |s| {
        reads.set(reads.get() + 1);
        at_depth(s, if reads.get() > 4 { 120.0 } else { 40.0 })
    });
    let scan = cachescan(&mut exec);
    assert!(scan.levels.is_empty(), "{scan:#?}");
    assert_eq!(scan.rechecks.len(), 2, "{:#?}", scan.rechecks);
    assert!(scan.rechecks.iter().all(|r| !r.confirmed));
    let notes = scan.notes.join("\n");
    assert!(
        notes.contains("not when measured again") && notes.contains("not a cache"),
        "{notes}"
    );
    assert!(notes.contains("no cache found up to 256M"), "{notes}");
}

//! Two saturate runs' tests paired by part and depth, not position: a drain that took 3 tests
//! in the base and 5 in the run sets every step beside the step of the same depth, and a
//! regression is judged on the right pair.

use iocap_model::fixture::{limit, run, FixtureRun};
use iocap_model::{
    BurstBucket, CurvePoint, LimitKind, Refill, RunCommand, RunResult, Saturation, SizePoint,
    TestResult,
};

use crate::compare::pairing::{pair_tests, PairedBy, PartKind};
use crate::compare::{same_workload, test_metrics, ChangeVerdict, MetricName, Thresholds};

/// A test named `name` at `qd` and `bs`, `secs` seconds at `iops`.
fn test(name: &str, qd: u32, bs: u64, iops: f64, secs: u32, salt: u64) -> TestResult {
    let mut t = run(&FixtureRun {
        iops,
        bs_bytes: bs,
        duration_s: secs,
        salt,
        ..FixtureRun::default()
    })
    .tests
    .remove(0);
    t.name = name.into();
    t.spec.name = name.into();
    t.spec.qd = qd;
    t
}

fn point(test_idx: usize, qd: u32, load_pct: Option<f64>, t: &TestResult) -> CurvePoint {
    CurvePoint::of(test_idx as u32, qd, load_pct, t)
}

/// A `saturate --bucket` run as the session records one: the drain's `drain` tests of 5 s
/// (1,000 IOPS in the first, 200 after), a refill probe after 10 s idle of `probe` tests, the
/// steps at `steps` (depth, IOPS), a throttled point at 50 % of the best step, the size sweep
/// at 8K (the best step's test) and 64K, and the device-time test.
fn saturate(drain: usize, probe: usize, steps: &[(u32, f64)], salt: u64) -> RunResult {
    let mut r = run(&FixtureRun {
        salt,
        ..FixtureRun::default()
    });
    r.command = Some(RunCommand::Saturate);
    r.tests.clear();
    let chunk = |r: &mut RunResult, name: &str, k: usize| {
        let iops = if k == 0 { 1000.0 } else { 200.0 };
        let t = test(name, 32, 8192, iops, 5, salt + r.tests.len() as u64);
        r.tests.push(t);
    };
    for k in 0..drain {
        chunk(&mut r, "randread 8K qd 32, bucket", k);
    }
    let drained = r.tests.iter().flat_map(|t| &t.per_second);
    let per_second_iops: Vec<f64> = drained.map(|s| s.iops).collect();
    let from = r.tests.len();
    for k in 0..probe {
        chunk(&mut r, "randread 8K qd 32, bucket, after 10 s idle", k);
    }
    let probed: Vec<f64> = r.tests[from..]
        .iter()
        .flat_map(|t| &t.per_second)
        .map(|s| s.iops)
        .collect();
    let mut s = Saturation {
        bucket: Some(BurstBucket {
            per_second_iops,
            refills: vec![Refill {
                idle_s: 10.0,
                regained_ios: 1000.0,
                ios_per_idle_s: 100.0,
                per_second_iops: probed,
            }],
            ..BurstBucket::default()
        }),
        ..Saturation::default()
    };
    for &(qd, iops) in steps {
        let t = test(
            &format!("randread 8K qd {qd}"),
            qd,
            8192,
            iops,
            10,
            salt + qd as u64,
        );
        r.tests.push(t);
        let i = r.tests.len() - 1;
        s.steps.push(point(i, qd, None, &r.tests[i]));
    }
    let best = s
        .steps
        .iter()
        .max_by(|a, b| a.iops.total_cmp(&b.iops))
        .cloned()
        .unwrap();
    let t = test(
        &format!("randread 8K qd {} at 50 %", best.qd),
        best.qd,
        8192,
        best.iops / 2.0,
        10,
        salt + 50,
    );
    r.tests.push(t);
    let i = r.tests.len() - 1;
    s.throttled.push(point(i, best.qd, Some(50.0), &r.tests[i]));
    let at = |r: &RunResult, i: usize, bs| SizePoint {
        test_idx: i as u32,
        bs_bytes: bs,
        qd: best.qd,
        outstanding: best.qd,
        iops: r.tests[i].total.iops,
        mb_s: r.tests[i].total.mb_s,
        lat_us_mean: None,
        lat_us_p50: None,
        lat_us_p99: None,
        per_second_iops: vec![],
    };
    s.size_sweep.push(at(&r, best.test_idx as usize, 8192));
    let t = test(
        &format!("randread 64K qd {}", best.qd),
        best.qd,
        65536,
        best.iops * 0.6,
        10,
        salt + 64,
    );
    r.tests.push(t);
    s.size_sweep.push(at(&r, r.tests.len() - 1, 65536));
    let t = test(
        &format!("randread 8K qd {}, device time", best.qd),
        best.qd,
        8192,
        best.iops,
        10,
        salt + 99,
    );
    r.tests.push(t);
    let mut l = limit(LimitKind::Device, best.iops);
    l.device_time_test_idx = Some(r.tests.len() as u32 - 1);
    s.limit = Some(l);
    r.saturation = Some(s);
    r
}

/// The index of the test at step `qd`.
fn step(r: &RunResult, qd: u32) -> usize {
    let s = r.saturation.as_ref().unwrap();
    s.steps.iter().find(|p| p.qd == qd).unwrap().test_idx as usize
}

#[test]
fn a_drain_of_3_tests_against_one_of_5_pairs_every_step_with_the_same_depth() {
    let steps = [(1, 5000.0), (2, 9000.0), (4, 15000.0), (8, 16000.0)];
    let base = saturate(3, 2, &steps, 1);
    // the run's drain took two tests more and its probe one less; its qd 4 step is 30 % slower
    // and its ramp stopped at qd 4
    let slower = [(1, 5000.0), (2, 9000.0), (4, 10500.0)];
    let run = saturate(5, 1, &slower, 2);
    let p = pair_tests(&base, &run);
    assert_eq!(p.by, PairedBy::SaturatePart);
    // every step with the step of its depth, however long each drain took
    for qd in [1, 2, 4] {
        let pair = p.pairs.iter().find(|x| x.base == step(&base, qd)).unwrap();
        assert_eq!(pair.run, step(&run, qd), "qd {qd}: {p:?}");
        assert_eq!(pair.part, Some(PartKind::Step));
    }
    // the drain's tests by their order within it, the probe's within the probe
    for k in 0..3 {
        let pair = p.pairs.iter().find(|x| x.base == k).unwrap();
        assert_eq!((pair.run, pair.part), (k, Some(PartKind::Drain)));
        assert!(!pair.judged(), "the bucket's tests are shown, not judged");
    }
    let probe = p.pairs.iter().find(|x| x.base == 3).unwrap();
    assert_eq!((probe.run, probe.part), (5, Some(PartKind::Refill)));
    // the bucket's and the steps' pairs each ran one workload
    let at_once = [PartKind::Drain, PartKind::Refill, PartKind::Step];
    for x in p
        .pairs
        .iter()
        .filter(|x| x.part.is_some_and(|k| at_once.contains(&k)))
    {
        let (b, r) = (&base.tests[x.base], &run.tests[x.run]);
        assert!(same_workload(b, r), "{} against {}", b.name, r.name);
    }
    // the throttled point, the sweep's 64K point and the device-time test each with its own;
    // the base's qd 8 step and second probe test, and the run's last two drain tests, in one
    // run only
    let kinds: Vec<PartKind> = p.pairs.iter().filter_map(|x| x.part).collect();
    for k in [PartKind::Throttled, PartKind::Sweep, PartKind::DeviceTime] {
        assert_eq!(kinds.iter().filter(|&&x| x == k).count(), 1, "{k:?}");
    }
    assert_eq!(p.base_only, vec![4, step(&base, 8)]);
    assert_eq!(p.run_only, vec![3, 4]);

    // the regression is the qd 4 step's, judged on the qd 4 pair, and no other pair regressed
    let th = Thresholds::default();
    let regressed: Vec<&str> = p
        .pairs
        .iter()
        .filter(|x| x.judged())
        .filter(|x| {
            let m = test_metrics(&base.tests[x.base], &run.tests[x.run], &th);
            m.iter().any(|m| {
                m.metric == MetricName::Iops && m.verdict == Some(ChangeVerdict::Regression)
            })
        })
        .map(|x| base.tests[x.base].name.as_str())
        .collect();
    // the throttled point, the sweep and the device-time test ran at the best depth: qd 8 in
    // the base, qd 4 in the run, so they are different workloads and not judged
    assert_eq!(regressed, vec!["randread 8K qd 4"]);
}

#[test]
fn paired_by_position_the_same_runs_set_each_step_beside_another_depth() {
    // what the pairing mends: by position, the run's drain tests 4 and 5 stand where the
    // base's steps qd 1 and 2 do, and each step after beside another depth, none judged
    let steps = [(1, 5000.0), (2, 9000.0), (4, 15000.0)];
    let (base, run) = (saturate(3, 0, &steps, 1), saturate(5, 0, &steps, 2));
    for qd in [1, 2, 4] {
        let i = step(&base, qd);
        assert!(!same_workload(&base.tests[i], &run.tests[i]), "qd {qd}");
    }
    let p = pair_tests(&base, &run);
    assert!(p
        .pairs
        .iter()
        .all(|x| same_workload(&base.tests[x.base], &run.tests[x.run])));
    assert_eq!(p.base_only, Vec::<usize>::new());
    assert_eq!(p.run_only, vec![3, 4]);
}

#[test]
fn the_repeats_of_a_step_pair_by_their_number() {
    // `--repeat 3`: each step three tests, the median's recorded
    let mut r = run(&FixtureRun::default());
    r.command = Some(RunCommand::Saturate);
    r.tests.clear();
    let mut s = Saturation::default();
    for qd in [1, 2] {
        for k in 1..=3 {
            let mut t = test(&format!("randread 8K qd {qd}"), qd, 8192, 1000.0, 3, k);
            t.repeat = Some(k as u32);
            r.tests.push(t);
        }
        let median = r.tests.len() - 2;
        s.steps.push(point(median, qd, None, &r.tests[median]));
    }
    r.saturation = Some(s);
    let mut other = r.clone();
    // the other run's qd 1 step ran twice only
    other.tests.remove(2);
    for p in &mut other.saturation.as_mut().unwrap().steps {
        p.test_idx = if p.qd == 1 { 1 } else { 3 };
    }
    let p = pair_tests(&r, &other);
    let pairs: Vec<(usize, usize)> = p.pairs.iter().map(|x| (x.base, x.run)).collect();
    assert_eq!(pairs, vec![(0, 0), (1, 1), (3, 2), (4, 3), (5, 4)]);
    assert_eq!(p.base_only, vec![2]);
    assert!(p.run_only.is_empty());
}

#[test]
fn other_commands_and_a_saturate_beside_another_command_pair_by_position() {
    let steps = [(1, 5000.0), (2, 9000.0)];
    let sat = saturate(3, 0, &steps, 1);
    let plain = run(&FixtureRun::default());
    for (b, r) in [(&sat, &plain), (&plain, &sat), (&plain, &plain)] {
        let p = pair_tests(b, r);
        assert_eq!(p.by, PairedBy::Position);
        assert!(p.pairs.iter().all(|x| x.base == x.run && x.part.is_none()));
    }
    // a preflight's read curve is a saturation too, but its tests keep their positions
    let mut pre = sat.clone();
    pre.command = Some(RunCommand::Preflight);
    assert_eq!(pair_tests(&pre, &pre).by, PairedBy::Position);
    // saved before the command was recorded: a saturation without a preflight is saturate's
    let mut old = sat.clone();
    old.command = None;
    assert_eq!(pair_tests(&old, &sat).by, PairedBy::SaturatePart);
    let p = pair_tests(&sat, &saturate(5, 0, &steps, 2));
    assert_eq!(p.run_only, vec![3, 4]);
}

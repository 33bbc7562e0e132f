//! Issue 37's burst bucket in the views: a later run held against a stored bucket warns the
//! tests shorter than its burst (in the run's, saturate's and preflight's text), and `compare`
//! of two saturate runs sets their knee, limit and bucket side by side (text within 80
//! columns, JSON with the judged figures). On constructed runs.

mod common;

use iocap_assess::compare::{ChangeVerdict, Thresholds};
use iocap_model::fixture::{bucket, limit};
use iocap_model::*;
use iocap_report::compare::{compare, render_json, render_text, Side};

/// A saturate run with its knee at `knee`, a limit and a bucket.
fn saturate(salt: u64, knee: u32, l: Limit, b: BurstBucket) -> RunResult {
    let mut r = common::saturation_run(&format!("run {salt}"), salt, 1.0, 1.0);
    let s = r.saturation.as_mut().unwrap();
    s.knee_qd = Some(knee);
    s.limit = Some(l);
    s.bucket = Some(b);
    r
}

#[test]
fn compare_sets_two_saturate_runs_knee_limit_and_bucket_side_by_side() {
    let base = saturate(
        1,
        16,
        limit(LimitKind::Device, 42_600.0),
        bucket(3200.0, 200.0),
    );
    let run = saturate(
        2,
        8,
        limit(LimitKind::IopsCap, 2_000.0),
        bucket(1600.0, 150.0),
    );
    let c = compare(&base, &[run], &Thresholds::default());
    let s = c.runs[0]
        .saturation
        .as_ref()
        .expect("both are saturate runs");
    assert_eq!(
        (s.base_limit, s.run_limit),
        (Some(LimitKind::Device), Some(LimitKind::IopsCap))
    );
    // the baseline fell a quarter, beyond the threshold and the noise: a regression that the
    // exit status counts, named after the base's first test
    let flag = c.runs[0]
        .regressions
        .iter()
        .find(|f| f.metric.name() == "bucket_baseline_iops")
        .expect("the baseline is a regression");
    assert_eq!(flag.change_pct, -25.0);
    assert_eq!(
        (flag.test_index, flag.test.as_str()),
        (0, "randread 8K qd 1")
    );
    assert_eq!(c.regression_count, c.runs[0].regressions.len());
    // the cap that appeared is called out, not counted
    assert!(
        !c.runs[0]
            .regressions
            .iter()
            .any(|f| f.metric.name() == "limit_iops"),
        "a device limit against a cap is shown, not judged"
    );
    let text = render_text(&c);
    insta::assert_snapshot!(text
        .lines()
        .skip_while(|l| !l.starts_with("saturation:"))
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n"));
    assert!(
        text.lines().all(|l| l.chars().count() <= 80),
        "wider than 80 columns:\n{text}"
    );
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "called out: a cap appeared: the base met the device's own limit, this run an IOPS \
             cap near 2,000 IOPS"
        ),
        "{text}"
    );
    assert!(
        flat.contains("baseline IOPS -25.0 % (randread 8K qd 1"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&render_json(&c)).unwrap();
    let sat = &v["runs"][0]["saturation"];
    assert_eq!(sat["base_limit"], "device");
    assert_eq!(sat["run_limit"], "iops_cap");
    let m = sat["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "bucket_baseline_iops")
        .unwrap();
    assert_eq!(
        (m["base"].as_f64(), m["run"].as_f64()),
        (Some(200.0), Some(150.0))
    );
    assert_eq!(m["verdict"], "regression");
    assert_eq!(m["test_index"], 0);
}

#[test]
fn a_same_cap_lower_is_a_regression_and_a_higher_baseline_is_better() {
    let th = Thresholds::default();
    let base = saturate(
        1,
        16,
        limit(LimitKind::IopsCap, 3_000.0),
        bucket(3200.0, 200.0),
    );
    let run = saturate(
        2,
        16,
        limit(LimitKind::IopsCap, 2_000.0),
        bucket(3200.0, 260.0),
    );
    let c = compare(&base, &[run], &th);
    let r = &c.runs[0];
    assert!(r
        .regressions
        .iter()
        .any(|f| f.metric.name() == "limit_iops"));
    assert!(r
        .improvements
        .iter()
        .any(|f| f.metric.name() == "bucket_baseline_iops"));
    let s = r.saturation.as_ref().unwrap();
    assert!(s.notes.is_empty(), "{:?}", s.notes);
    let knee = s
        .metrics
        .iter()
        .find(|m| m.metric.metric.name() == "knee_qd");
    assert_eq!(knee.unwrap().metric.verdict, None::<ChangeVerdict>);
    // runs without a saturation have no such section
    let plain = iocap_model::fixture::run(&Default::default());
    let c = compare(&plain, std::slice::from_ref(&plain), &th);
    assert!(c.runs[0].saturation.is_none());
    assert!(!render_json(&c).contains("\"saturation\""));
}

/// The bucket a stored `saturate --bucket` measured on the fixture's target: 3,200 credits of
/// 8K reads over a baseline of 200 IOPS.
fn stored() -> RunResult {
    let mut r = iocap_model::fixture::run(&Default::default());
    r.command = Some(RunCommand::Saturate);
    r.saturation = Some(Saturation {
        bucket: Some(bucket(3200.0, 200.0)),
        ..Saturation::default()
    });
    r
}

#[test]
fn a_test_shorter_than_the_stored_burst_is_warned_in_every_text_view() {
    // a saturate run's steps of 5 s at 4,100 IOPS and up: the first is not inside 3,200
    // credits (19,500 above the baseline); one short step is
    let mut sat = common::saturation_run("later", 3, 1.0, 1.0);
    sat.tests[0].total.ios = 1500;
    sat.tests[0].targets[0].total.ios = 1500;
    sat.tests[0].targets[0].total.bytes = 1500 * 8192;
    iocap_assess::stored_bucket::hold(&mut sat, &stored());
    let b = sat.stored_bucket.as_ref().unwrap();
    assert_eq!(b.inside.len(), 1, "{:?}", b.inside);
    let text = iocap_report::run_text(&sat);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "warning: randread 8K qd 1: 300 IOPS over 7 s with its warm-up, shorter than the \
             32 s"
        ),
        "{text}"
    );
    assert!(flat.ends_with("plan on 200 IOPS"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    // the HTML report lists it with the test's warnings
    let html = iocap_report::html::render(std::slice::from_ref(&sat));
    let warnings = &html[html.find(r#"<section id="warnings">"#).unwrap()..];
    assert!(
        warnings.contains("randread 8K qd 1: 300 IOPS over 7 s with its warm-up"),
        "{warnings}"
    );
    // `run`'s view shows it as the test's warning
    let mut run = iocap_model::fixture::run(&iocap_model::fixture::FixtureRun {
        iops: 900.0,
        duration_s: 2,
        ..Default::default()
    });
    run.command = Some(RunCommand::Run);
    run.tests[0].spec.warmup_s = 0.0;
    iocap_assess::stored_bucket::hold(&mut run, &stored());
    let text = iocap_report::text::single_run_text(&run);
    assert!(
        text.contains("warning: randread 8K: 900 IOPS for 2 s"),
        "{text}"
    );
    // preflight's, among its warnings
    let mut pre = run.clone();
    pre.tests[0].warnings.clear();
    pre.stored_bucket = None;
    pre.command = Some(RunCommand::Preflight);
    pre.set(Payload::Preflight(common::preflight()));
    iocap_assess::stored_bucket::hold(&mut pre, &stored());
    let text = iocap_report::run_text(&pre);
    assert!(
        text.contains("warning: randread 8K: 900 IOPS for 2 s"),
        "{text}"
    );
    let html = iocap_report::html::render(std::slice::from_ref(&pre));
    assert!(
        html.contains("randread 8K: 900 IOPS for 2 s"),
        "preflight's HTML warnings"
    );
    // no stored bucket, nothing said
    let mut none = run.clone();
    none.tests[0].warnings.clear();
    none.stored_bucket = None;
    assert!(!iocap_report::run_text(&none).contains("warning"));
}

/// `r` with a bucket's drain of `n` tests of 5 s before its steps, as `saturate --bucket`
/// records one: the steps' and points' indexes moved on, the drain's seconds in the bucket.
fn with_drain(mut r: RunResult, n: usize) -> RunResult {
    let mut chunk = r.tests[0].clone();
    chunk.name = "randread 8K qd 32, bucket".into();
    chunk.spec.qd = 32;
    let drain = vec![chunk; n];
    let s = r.saturation.as_mut().unwrap();
    for p in s.steps.iter_mut().chain(&mut s.throttled) {
        p.test_idx += n as u32;
    }
    let mut b = bucket(3200.0, 200.0);
    b.per_second_iops = drain
        .iter()
        .flat_map(|t| &t.per_second)
        .map(|x| x.iops)
        .collect();
    s.bucket = Some(b);
    r.tests.splice(0..0, drain);
    r
}

/// Issue 37: a drain that took 3 tests in the base and 5 in the run no longer shifts the
/// steps: each is set beside the step of its depth and judged there, the drain's tests beside
/// each other by order (shown, not judged), and the run's two more in the run only.
#[test]
fn two_saturate_runs_pair_their_steps_by_depth_whatever_their_drains_took() {
    let base = with_drain(common::saturation_run("base", 1, 1.0, 1.0), 3);
    let mut run = with_drain(common::saturation_run("run", 2, 1.0, 1.0), 5);
    // the run's qd 16 step (its 10th test) 30 % slower
    let qd16 = &mut run.tests[5 + 4];
    assert_eq!(qd16.spec.qd, 16);
    qd16.total.iops *= 0.7;
    qd16.total.mb_s *= 0.7;
    for s in &mut qd16.per_second {
        s.iops *= 0.7;
        s.mb_s *= 0.7;
    }
    let c = compare(&base, &[run], &Thresholds::default());
    let r = &c.runs[0];
    for t in &r.tests {
        assert!(
            !t.different_workload,
            "{} against {}",
            t.base_name, t.run_name
        );
        assert_eq!(t.run_index - t.index, if t.index < 3 { 0 } else { 2 });
    }
    assert_eq!(r.tests.len(), base.tests.len());
    let flags: Vec<(&str, usize, &str)> = r
        .regressions
        .iter()
        .map(|f| (f.test.as_str(), f.test_index, f.metric.name()))
        .collect();
    assert_eq!(
        flags,
        [
            ("randread 8K qd 16", 7, "iops"),
            ("randread 8K qd 16", 7, "mb_s")
        ]
    );
    // the drain's pairs: shown, never judged
    let drained = r.tests.iter().filter(|t| t.index < 3);
    assert!(drained
        .flat_map(|t| &t.metrics)
        .all(|m| m.verdict.is_none()));
    let unmatched: Vec<(Side, usize)> = r.unmatched.iter().map(|u| (u.side, u.index)).collect();
    assert_eq!(unmatched, [(Side::Run, 3), (Side::Run, 4)]);
    let text = render_text(&c);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("test 8 (randread 8K qd 16), the run's test 10: randread 8K, qd 16"),
        "{text}"
    );
    assert!(
        flat.contains("a test of the burst bucket's drain or refill: shown, not checked"),
        "{text}"
    );
    assert!(
        flat.contains(
            "unmatched: test 4 (randread 8K, qd 32 x 1 thread, O_DIRECT, io_uring) only in \
             the run"
        ),
        "{text}"
    );
    assert!(!flat.contains("different workload"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let v: serde_json::Value = serde_json::from_str(&render_json(&c)).unwrap();
    let r = &v["runs"][0];
    assert_eq!(r["paired_by"], "saturate_part");
    assert_eq!(
        (&r["tests"][7]["index"], &r["tests"][7]["run_index"]),
        (&serde_json::json!(7), &serde_json::json!(9))
    );
    assert_eq!(r["tests"][7]["part"], "step");
    assert_eq!(r["tests"][0]["part"], "drain");
    // by position (any other command), no part is named
    let plain = iocap_model::fixture::run(&Default::default());
    let v: serde_json::Value = serde_json::from_str(&render_json(&compare(
        &plain,
        std::slice::from_ref(&plain),
        &Thresholds::default(),
    )))
    .unwrap();
    assert_eq!(v["runs"][0]["paired_by"], "position");
    assert!(v["runs"][0]["tests"][0].get("part").is_none());
    assert_eq!(v["runs"][0]["tests"][0]["run_index"], 0);
}

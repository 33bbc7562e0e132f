//! Issue 37's burst bucket in the views: a later run held against a stored bucket warns the
//! tests shorter than its burst (in the run's, saturate's and preflight's text), and `compare`
//! of two saturate runs sets their knee, limit and bucket side by side (text within 80
//! columns, JSON with the judged figures). On constructed runs.

mod common;

use iocap_assess::compare::{ChangeVerdict, Thresholds};
use iocap_model::*;
use iocap_report::compare::{compare, render_json, render_text};

/// A limit of `kind` at `rate` (IOPS, or bytes per second for a throughput cap).
use iocap_model::fixture::limit;

/// A bucket of `credit` I/Os over `baseline` IOPS: 4 s at 1,000 IOPS, then 20 s at the
/// baseline (±2 %).
fn bucket(credit: f64, baseline: f64) -> BurstBucket {
    let mut drain = vec![1000.0; 4];
    drain.extend((0..20).map(|i| baseline * (1.0 + 0.02 * (f64::from(i) * 2.3).sin())));
    BurstBucket {
        bs_bytes: 8192,
        qd: 32,
        per_second_iops: drain,
        drop: Some(LevelDrop {
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

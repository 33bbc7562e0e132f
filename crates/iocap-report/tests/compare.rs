//! Regression detection on constructed runs: what `iocap compare` flags, what it leaves alone,
//! and what it reports as changed around the figures.

use iocap_assess::compare::{ChangeVerdict, Thresholds};
use iocap_model::fixture::{self, FixtureRun};
use iocap_model::*;
use iocap_report::compare::{compare, render_json, render_text, Comparison};

/// Base IOPS: the fixture samples at most 200,000 I/Os and scales by a whole factor, so IOPS
/// are exact up to 20,000 for a 10 s run.
const IOPS: f64 = 15_000.0;

fn base() -> RunResult {
    fixture::run(&FixtureRun {
        label: Some("before".into()),
        iops: IOPS,
        ..FixtureRun::default()
    })
}

/// A run like the base, started a day later with a different salt, changed by `f`.
fn run(f: impl FnOnce(&mut FixtureRun)) -> RunResult {
    let mut fr = FixtureRun {
        started_unix_s: FixtureRun::default().started_unix_s + 86_400,
        salt: 1,
        label: Some("after".into()),
        iops: IOPS,
        ..FixtureRun::default()
    };
    f(&mut fr);
    fixture::run(&fr)
}

/// `text` with its lines joined and its runs of spaces one: what it says, however it wraps.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cmp(r: RunResult) -> Comparison {
    compare(&base(), &[r], &Thresholds::default())
}

fn flagged(c: &Comparison) -> Vec<String> {
    c.runs[0]
        .regressions
        .iter()
        .map(|f| f.metric.name().to_string())
        .collect()
}

/// The base with p99 (and only p99) of its one test scaled by `f`.
fn with_p99(f: f64) -> RunResult {
    let mut r = base();
    r.run_id.push('x');
    let l = r.tests[0].total.lat_us.as_mut().unwrap();
    l.p99 *= f;
    r
}

#[test]
fn a_quarter_fewer_iops_is_a_regression() {
    let c = cmp(run(|f| f.iops = 11_250.0));
    let got = flagged(&c);
    assert!(got.contains(&"iops".to_string()), "{got:?}");
    assert!(got.contains(&"mb_s".to_string()), "{got:?}");
    assert!(c.has_regression());
    let iops = &c.runs[0].regressions[0];
    assert!((iops.change_pct + 25.0).abs() < 0.5, "{}", iops.change_pct);
    let text = render_text(&c);
    assert!(text.contains("REGRESSION"), "{text}");
    assert!(
        text.contains("2 regressions: IOPS -25.0 % (randread 8K, p < 0.001), MB/s"),
        "{text}"
    );
}

#[test]
fn five_percent_fewer_iops_is_noise() {
    let c = cmp(run(|f| f.iops = 14_250.0));
    assert!(!c.has_regression(), "{:?}", flagged(&c));
    assert!(c.runs[0].improvements.is_empty());
    let text = render_text(&c);
    assert!(
        text.contains("no regression beyond thresholds (IOPS/MB/s -10 %, p99 +20 %)"),
        "{text}"
    );
    assert!(!text.contains("REGRESSION"));
}

#[test]
fn p99_up_30_pct_is_flagged_15_pct_is_not() {
    let c = cmp(with_p99(1.3));
    assert_eq!(flagged(&c), ["lat_us_p99"]);
    assert!(render_text(&c).contains("1 regression: p99 +30.0 % (randread 8K)"));
    let c = cmp(with_p99(1.15));
    assert!(!c.has_regression(), "{:?}", flagged(&c));
}

#[test]
fn slower_median_latency_shows_through_the_tail() {
    // The fixture scales the whole distribution with p50: 50 % slower is a p99 regression.
    let c = cmp(run(|f| f.p50_us = 270.0));
    assert!(flagged(&c).contains(&"lat_us_p99".to_string()));
}

#[test]
fn thresholds_are_honoured() {
    let r = run(|f| f.iops = 14_250.0);
    let strict = Thresholds {
        iops_drop_pct: 2.0,
        mbps_drop_pct: 50.0,
        p99_rise_pct: 20.0,
    };
    let c = compare(&base(), std::slice::from_ref(&r), &strict);
    assert_eq!(flagged(&c), ["iops"]);
    let text = render_text(&c);
    assert!(text.contains("1 regression: IOPS -5.0 %"), "{text}");

    let lax = Thresholds {
        iops_drop_pct: 30.0,
        mbps_drop_pct: 30.0,
        p99_rise_pct: 50.0,
    };
    let c = compare(&base(), &[run(|f| f.iops = 11_250.0)], &lax);
    assert!(!c.has_regression());
    assert!(render_text(&c).contains("(IOPS/MB/s -30 %, p99 +50 %)"));
    let c = compare(&base(), &[with_p99(1.3)], &lax);
    assert!(!c.has_regression());

    // Unequal IOPS and MB/s thresholds are both named.
    let c = compare(&base(), &[base()], &strict);
    assert!(render_text(&c).contains("(IOPS -2 %, MB/s -50 %, p99 +20 %)"));
}

#[test]
fn an_improvement_is_not_a_regression() {
    let c = cmp(run(|f| {
        f.iops = 19_500.0;
        f.p50_us = 120.0;
    }));
    assert!(!c.has_regression(), "{:?}", flagged(&c));
    let better: Vec<_> = c.runs[0]
        .improvements
        .iter()
        .map(|f| f.metric.name())
        .collect();
    assert!(better.contains(&"iops"), "{better:?}");
    assert!(better.contains(&"lat_us_p99"), "{better:?}");
    let text = render_text(&c);
    assert!(
        text.contains("better: IOPS +30.0 % (randread 8K, p < 0.001)"),
        "{text}"
    );
    assert!(text.contains("no regression beyond thresholds"));
}

fn differences(c: &Comparison) -> Vec<(String, String, String)> {
    let r = &c.runs[0];
    r.differences
        .iter()
        .chain(r.tests.iter().flat_map(|t| &t.differences))
        .map(|d| (d.field.clone(), d.base.clone(), d.run.clone()))
        .collect()
}

#[test]
fn changes_around_the_figures_are_listed() {
    let mut r = run(|f| {
        f.kernel = "6.8.0-45-generic".into();
        f.hostname = "db02".into();
    });
    let t = &mut r.tests[0];
    t.spec.qd = 32;
    t.spec.engine = EngineChoice::Psync;
    t.engine = iocap_model::Engine::Psync;
    t.engine_features.clear();
    t.targets[0].fs_type = Some("ext4".into());
    r.iocap_version = "0.2.0".into();
    let c = cmp(r);
    let d = differences(&c);
    for want in [
        ("host.kernel", "6.1.0-27-amd64", "6.8.0-45-generic"),
        ("host.hostname", "db01", "db02"),
        ("spec.qd", "16", "32"),
        ("spec.engine", "auto", "psync"),
        ("engine", "io_uring", "psync"),
        (
            "engine_features",
            "registered_buffers, registered_files",
            "",
        ),
        ("targets[0].fs_type", "xfs", "ext4"),
        ("iocap_version", "0.1.0", "0.2.0"),
    ] {
        let want = (want.0.to_string(), want.1.to_string(), want.2.to_string());
        assert!(d.contains(&want), "{want:?} missing from {d:?}");
    }
    // The test name is not a difference, nor is anything that did not change.
    assert!(!d
        .iter()
        .any(|x| x.0.ends_with(".name") || x.0 == "name" || x.0 == "spec.bs_bytes"));
    let text = render_text(&c);
    assert!(
        text.contains("host.kernel: 6.1.0-27-amd64 → 6.8.0-45-generic"),
        "{text}"
    );
    assert!(text.contains("test 1 spec.qd: 16 → 32"), "{text}");
}

#[test]
fn identical_runs_have_no_differences() {
    let c = cmp(run(|_| {}));
    assert!(differences(&c).is_empty(), "{:?}", differences(&c));
    assert!(render_text(&c).contains("no differences in spec, engine, host or devices"));
}

#[test]
fn a_different_workload_is_shown_but_not_flagged() {
    let c = cmp(run(|f| {
        f.rw = RwMode::RandWrite;
        f.iops = 5_000.0;
        f.p50_us = 900.0;
    }));
    let t = &c.runs[0].tests[0];
    assert!(t.different_workload);
    assert!(t.metrics.iter().all(|m| m.verdict.is_none()));
    assert!(!c.has_regression());
    let iops = &t.metrics[0];
    assert!(iops.run.unwrap() < iops.base.unwrap());
    let text = render_text(&c);
    assert!(text.contains("different workload"), "{text}");
    assert!(text.contains("spec.rw: randread → randwrite"), "{text}");
}

#[test]
fn tests_in_one_run_only_are_unmatched() {
    let mut b = base();
    let mut extra = run(|f| f.rw = RwMode::RandWrite).tests.remove(0);
    extra.name = "randwrite 8K".into();
    b.tests.push(extra.clone());
    b.tests.push(extra);
    let c = compare(&b, &[run(|_| {})], &Thresholds::default());
    let r = &c.runs[0];
    assert_eq!(r.tests.len(), 1);
    assert_eq!(r.unmatched.len(), 2);
    assert_eq!(r.unmatched[0].side.name(), "base");
    assert_eq!(r.unmatched[0].index, 1);
    assert!(render_text(&c).contains("unmatched: test 2 (randwrite 8K"));

    // And the other way round.
    let c = compare(&base(), &[b], &Thresholds::default());
    assert_eq!(c.runs[0].unmatched.len(), 2);
    assert_eq!(c.runs[0].unmatched[1].side.name(), "run");
    assert!(flat(&render_text(&c)).contains("only in the run"));
}

#[test]
fn zero_and_missing_figures_neither_panic_nor_print_nan() {
    let zero = fixture::run(&FixtureRun {
        iops: 0.0,
        ..FixtureRun::default()
    });
    assert!(zero.tests[0].total.lat_us.is_none());
    for (b, r) in [(&zero, &base()), (&base(), &zero), (&zero, &zero)] {
        let c = compare(b, std::slice::from_ref(r), &Thresholds::default());
        let text = render_text(&c);
        let json = render_json(&c);
        for s in [&text, &json] {
            assert!(!s.to_lowercase().contains("nan"), "{s}");
            assert!(!s.contains("inf"), "{s}");
        }
        serde_json::from_str::<serde_json::Value>(&json).unwrap();
    }
    // Against a zero base nothing is defined, so nothing is flagged.
    let c = compare(&zero, &[base()], &Thresholds::default());
    assert!(!c.has_regression());
    assert!(c.runs[0].tests[0].metrics[0].change_pct.is_none());
    // Everything lost against a working base: -100 % is a regression.
    let c = compare(&base(), &[zero], &Thresholds::default());
    assert_eq!(flagged(&c), ["iops", "mb_s"]);

    // NaN thresholds and NaN figures: no flag, no NaN printed.
    let mut odd = base();
    odd.tests[0].total.iops = f64::NAN;
    let th = Thresholds {
        iops_drop_pct: f64::NAN,
        ..Thresholds::default()
    };
    let c = compare(&base(), &[odd], &th);
    assert!(!render_text(&c).contains("NaN"));
    assert!(!render_json(&c).contains("NaN"));
}

#[test]
fn no_tests_and_no_runs() {
    let mut empty = base();
    empty.tests.clear();
    let c = compare(&empty, &[empty.clone()], &Thresholds::default());
    assert!(!c.has_regression());
    render_text(&c);
    let c = compare(&base(), &[], &Thresholds::default());
    assert_eq!(c.regressions(), 0);
    assert!(render_text(&c).contains("nothing to compare"));
}

#[test]
fn several_runs_are_each_compared_with_the_base() {
    let c = compare(
        &base(),
        &[run(|f| f.iops = 11_250.0), run(|_| {}), with_p99(1.5)],
        &Thresholds::default(),
    );
    assert_eq!(c.runs.len(), 3);
    assert_eq!(c.runs[0].regressions.len(), 2);
    assert_eq!(c.runs[1].regressions.len(), 0);
    assert_eq!(c.runs[2].regressions.len(), 1);
    assert_eq!(c.regressions(), 3);
    let text = render_text(&c);
    assert_eq!(text.matches(" vs base ").count(), 3);
    assert!(
        text.contains("(after) vs base 20261122T020000-000000 (before)"),
        "{text}"
    );
}

#[test]
fn per_target_figures_are_matched_by_index() {
    let two = |f: &mut FixtureRun| f.targets = vec!["/data/a.dat".into(), "/log/b.dat".into()];
    let mut b = base();
    b = {
        let mut fr = FixtureRun::default();
        two(&mut fr);
        fr.label = b.label.clone();
        fixture::run(&fr)
    };
    let r = run(|f| {
        two(f);
        f.targets[1] = "/log2/b.dat".into();
    });
    let c = compare(&b, &[r], &Thresholds::default());
    let t = &c.runs[0].tests[0];
    assert_eq!(t.targets.len(), 2);
    assert_eq!(t.targets[1].base_path.as_deref(), Some("/log/b.dat"));
    assert_eq!(t.targets[1].run_path.as_deref(), Some("/log2/b.dat"));
    assert!(t.targets[0].metrics.iter().all(|m| m.base.is_some()));
    let text = render_text(&c);
    assert!(text.contains("/log/b.dat → /log2/b.dat"), "{text}");
    assert!(differences(&c).contains(&(
        "spec.targets[1].path".into(),
        "/log/b.dat".into(),
        "/log2/b.dat".into()
    )));
}

#[test]
fn json_carries_the_regression_list() {
    let c = cmp(run(|f| f.iops = 11_250.0));
    let json = render_json(&c);
    assert!(json.ends_with("}\n"));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["regression_count"], 2);
    assert_eq!(v["thresholds"]["iops_drop_pct"], 10.0);
    let regs = v["runs"][0]["regressions"].as_array().unwrap();
    assert_eq!(regs.len(), 2);
    assert_eq!(regs[0]["metric"], "iops");
    assert_eq!(regs[0]["test"], "randread 8K");
    assert!(regs[0]["change_pct"].as_f64().unwrap() < -24.0);
    assert_eq!(
        v["runs"][0]["tests"][0]["metrics"][0]["verdict"],
        "regression"
    );
    assert_eq!(v["base"]["label"], "before");
}

#[test]
fn a_configuration_change_between_runs_is_shown() {
    let check = |id: &str, subject: &str, evidence: &str| ConfigCheck {
        id: id.into(),
        severity: iocap_model::Severity::Pass,
        subject: subject.into(),
        evidence: evidence.into(),
    };
    let mut b = base();
    b.config = vec![
        check("device.scheduler", "vda", "scheduler mq-deadline"),
        check("device.write_cache", "vda", "write_cache \"write back\""),
    ];
    let mut r = run(|_| {});
    r.config = vec![
        check("device.scheduler", "vda", "scheduler none"),
        check("device.write_cache", "vda", "write_cache \"write back\""),
    ];
    let c = compare(&b, &[r], &Thresholds::default());
    // a line longer than the terminal wraps at a space
    let text = flat(&render_text(&c));
    assert!(
        text.contains("config.device.scheduler (vda)") && text.contains("scheduler none"),
        "{text}"
    );
    assert!(
        !text.contains("config.device.write_cache"),
        "unchanged checks are not listed"
    );
    // a run saved before snapshots existed shows no configuration differences
    let mut r = run(|_| {});
    r.config.clear();
    let c = compare(&b, &[r], &Thresholds::default());
    assert!(!render_text(&c).contains("config."));
}

#[test]
fn readings_that_change_by_nature_are_no_difference() {
    let check = |id: &str, evidence: &str| ConfigCheck {
        id: id.into(),
        severity: iocap_model::Severity::Pass,
        subject: "/data".into(),
        evidence: evidence.into(),
    };
    let mut b = base();
    b.config = vec![
        check("fs.free_space", "f_bavail x f_frsize = 812.4 GB free"),
        check("cpu.frequency", "mean 96 % of max"),
        check("mount.atime", "noatime"),
    ];
    let mut r = run(|_| {});
    r.config = vec![
        check("fs.free_space", "f_bavail x f_frsize = 790.1 GB free"),
        check("cpu.frequency", "mean 88 % of max"),
        check("mount.atime", "noatime"),
    ];
    let c = compare(&b, std::slice::from_ref(&r), &Thresholds::default());
    assert_eq!(differences(&c), Vec::new(), "{}", render_text(&c));
    assert!(!render_text(&c).contains("free_space"));
    // a real change beside them still shows
    r.config[2].evidence = "strictatime".into();
    let c = compare(&b, &[r], &Thresholds::default());
    let text = render_text(&c);
    assert!(text.contains("config.mount.atime (/data)"), "{text}");
    assert!(!text.contains("free_space") && !text.contains("cpu.frequency"));
}

/// `r` with its one test's per-second IOPS (and MB/s, at 8 KiB) set to `iops`, and its
/// headline IOPS and MB/s to their mean.
fn with_series(mut r: RunResult, iops: &[f64]) -> RunResult {
    let t = &mut r.tests[0];
    t.per_second = iops
        .iter()
        .enumerate()
        .map(|(i, &v)| SecondSample {
            t_s: i as f64 + 1.0,
            iops: v,
            mb_s: v * 8192.0 / 1e6,
            lat_us_mean: None,
            lat_us_p99: None,
            submit_each_pct: None,
            read: None,
            write: None,
        })
        .collect();
    t.total.iops = iops.iter().sum::<f64>() / iops.len() as f64;
    t.total.mb_s = t.total.iops * 8192.0 / 1e6;
    r
}

/// `n` seconds around `level`, spread by ±`spread` (a fraction) in a deterministic jumble.
fn noisy(n: usize, level: f64, spread: f64, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let u = (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            level * (1.0 + spread * u)
        })
        .collect()
}

#[test]
fn the_same_workload_twice_is_within_noise() {
    let b = with_series(base(), &noisy(30, 10_000.0, 0.08, 1));
    let r = with_series(run(|_| {}), &noisy(30, 10_000.0, 0.08, 2));
    let c = compare(&b, &[r], &Thresholds::default());
    assert!(!c.has_regression(), "{:?}", flagged(&c));
    let iops = &c.runs[0].tests[0].metrics[0];
    assert_eq!(iops.metric.name(), "iops");
    assert!(iops.p_value.unwrap() > 0.05, "{:?}", iops.p_value);
    let [lo, hi] = iops.base_ci95.unwrap();
    assert!(lo < 10_000.0 && 10_000.0 < hi, "{lo} {hi}");
}

#[test]
fn half_the_rate_is_a_regression_beyond_the_noise() {
    let b = with_series(base(), &noisy(30, 10_000.0, 0.08, 1));
    let r = with_series(run(|_| {}), &noisy(30, 5_000.0, 0.08, 2));
    let c = compare(&b, &[r], &Thresholds::default());
    assert!(
        flagged(&c).contains(&"iops".to_string()),
        "{:?}",
        flagged(&c)
    );
    let f = &c.runs[0].regressions[0];
    assert!(f.p_value.unwrap() < 0.05);
    let text = render_text(&c);
    assert!(text.contains("REGRESSION p < 0.001"), "{text}");
    assert!(text.contains('±'), "the intervals are shown: {text}");
}

#[test]
fn a_drop_beyond_the_threshold_but_inside_the_noise_is_not_flagged() {
    let b = with_series(base(), &noisy(12, 10_000.0, 0.4, 3));
    let r = with_series(run(|_| {}), &noisy(12, 8_700.0, 0.4, 4));
    let c = compare(&b, &[r], &Thresholds::default());
    let iops = &c.runs[0].tests[0].metrics[0];
    assert!(iops.change_pct.unwrap() < -10.0, "{:?}", iops.change_pct);
    assert_eq!(iops.verdict, Some(ChangeVerdict::WithinNoise));
    assert!(!c.has_regression());
    assert_eq!(c.regression_count, 0);
    assert_eq!(c.runs[0].within_noise[0].metric.name(), "iops");
    let text = render_text(&c);
    assert!(text.contains("within noise p = "), "{text}");
    assert!(text.contains("within noise: IOPS"), "{text}");
    let json = render_json(&c);
    assert!(json.contains("\"within_noise\""), "{json}");
}

#[test]
fn without_a_series_the_threshold_alone_decides() {
    let mut b = base();
    let mut r = run(|f| f.iops = 11_250.0);
    b.tests[0].per_second.truncate(2);
    r.tests[0].per_second.clear();
    let c = compare(&b, &[r], &Thresholds::default());
    assert!(flagged(&c).contains(&"iops".to_string()));
    assert!(c.runs[0].regressions[0].p_value.is_none());
}

#[test]
fn the_shape_of_the_written_data_is_a_difference() {
    let mut r = run(|_| {});
    r.tests[0].spec.compressible_pct = 50;
    r.tests[0].spec.dedupe_pct = 30;
    let d = differences(&cmp(r));
    for want in [
        ("spec.compressible_pct", "0", "50"),
        ("spec.dedupe_pct", "0", "30"),
    ] {
        let want = (want.0.to_string(), want.1.to_string(), want.2.to_string());
        assert!(d.contains(&want), "{want:?} not in {d:?}");
    }
}

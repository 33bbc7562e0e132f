//! How sure a figure is, as a user sees it: the interval, spread, trend and steal of every test,
//! `--until-stable` ending a steady window early and running a bursty one to its longest, and
//! `--repeat` keeping every run with the spread across them.

use predicates::prelude::*;

use crate::{iocap, json_of, run_json};

#[test]
fn every_test_carries_its_uncertainty_in_json_and_text() {
    let dir = tempfile::tempdir().unwrap();
    let v = run_json(dir.path(), &["--duration", "4s", "--rate-iops", "2000"]);
    let u = &v["tests"][0]["uncertainty"];
    let iops = &u["iops"];
    let mean = iops["mean"].as_f64().unwrap();
    // a throttled test is as steady as a test gets: 2,000 IOPS, on a quiet machine known
    // within a few percent
    assert!((mean - 2000.0).abs() < 200.0, "{u}");
    assert!(iops["ci95_low"].as_f64().unwrap() <= mean);
    assert!(iops["ci95_high"].as_f64().unwrap() >= mean);
    assert!(iops["cv_pct"].as_f64().is_some() && iops["trend_pct"].as_f64().is_some());
    assert_eq!(iops["samples"], 4);
    assert!(u["mb_s"]["mean"].as_f64().unwrap() > 0.0);
    // the verdict follows from the figures, and an unstable one says why: stable within ±5 %
    // and under 5 % stolen by the hypervisor; on a busy machine (two CPU hogs and two builds
    // beside the suite) the seconds of this test spread to ±7 to ±30 %, and 6 % was stolen
    let half = iops["ci95_half_pct"].as_f64().unwrap();
    let steal = u["steal_pct"].as_f64().unwrap();
    let reasons = u["reasons"].to_string();
    if half < 5.0 && steal < 5.0 {
        assert_eq!(u["verdict"], "stable", "{u}");
    } else {
        assert_eq!(u["verdict"], "unstable", "{u}");
        assert!(half < 5.0 || reasons.contains("95 % interval"), "{u}");
        assert!(steal < 5.0 || reasons.contains("stole"), "{u}");
    }

    let out = iocap(dir.path())
        .args(["run", "--duration", "3s", "--warmup", "0s", "--size", "16M"])
        .args(["--rate-iops", "1000", "--no-save"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("how sure: "), "{text}");
    assert!(text.contains("(95 % CI)"), "{text}");

    // too short to tell: said, not guessed
    let v = run_json(dir.path(), &["--duration", "1s"]);
    let u = &v["tests"][0]["uncertainty"];
    assert_eq!(u["verdict"], "too_short", "{u}");
    assert!(u["reasons"][0].as_str().unwrap().contains("at least 3 s"));
}

#[test]
fn until_stable_stops_a_steady_window_early_and_a_bursty_one_at_its_longest() {
    let dir = tempfile::tempdir().unwrap();
    // steady: stops once its interval is narrow, at --duration on a quiet machine, well before
    // its longest window. How long after --duration depends on the seconds a busy machine
    // disturbs (on one, a 2,000 IOPS test settled at 10 s), so what is asserted is the event:
    // it stopped because it settled (no warning), before the longest window.
    let v = run_json(
        dir.path(),
        &[
            "--duration",
            "3s",
            "--rate-iops",
            "500",
            "--until-stable",
            "5%:20s",
        ],
    );
    let t = &v["tests"][0];
    let d = t["duration_s"].as_f64().unwrap();
    assert!((3.0..19.0).contains(&d), "a steady test ran {d} s");
    assert_eq!(t["spec"]["until_stable"]["max_s"], 20.0);
    assert!(
        !t["warnings"].to_string().contains("--until-stable"),
        "{}",
        t["warnings"]
    );

    // one second in three busy: the interval never narrows, the window runs to its longest
    let v = run_json(
        dir.path(),
        &[
            "--duration",
            "3s",
            "--burst",
            "1s:2s",
            "--rate-iops",
            "1000",
            "--until-stable",
            "2%:6s",
        ],
    );
    let t = &v["tests"][0];
    let d = t["duration_s"].as_f64().unwrap();
    assert!((5.9..6.3).contains(&d), "a bursty test ran {d} s");
    let w = t["warnings"].to_string();
    assert!(
        w.contains("--until-stable 2%") && w.contains("did not settle"),
        "{w}"
    );
}

#[test]
fn until_stable_refuses_nonsense() {
    let dir = tempfile::tempdir().unwrap();
    for (arg, says) in [
        ("0", "above 0"),
        ("150%", "above 0"),
        ("2%:soon", "longest window"),
    ] {
        iocap(dir.path())
            .args(["run", "--until-stable", arg, "--no-save"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    iocap(dir.path())
        .args([
            "run",
            "--duration",
            "10s",
            "--until-stable",
            "2%:5s",
            "--no-save",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("shorter than --duration"));
    assert!(
        !dir.path().join("iocap.testfile").exists(),
        "refused before any file"
    );
}

#[test]
fn repeat_keeps_every_run_and_gives_the_spread() {
    let dir = tempfile::tempdir().unwrap();
    let v = run_json(dir.path(), &["--duration", "0.5s", "--repeat", "3"]);
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 3);
    let numbers: Vec<u64> = tests
        .iter()
        .map(|t| t["repeat"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3]);
    let r = &v["repeats"][0];
    assert_eq!(r["name"], tests[0]["name"]);
    assert_eq!(r["runs"], 3);
    let mut iops: Vec<f64> = tests
        .iter()
        .map(|t| t["total"]["iops"].as_f64().unwrap())
        .collect();
    iops.sort_by(f64::total_cmp);
    assert_eq!(r["iops"]["median"].as_f64().unwrap(), iops[1]);
    assert_eq!(r["iops"]["min"].as_f64().unwrap(), iops[0]);
    assert_eq!(r["iops"]["max"].as_f64().unwrap(), iops[2]);

    let out = iocap(dir.path())
        .args([
            "run",
            "--duration",
            "0.3s",
            "--warmup",
            "0s",
            "--size",
            "16M",
        ])
        .args(["--repeat", "2", "--no-save"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains(": 2 runs") && text.contains("median"),
        "{text}"
    );

    // a plain run has neither
    let v = run_json(dir.path(), &[]);
    assert!(v["tests"][0]["repeat"].is_null());
    assert_eq!(v["repeats"], serde_json::json!([]));
}

#[test]
fn saturate_repeats_each_step_and_takes_the_median_run() {
    let dir = tempfile::tempdir().unwrap();
    let v = json_of(
        dir.path(),
        &[
            "saturate",
            "--sizes",
            "none",
            "--step-duration",
            "0.3s",
            "--warmup",
            "0s",
            "--size",
            "16M",
            "--max-qd",
            "2",
            "--no-throttled",
            "--repeat",
            "3",
            "--output",
            "json",
            "--no-save",
        ],
    );
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 6, "two steps, three runs each");
    for (i, p) in v["saturation"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let runs: Vec<f64> = tests[i * 3..i * 3 + 3]
            .iter()
            .map(|t| t["total"]["iops"].as_f64().unwrap())
            .collect();
        let mut sorted = runs.clone();
        sorted.sort_by(f64::total_cmp);
        let at = p["test_idx"].as_u64().unwrap() as usize;
        assert!(
            (i * 3..i * 3 + 3).contains(&at),
            "step {i} points at test {at}"
        );
        assert_eq!(p["iops"].as_f64().unwrap(), sorted[1], "step {i}: {runs:?}");
    }
    assert_eq!(v["repeats"].as_array().unwrap().len(), 2);
}

/// The test: two runs of the same workload on the same file are within noise; a run
/// throttled to half the rate is a regression. Throttled runs make it deterministic on a shared
/// disk: the base and its repeat are both held at the same rate. (p99 is left out: it keeps the
/// threshold rule, and the other tests of the suite load the same disk.)
#[test]
fn compare_calls_a_rerun_within_noise_and_half_the_rate_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    let run = |rate: &str| -> String {
        let v = json_of(
            dir.path(),
            &[
                "run",
                "--duration",
                "4s",
                "--warmup",
                "0.5s",
                "--size",
                "16M",
                "--rate-iops",
                rate,
                "--db",
                db,
                "--output",
                "json",
            ],
        );
        v["run_id"].as_str().unwrap().to_string()
    };
    let (base, again, half) = (run("1000"), run("1000"), run("500"));
    // IOPS and MB/s flagged by each comparison (p99 keeps the threshold rule, and the tests
    // running beside this one load the same disk, so its tail is left out here)
    let flagged = |other: &str| -> (Vec<String>, String) {
        let out = iocap(dir.path())
            .args(["compare", &base, other, "--db", db, "--output", "json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let metrics = v["runs"][0]["regressions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["metric"].as_str().unwrap().to_string())
            .filter(|m| m == "iops" || m == "mb_s")
            .collect();
        (metrics, v["runs"][0]["tests"][0]["metrics"][0].to_string())
    };
    let (again_flags, iops) = flagged(&again);
    assert!(
        again_flags.is_empty(),
        "a rerun flagged {again_flags:?}: {iops}"
    );
    assert!(iops.contains("\"p_value\""), "{iops}");
    let (half_flags, iops) = flagged(&half);
    assert_eq!(half_flags, ["iops", "mb_s"], "{iops}");
    // and in words, with the exit code
    let out = iocap(dir.path())
        .args(["compare", &base, &half, "--fail-on-regression", "--db", db])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(1), "{text}");
    // called a regression with its p-value; how small the p-value is follows the spread of the
    // half-rate run's seconds, which a busy machine widens (p = 0.006 with two CPU hogs beside)
    assert!(text.contains("REGRESSION p "), "{text}");
    // the rate halved: -50 %, or a little less where the busy machine cost the base a few
    let change = text
        .split("IOPS -")
        .nth(1)
        .and_then(|t| t.split(' ').next()?.parse::<f64>().ok());
    assert!(change.is_some_and(|c| (45.0..=55.0).contains(&c)), "{text}");
}

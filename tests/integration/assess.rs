//! The assessing commands end to end on small files: suites (with concurrent workloads, saving
//! after every test, resuming a killed suite), saturate, scaleup and preflight.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::{iocap, json_of};

const SUITE: &str = r#"
name = "tiny"
description = "two tests, the second with the log written beside the data"
pause = "0s"

[defaults]
duration = "0.3s"
warmup = "0s"
size = "16M"

[[test]]
name = "reads"
rw = "randread"
qd = 4

[[test]]
name = "mix and log"
[[test.workload]]
role = "data"
rw = "randrw"
write_pct = 30
[[test.workload]]
role = "log"
rw = "write"
qd = 1
write_through = true
"#;

#[test]
fn a_suite_runs_concurrent_workloads_and_saves_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tiny.toml"), SUITE).unwrap();
    let logdir = dir.path().join("log");
    std::fs::create_dir(&logdir).unwrap();
    let run = json_of(
        dir.path(),
        &[
            "suite",
            "run",
            "tiny.toml",
            "--log",
            "log",
            "--db",
            "r.db",
            "--output",
            "json",
        ],
    );
    let tests = run["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 3, "one test, then two workloads together");
    assert_eq!(run["suite"]["name"], "tiny");
    assert_eq!(run["suite"]["planned"], 2);
    assert_eq!(tests[0]["group"], Value::Null);
    assert_eq!(tests[1]["group"], tests[2]["group"]);
    assert!(tests[1]["group"].is_u64());
    assert_eq!(tests[1]["role"], "data");
    assert_eq!(tests[2]["role"], "log");
    assert_eq!(
        tests[1]["duration_s"], tests[2]["duration_s"],
        "one timeline"
    );
    assert!(tests[2]["targets"][0]["path"]
        .as_str()
        .unwrap()
        .ends_with("log/iocap-log.testfile"));
    for t in tests {
        assert!(t["total"]["ios"].as_u64().unwrap() > 0, "{}", t["name"]);
    }
    let shown = json_of(
        dir.path(),
        &["show", "last", "--db", "r.db", "--output", "json"],
    );
    assert_eq!(shown, run, "the saved suite is what was printed");
}

#[test]
fn a_killed_suite_keeps_its_finished_tests_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let three = SUITE.replace("pause = \"0s\"", "pause = \"30s\"")
        + "\n[[test]]\nname = \"writes\"\nrw = \"randwrite\"\n";
    std::fs::write(dir.path().join("s.toml"), three).unwrap();
    let db = dir.path().join("r.db");
    let bin = assert_cmd::cargo::cargo_bin("iocap");
    let mut kid = std::process::Command::new(&bin)
        .current_dir(dir.path())
        .env("XDG_DATA_HOME", crate::data_home())
        .args(["suite", "run", "s.toml", "--db", "r.db"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // the first test is saved before the 30 s pause; kill the suite in that pause
    let loc = iocap_store::Location::Sqlite(db.clone());
    let mut saved = None;
    for _ in 0..300 {
        std::thread::sleep(Duration::from_millis(50));
        if let Ok(mut s) = iocap_store::Store::open(&loc) {
            if let Ok(r) = s.load("last") {
                saved = Some(r);
                break;
            }
        }
    }
    kid.kill().unwrap();
    kid.wait().unwrap();
    let first = saved.expect("the first test was saved while the suite ran");
    assert_eq!(first.tests.len(), 1);
    // history, show and the report say the run is partial and how to go on (issue 14 item 5)
    let text = |args: &[&str]| {
        let out = iocap(dir.path()).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let listed = text(&["history", "--db", "r.db"]);
    assert!(listed.contains("partial 1/3"), "{listed}");
    // the text wraps at the terminal's width: compare the words
    let shown = text(&["show", "last", "--db", "r.db"])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let suite = &first.suite.as_ref().unwrap().name;
    assert!(
        shown.contains("PARTIAL: 1 of 3 tests finished")
            && shown.contains(&format!("iocap suite run SUITE --resume {}", first.run_id))
            && shown.contains(&format!("suite '{suite}'")),
        "{shown}"
    );
    text(&["report", "last", "--db", "r.db", "-o", "partial.html"]);
    let html = std::fs::read_to_string(dir.path().join("partial.html")).unwrap();
    assert!(
        html.contains("PARTIAL: 1 of 3 tests finished"),
        "no mark in the report"
    );
    let out = iocap(dir.path())
        .args(["suite", "run", "s.toml", "--db", "r.db", "--pause", "0s"])
        .args(["--resume", &first.run_id, "--output", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["run_id"], first.run_id.as_str(), "the same run goes on");
    let shown = text(&["show", "last", "--db", "r.db"]);
    assert!(
        !shown.to_lowercase().contains("partial"),
        "a finished suite is whole: {shown}"
    );
    let names: Vec<&str> = run["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["reads", "mix and log [data]", "mix and log [log]", "writes"]
    );
    assert_eq!(
        run["tests"][0]["total"]["ios"].as_u64().unwrap(),
        first.tests[0].total.ios,
        "the finished test was not run again"
    );
    // a resume of another suite's run is refused
    let out = iocap(dir.path())
        .args([
            "suite",
            "run",
            "quick",
            "--db",
            "r.db",
            "--resume",
            &first.run_id,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn built_in_suites_list_and_show() {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path()).args(["suite", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "quick",
        "sqlio-classic",
        "oltp",
        "dss",
        "edge-matrix",
        "profile:sqlserver",
        "profile:mysql",
    ] {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
    let out = iocap(dir.path())
        .args(["suite", "show", "edge-matrix"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("96 tests"));
    let out = iocap(dir.path())
        .args(["suite", "show", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("quick"),
        "names the built-ins"
    );
}

#[test]
fn saturate_steps_the_queue_depth_and_records_the_curve() {
    let dir = tempfile::tempdir().unwrap();
    let run = json_of(
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
            "4",
            "--engine",
            "io_uring",
            "--submit",
            "each",
            "--no-save",
            "--output",
            "json",
        ],
    );
    // --submit reaches every step's test
    for t in run["tests"].as_array().unwrap() {
        assert_eq!(t["spec"]["submit"], "each", "{}", t["spec"]);
        assert!(
            t["engine_features"].to_string().contains("submit_each"),
            "{}",
            t["engine_features"]
        );
    }
    let s = &run["saturation"];
    let qds: Vec<u64> = s["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["qd"].as_u64().unwrap())
        .collect();
    assert_eq!(qds, [1, 2, 4]);
    let throttled = s["throttled"].as_array().unwrap();
    let loads: Vec<f64> = throttled
        .iter()
        .map(|p| p["load_pct"].as_f64().unwrap())
        .collect();
    assert_eq!(loads, [10.0, 50.0, 70.0, 80.0, 90.0, 100.0]);
    assert_eq!(
        run["tests"].as_array().unwrap().len(),
        9,
        "one test per point"
    );
    let max = s["max_iops"].as_f64().unwrap();
    // the 10 % point is held near its rate
    let ten = throttled[0]["iops"].as_f64().unwrap();
    assert!(ten < 0.2 * max, "10 % point ran at {ten} of {max}");
    // the steps end at --max-qd, or at a knee the noise of a shared disk put at qd 2 or 4
    let why = s["stop_reason"].as_str().unwrap();
    assert!(
        why.contains("largest queue depth") || why.contains("gained less than"),
        "{why}"
    );
}

#[test]
fn scaleup_tests_each_volume_alone_then_together() {
    let dir = tempfile::tempdir().unwrap();
    for v in ["a", "b", "c"] {
        std::fs::create_dir(dir.path().join(v)).unwrap();
    }
    let run = json_of(
        dir.path(),
        &[
            "scaleup",
            "a",
            "b",
            "c",
            "--duration",
            "0.3s",
            "--warmup",
            "0s",
            "--size",
            "16M",
            "--qd",
            "4",
            "--no-save",
            "--output",
            "json",
        ],
    );
    let s = &run["scaleup"];
    assert_eq!(s["alone"].as_array().unwrap().len(), 3);
    let together: Vec<usize> = s["together"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["paths"].as_array().unwrap().len())
        .collect();
    assert_eq!(together, [2, 3]);
    let eff = s["together"][1]["efficiency_pct"].as_f64().unwrap();
    assert!(eff > 0.0 && eff < 200.0, "{eff}");
    let out = iocap(dir.path())
        .args(["scaleup", "a", "a"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a volume twice is refused");
}

#[test]
fn preflight_gives_a_capacity_table_with_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    for v in ["data", "log", "backup"] {
        std::fs::create_dir(dir.path().join(v)).unwrap();
    }
    let run = json_of(
        dir.path(),
        &[
            "preflight",
            "--quick",
            "--timing",
            "0.3s:0.3s",
            "--size",
            "16M",
            "--data",
            "data",
            "--log",
            "log",
            "--backup",
            "backup",
            "--profile",
            "postgres",
            "--db",
            "r.db",
            "--output",
            "json",
        ],
    );
    let p = &run["preflight"];
    assert_eq!(p["profile"], "postgres");
    let rows = p["rows"].as_array().unwrap();
    let metrics: Vec<&str> = rows.iter().map(|r| r["role"].as_str().unwrap()).collect();
    assert_eq!(
        metrics,
        ["data", "data", "log", "log", "log", "data", "backup"]
    );
    for r in rows {
        assert!(["PASS", "WARN", "FAIL", "INFO"].contains(&r["verdict"].as_str().unwrap()));
        assert!(r["sentence"].as_str().unwrap().len() > 20, "{r}");
    }
    for (d, f) in [
        ("data", "iocap.testfile"),
        ("log", "iocap-log.testfile"),
        ("backup", "iocap-backup.testfile"),
    ] {
        assert!(dir.path().join(d).join(f).exists(), "{d}/{f}");
    }
    assert!(run["saturation"]["steps"].as_array().unwrap().len() >= 2);
    // the backup read and write ran together
    let groups: Vec<&Value> = run["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t["group"].is_null())
        .collect();
    assert_eq!(groups.len(), 2);
    // the text view of the saved run has the table; the report has the preflight section
    let text = iocap(dir.path())
        .args(["report", "last", "-o", "pf.html", "--db", "r.db"])
        .output()
        .unwrap();
    assert!(text.status.success());
    let html = std::fs::read_to_string(dir.path().join("pf.html")).unwrap();
    assert!(html.contains("Preflight"));
}

#[test]
fn preflight_refuses_bad_input_before_testing() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (vec!["--profile", "db2"], "sqlserver"),
        (vec!["--device-class", "tape"], "flash or rotational"),
        (vec!["--expect", "missing.toml"], "missing.toml"),
    ] {
        let out = iocap(dir.path())
            .arg("preflight")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert!(!dir.path().join("iocap.testfile").exists(), "nothing ran");
}

/// `--repeat` on a suite: every test run twice, each run of the concurrent pair its own group,
/// the spread across the runs per test, and `--until-stable` reaching every spec.
#[test]
fn a_suite_repeats_each_test_and_keeps_every_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tiny.toml"), SUITE).unwrap();
    std::fs::create_dir(dir.path().join("log")).unwrap();
    let run = json_of(
        dir.path(),
        &[
            "suite",
            "run",
            "tiny.toml",
            "--log",
            "log",
            "--db",
            "r.db",
            "--output",
            "json",
            "--repeat",
            "2",
            "--until-stable",
            "50%:1s",
        ],
    );
    let tests = run["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 6, "each test twice: 1 + 1 + 2 + 2");
    let repeats: Vec<u64> = tests
        .iter()
        .map(|t| t["repeat"].as_u64().unwrap())
        .collect();
    assert_eq!(repeats, [1, 2, 1, 1, 2, 2]);
    // the pair that ran together shares a group; its two runs do not
    assert_eq!(tests[2]["group"], tests[3]["group"]);
    assert_eq!(tests[4]["group"], tests[5]["group"]);
    assert_ne!(tests[2]["group"], tests[4]["group"]);
    assert_eq!(
        run["repeats"].as_array().unwrap().len(),
        3,
        "{}",
        run["repeats"]
    );
    for t in tests {
        assert_eq!(t["spec"]["until_stable"]["ci_pct"], 50.0, "{}", t["name"]);
    }
}

//! `iocap characterise TRACE --against RUN` (issue 25, section 2): a workload placed on a saved
//! saturate run's curve, end to end on a small file and a constructed fio iolog.

use std::path::Path;

use serde_json::Value;

use crate::{iocap, json_of};

/// Four seconds of 8K random reads at 100, 400, 50 and 200 IOPS (fio's iolog v3, µs).
fn iolog(dir: &Path) -> std::path::PathBuf {
    let log = dir.join("w.log");
    let mut text = String::from("fio version 3 iolog\n0 /dev/sdx add\n0 /dev/sdx open\n");
    for (s, n) in [100u64, 400, 50, 200].into_iter().enumerate() {
        for i in 0..n {
            let t = s as u64 * 1_000_000 + i * (1_000_000 / n);
            let off = (t * 7919 % 100_000) * 8192;
            text.push_str(&format!("{t} /dev/sdx read {off} 8192\n"));
        }
    }
    std::fs::write(&log, text).unwrap();
    log
}

/// A short saturate run saved into `db`; its JSON.
fn saturate(dir: &Path, db: &Path) -> Value {
    let db = db.to_str().unwrap();
    json_of(
        dir,
        &[
            "saturate",
            "--step-duration",
            "0.3s",
            "--warmup",
            "0s",
            "--size",
            "16M",
            "--max-qd",
            "4",
            "--no-throttled",
            "--db",
            db,
            "--output",
            "json",
        ],
    )
}

/// The IOPS of the curve's knee step, or of its highest step where it never flattened.
fn knee_iops(sat: &Value) -> f64 {
    let steps = sat["steps"].as_array().unwrap();
    let iops = |s: &Value| s["iops"].as_f64().unwrap();
    match sat["knee_qd"].as_u64() {
        Some(q) => steps.iter().find(|s| s["qd"] == q).map(iops).unwrap(),
        None => steps.iter().map(iops).fold(0.0, f64::max),
    }
}

#[test]
fn a_trace_against_a_saved_saturate_run_says_its_headroom_and_what_runs_out_first() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let run = saturate(d.path(), &db);
    let id = run["run_id"].as_str().unwrap();
    let log = iolog(d.path());
    let args = ["characterise", "--no-save", "--against", id, "--db"];
    let out = iocap(d.path())
        .args(args)
        .arg(&db)
        .args(["--format", "json"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w: Value = serde_json::from_slice(&out.stdout).unwrap();
    let h = &w["workload"]["headroom"];
    assert_eq!(h["against_run_id"], id);
    assert_eq!(
        (h["curve_rw"].as_str(), h["curve_bs_bytes"].as_u64()),
        (Some("randread"), Some(8192))
    );
    assert_eq!(
        (h["workload_bs_bytes"].as_u64(), &h["same_size"]),
        (Some(8192), &Value::Bool(true))
    );
    assert_eq!(h["busiest"]["iops"].as_f64(), Some(400.0));
    assert_eq!(
        h["p99_second"]["iops"].as_f64(),
        Some(400.0),
        "4 buckets: the p99 is the top"
    );
    assert!((h["busiest"]["mb_s"].as_f64().unwrap() - 400.0 * 8192.0 / 1e6).abs() < 1e-9);
    let knee = knee_iops(&run["saturation"]);
    assert_eq!(h["knee_iops"].as_f64(), Some(knee));
    let flattened = !run["saturation"]["knee_qd"].is_null();
    assert_eq!(h["knee_reached"], flattened);
    // an iolog has no completions: no depth, so IOPS and MB/s tie, and IOPS is named
    assert!(h["at_depth"].is_null());
    assert_eq!(h["limit"], "iops");
    let x = h["headroom"].as_f64().unwrap();
    assert!(
        (x - knee / 400.0).abs() < 1e-9 * x,
        "{x} against {knee} / 400"
    );

    let out = iocap(d.path())
        .args(args)
        .arg(&db)
        .arg(&log)
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "{l}");
    }
    let t = text.replace("\n    ", " ");
    let least = if flattened { "" } else { "at least " };
    let ratio = iocap_report::headroom::times(x);
    for words in [
        format!("Headroom on run {id} (randread, 8K)"),
        "The busiest second needs 400 IOPS at 8K and 3.3 MB/s".into(),
        format!("headroom {least}{ratio} in IOPS"),
        "Runs out first: IOPS, at".into(),
        "Note: the trace has no completion times".into(),
    ] {
        assert!(t.contains(&words), "no `{words}` in\n{t}");
    }
}

#[test]
fn a_run_that_is_not_a_saturate_run_is_refused_naming_its_kind() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let log = iolog(d.path());
    // a characterise run saved into the store: a workload, no curve
    let saved = json_of(
        d.path(),
        &[
            "characterise",
            "--db",
            db.to_str().unwrap(),
            "--format",
            "json",
            log.to_str().unwrap(),
        ],
    );
    let id = saved["run_id"].as_str().unwrap();
    let kind = format!("run {id} is a `characterise` run (a recorded workload)");
    for (what, says) in [
        (id, vec![kind.as_str(), "needs a `saturate` run"]),
        ("no-such-run", vec!["no-such-run"]),
    ] {
        let out = iocap(d.path())
            .args(["characterise", "--no-save", "--against", what, "--db"])
            .arg(&db)
            .arg(&log)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{e}");
        for words in says {
            assert!(e.contains(words), "no `{words}` in {e}");
        }
        let o = String::from_utf8_lossy(&out.stdout);
        assert!(o.is_empty(), "nothing is described: {o}");
    }
}

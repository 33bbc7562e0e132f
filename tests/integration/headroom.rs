//! `iocap characterise TRACE --against RUN` (issue 25, section 2; issue 33, section 5): a
//! workload placed on a saved saturate run's curve, end to end on a small file and a
//! constructed fio iolog; and on constructed saturate runs saved into a store (a whole one, one
//! interrupted during its ramp) with a trace written by iocap-trace's writer, whose busiest
//! second ran deeper than the rest.

use std::path::{Path, PathBuf};

use iocap_model::fixture::{run as fixture_run, FixtureRun};
use iocap_model::{CurvePoint, RunCommand, RunResult, Saturation};
use iocap_trace::{DevId, IoFlags, IoRecord, Op, TraceMeta, TraceWriter};
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
    assert!(h["partial_run"].is_null());
    assert_eq!(h["lower_bound"], !flattened);
    let verdict = ["fits", "at_least", "falls_behind", "none"];
    assert!(verdict.contains(&h["verdict"].as_str().unwrap()), "{h}");
    // one stream headroom per stream the characteriser found
    let n = w["workload"]["streams"].as_array().map_or(0, Vec::len);
    assert_eq!(h["streams"].as_array().unwrap().len(), n, "{h}");
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

/// A saturate run of 8K random reads, one test per step, flattening at qd 16 (95,000 IOPS, p99
/// 500 µs); the step at `cut_qd` (if any) interrupted by SIGINT.
fn curve(cut_qd: Option<u32>) -> RunResult {
    let mut run = fixture_run(&FixtureRun::default());
    run.command = Some(RunCommand::Saturate);
    let one = run.tests[0].clone();
    run.tests.clear();
    let steps: Vec<CurvePoint> = [
        (1, 10_000.0, 150.0),
        (2, 20_000.0, 160.0),
        (4, 40_000.0, 200.0),
        (8, 80_000.0, 300.0),
        (16, 95_000.0, 500.0),
        (32, 96_000.0, 900.0),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (qd, iops, p99))| {
        let mut t = one.clone();
        t.spec.qd = qd;
        t.interrupted = cut_qd == Some(qd);
        run.tests.push(t);
        CurvePoint {
            test_idx: i as u32,
            qd,
            load_pct: None,
            iops,
            mb_s: iops * 8192.0 / 1e6,
            lat_us_p50: Some(p99 / 3.0),
            lat_us_p99: Some(p99),
            per_second_iops: vec![],
        }
    })
    .collect();
    if cut_qd.is_some() {
        run.interrupted_by = Some("SIGINT".into());
    }
    run.saturation = Some(Saturation {
        max_mb_s: 96_000.0 * 8192.0 / 1e6,
        max_iops: 96_000.0,
        steps,
        throttled: vec![],
        knee_qd: Some(16),
        stop_reason: "throughput gained less than 5 % per doubling past qd 16".into(),
        min_gain_pct: 5.0,
        lat_ceiling_us: None,
        latency_target_us: None,
        capacity_iops_at_target: None,
        capacity_qd_at_target: None,
        size_sweep: Vec::new(),
        limit: None,
        drops: Vec::new(),
        bucket: None,
    });
    run
}

/// `run` saved into the store `db`; its id.
fn saved(db: &Path, run: &RunResult) -> String {
    let loc = iocap_store::Location::Sqlite(db.to_path_buf());
    iocap_store::Store::open(&loc).unwrap().save(run).unwrap();
    run.run_id.clone()
}

/// Four seconds of 8K random reads, with completions: 1,000 a second one at a time (1 ms
/// each), but the third second five at a time, back to back (250 µs each): 20,000 IOPS at
/// depth 5. The device spends most of its busy time at depth 1.
fn deep_busiest_second(dir: &Path) -> PathBuf {
    let path = dir.join("deep.iotrace");
    let meta = TraceMeta {
        source: iocap_trace::meta::source::CAPTURE.into(),
        ..TraceMeta::default()
    };
    let read = |issue_ns: u64, lasts_ns: u64, n: u64| IoRecord {
        issue_ns,
        complete_ns: Some(issue_ns + lasts_ns),
        dev: DevId::default(),
        sector: (n * 7919 % 100_000) * 16,
        bytes: 8192,
        op: Op::Read,
        flags: IoFlags::default(),
        error: 0,
        pid: 0,
        comm: [0; 16],
    };
    let mut records = vec![];
    for s in 0..4u64 {
        let start = s * 1_000_000_000;
        if s == 2 {
            for i in 0..4_000 {
                for lane in 0..5 {
                    records.push(read(start + i * 250_000, 250_000, i * 5 + lane));
                }
            }
        } else {
            for i in 0..1_000 {
                records.push(read(start + i * 1_000_000, 1_000_000, i));
            }
        }
    }
    let mut w = TraceWriter::create_new(&path, &meta).unwrap();
    for r in &records {
        w.push(r).unwrap();
    }
    w.finish().unwrap();
    path
}

/// `iocap characterise TRACE --against ID --db DB` as JSON, and as text at 80 columns (each
/// wrapped line joined to the one before).
fn characterised(dir: &Path, db: &Path, id: &str, trace: &Path) -> (Value, String) {
    let run = |json: bool| {
        let mut c = iocap(dir);
        c.args(["characterise", "--no-save", "--against", id, "--db"])
            .arg(db)
            .arg(trace)
            .env("COLUMNS", "80");
        if json {
            c.args(["--format", "json"]);
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let w: Value = serde_json::from_str(&run(true)).unwrap();
    let text = run(false);
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "{l}");
    }
    (
        w["workload"]["headroom"].clone(),
        text.replace("\n    ", " "),
    )
}

#[test]
fn latency_is_judged_at_the_busiest_seconds_own_depth() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let id = saved(&db, &curve(None));
    let trace = deep_busiest_second(d.path());
    let (h, t) = characterised(d.path(), &db, &id, &trace);
    // at depth 1 the curve gives 10,000 IOPS, half the busiest second's 20,000: read there,
    // it would fall behind. At its own depth, 5, it gives 40,000 + 40,000 x (log2 5 - 2)
    let a = &h["at_depth"];
    assert_eq!(a["depth_source"], "busiest_second", "{h}");
    let depth = a["depth"].as_f64().unwrap();
    assert!((depth - 5.0).abs() < 0.05, "{h}");
    assert_eq!(h["busiest"]["iops"].as_f64(), Some(20_000.0));
    let gives = 40_000.0 + 40_000.0 * (depth.log2() - 2.0);
    assert!((a["iops"].as_f64().unwrap() - gives).abs() < 1.0, "{h}");
    assert_eq!(
        (&h["limit"], &h["verdict"]),
        (&"latency".into(), &"fits".into())
    );
    let x = h["headroom"].as_f64().unwrap();
    assert!((x - gives / 20_000.0).abs() < 1e-6, "{x}");
    assert_eq!(h["lower_bound"], false);
    let ratio = iocap_report::headroom::times(x);
    for words in [
        format!(
            "At the busiest second's own queue depth (5 in flight) this storage gives {} IOPS",
            iocap_model::figures::count(a["iops"].as_f64().unwrap())
        ),
        format!(
            "Runs out first: latency at the busiest second's own queue depth: past {ratio} \
             the busiest second's load"
        ),
    ] {
        assert!(t.contains(&words), "no `{words}` in\n{t}");
    }
    assert!(!t.contains("falls behind"), "{t}");
}

#[test]
fn against_an_interrupted_run_the_headroom_is_at_least_or_no_verdict_and_says_why() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let id = saved(&db, &curve(Some(32)));
    let trace = deep_busiest_second(d.path());
    let (h, t) = characterised(d.path(), &db, &id, &trace);
    // the knee was judged over the interrupted step: its highest whole step stands for it
    assert_eq!(h["knee_reached"], false);
    assert_eq!(h["knee_iops"].as_f64(), Some(95_000.0));
    assert_eq!(h["lower_bound"], true);
    assert_eq!(h["verdict"], "at_least");
    let why = "interrupted by SIGINT (Ctrl-C) during its step at qd 32";
    assert_eq!(h["partial_run"], why);
    for words in [
        format!("PARTIAL: the run was cut short ({why}); every headroom below is a lower bound."),
        "the run was cut short before a knee; its highest whole step gave 95,000 IOPS".into(),
        "Runs out first: latency at the busiest second's own queue depth: past no less than".into(),
        format!("Note: run {id} was cut short ({why})"),
    ] {
        assert!(t.contains(&words), "no `{words}` in\n{t}");
    }

    // an iolog whose busiest second needs more than the partial curve's highest step: no
    // verdict, never "falls behind"
    let log = d.path().join("big.log");
    let mut text = String::from("fio version 3 iolog\n0 /dev/sdx add\n0 /dev/sdx open\n");
    for (s, n) in [1_000u64, 190_000, 1_000].into_iter().enumerate() {
        for i in 0..n {
            let t = s as u64 * 1_000_000 + i * 1_000_000 / n;
            let off = (i * 7919 % 100_000) * 8192;
            text.push_str(&format!("{t} /dev/sdx read {off} 8192\n"));
        }
    }
    std::fs::write(&log, text).unwrap();
    let (h, t) = characterised(d.path(), &db, &id, &log);
    assert_eq!(
        (&h["verdict"], &h["lower_bound"]),
        (&"none".into(), &true.into())
    );
    assert!(h["headroom"].as_f64().unwrap() < 1.0, "{h}");
    assert!(
        t.contains(
            "No verdict: the run was cut short, so its figures are lower bounds: in IOPS the \
             curve gives at least 0.50× of what the busiest second needs"
        ),
        "{t}"
    );
    assert!(!t.contains("falls behind at"), "{t}");
}

//! `iocap replay` end to end (issue 25): traces written with iocap-trace's writer (and a fio
//! iolog by hand) replayed onto a new iocap file keep their count, sizes and read share; a
//! write trace on a file iocap did not create, and a trace larger than its target without
//! `--map`, are refused with exit 2 and a reason; two replays compare like any runs.

use std::path::{Path, PathBuf};

use iocap_trace::{DevId, IoFlags, IoRecord, Op, TraceMeta, TraceWriter};
use serde_json::Value;

use super::iocap;

const READS: u64 = 420;
const WRITES: u64 = 180;
const FLUSHES: u64 = 6;

/// 606 requests over 0.12 s: 8 KiB reads and 16 KiB writes (70:30) within 6 MiB, a flush
/// after every 100.
fn write_trace(dir: &Path) -> PathBuf {
    let path = dir.join("t.iotrace");
    let meta = TraceMeta {
        source: iocap_trace::meta::source::CAPTURE.into(),
        ..TraceMeta::default()
    };
    let mut w = TraceWriter::create_new(&path, &meta).unwrap();
    let mut t = 0u64;
    for i in 0..(READS + WRITES) {
        let (op, bytes) = if i % 10 < 7 {
            (Op::Read, 8192)
        } else {
            (Op::Write, 16384)
        };
        w.push(&record(t, op, (i * 7919 % 384) * 16384, bytes))
            .unwrap();
        t += 200_000;
        if i % 100 == 99 {
            w.push(&record(t, Op::Flush, 0, 0)).unwrap();
        }
    }
    w.finish().unwrap();
    path
}

fn record(issue_ns: u64, op: Op, offset: u64, bytes: u32) -> IoRecord {
    IoRecord {
        issue_ns,
        complete_ns: Some(issue_ns + 150_000),
        dev: DevId::default(),
        sector: offset / 512,
        bytes,
        op,
        flags: IoFlags::default(),
        error: 0,
        pid: 0,
        comm: [0; 16],
    }
}

fn json(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn op<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["replay"]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == name)
        .unwrap_or_else(|| panic!("no {name} in {r:#}"))
}

#[test]
fn a_trace_replays_onto_a_new_iocap_file_with_its_count_sizes_and_read_share() {
    let d = tempfile::tempdir().unwrap();
    let trace = write_trace(d.path());
    let out = iocap(d.path())
        .args(["replay", "--output", "json", "--no-save"])
        .arg(&trace)
        .arg("target")
        .output()
        .unwrap();
    let r = json(&out);
    let p = &r["replay"];
    assert_eq!(p["created"], true);
    assert_eq!(p["mapping"], "none");
    assert_eq!(p["timing"], "recorded");
    for (name, n, size) in [("read", READS, 8192), ("write", WRITES, 16384)] {
        let o = op(&r, name);
        assert_eq!(
            (o["recorded"].as_u64(), o["replayed"].as_u64()),
            (Some(n), Some(n))
        );
        assert_eq!(
            o["bytes"].as_u64(),
            Some(n * size),
            "{name}: every byte moved"
        );
        assert_eq!(o["errors"], 0);
    }
    assert_eq!(op(&r, "flush")["replayed"].as_u64(), Some(FLUSHES));
    assert_eq!(
        p["replayed"]["ios"].as_u64(),
        Some(READS + WRITES + FLUSHES)
    );
    assert_eq!(p["recorded"]["ios"], p["replayed"]["ios"]);
    assert_eq!(p["replayed"]["read_pct"].as_f64(), Some(70.0));
    assert_eq!(p["recorded"]["read_pct"].as_f64(), Some(70.0));
    assert!(p["verdict"]["text"].as_str().unwrap().len() > 10);
    // the new file covers the trace's span, and is iocap's: a second replay rewrites it
    assert_eq!(
        std::fs::metadata(d.path().join("target")).unwrap().len(),
        6 << 20
    );
    let out = iocap(d.path())
        .args(["replay", "--no-save", "--speed", "2"])
        .arg(&trace)
        .arg("target")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("timing recorded at 2x") && text.contains("verdict"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let iops = text
        .lines()
        .find(|l| l.trim_start().starts_with("IOPS"))
        .unwrap();
    assert_eq!(
        iops.split_whitespace().count(),
        3,
        "recorded beside replayed: {iops}"
    );
}

#[test]
fn a_fio_iolog_replays_as_fast_as_its_fixed_depth_allows() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("fio.log");
    let mut s = String::from("fio version 2 iolog\n/data/f add\n/data/f open\n");
    for i in 0..100u64 {
        let what = if i % 4 == 0 { "write" } else { "read" };
        s.push_str(&format!("/data/f {what} {} 4096\n", (i * 37 % 256) * 4096));
    }
    s.push_str("/data/f close\n");
    std::fs::write(&log, s).unwrap();
    let r = json(
        &iocap(d.path())
            .args([
                "replay",
                "--timing",
                "fast",
                "--output",
                "json",
                "--no-save",
            ])
            .arg(&log)
            .output()
            .unwrap(),
    );
    assert_eq!(r["replay"]["format"], "fio iolog (version 2)");
    assert_eq!(r["replay"]["fast_depth"].as_u64(), Some(32));
    let verdict = r["replay"]["verdict"]["text"].as_str().unwrap();
    assert!(
        verdict.starts_with("fast: 100 requests in ")
            && verdict.ends_with("at a fixed depth of 32"),
        "{verdict}"
    );
    assert_eq!(op(&r, "read")["replayed"].as_u64(), Some(75));
    assert_eq!(op(&r, "write")["bytes"].as_u64(), Some(25 * 4096));
    assert!(
        d.path().join("iocap.testfile").is_file(),
        "the default target"
    );
}

#[test]
fn a_write_trace_on_a_file_iocap_did_not_create_is_refused_and_the_file_kept() {
    let d = tempfile::tempdir().unwrap();
    let trace = write_trace(d.path());
    let mine = d.path().join("mine.db");
    let content: Vec<u8> = (0..(8u32 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(&mine, &content).unwrap();
    let out = iocap(d.path())
        .args(["replay", "--no-save"])
        .arg(&trace)
        .arg(&mine)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("iocap did not create it") && err.contains("--allow-overwrite"),
        "{err}"
    );
    assert!(
        std::fs::read(&mine).unwrap() == content,
        "the file is byte-identical"
    );
}

#[test]
fn a_trace_larger_than_its_target_is_refused_naming_both_mappings() {
    let d = tempfile::tempdir().unwrap();
    let trace = write_trace(d.path());
    let out = iocap(d.path())
        .args(["replay", "--no-save", "--size", "2M"])
        .arg(&trace)
        .arg("small")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--map wrap") && err.contains("--map scale"),
        "{err}"
    );
    assert!(
        err.contains("spans 6.0M") && err.contains("holds 2M"),
        "{err}"
    );
    assert!(!d.path().join("small").exists(), "nothing created");
    let r = json(
        &iocap(d.path())
            .args(["replay", "--no-save", "--size", "2M", "--map", "wrap"])
            .args(["--timing", "fast", "--output", "json"])
            .arg(&trace)
            .arg("small")
            .output()
            .unwrap(),
    );
    assert_eq!(r["replay"]["mapping"], "wrap");
    assert_eq!(r["replay"]["range_bytes"].as_u64(), Some(2 << 20));
    assert_eq!(op(&r, "read")["replayed"].as_u64(), Some(READS));
}

#[test]
fn two_replays_are_saved_and_compared_like_any_runs() {
    let d = tempfile::tempdir().unwrap();
    let trace = write_trace(d.path());
    let db = d.path().join("runs.db");
    let db = db.to_str().unwrap();
    let mut ids = vec![];
    for target in ["a", "b"] {
        let r = json(
            &iocap(d.path())
                .args(["replay", "--timing", "fast", "--output", "json", "--db", db])
                .arg(&trace)
                .arg(target)
                .output()
                .unwrap(),
        );
        ids.push(r["run_id"].as_str().unwrap().to_string());
    }
    let out = iocap(d.path())
        .args(["compare", "--db", db])
        .args(&ids)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let target = text.lines().find(|l| l.starts_with("target")).unwrap();
    assert!(target.ends_with("/a") || target.contains("a "), "{text}");
    assert!(text.lines().any(|l| l.starts_with("IOPS")), "{text}");
    let out = iocap(d.path())
        .args(["history", "--db", db])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("replay"), "{text}");
}

#[test]
fn speed_with_fast_timing_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let trace = write_trace(d.path());
    let out = iocap(d.path())
        .args(["replay", "--no-save", "--timing", "fast", "--speed", "2"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--speed applies to --timing recorded"));
}

#[test]
fn a_damaged_trace_is_refused_naming_where() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("bad.log");
    let lines = "fio version 2 iolog\n/data/f add\n/data/f open\n/data/f read 0 4096\n";
    std::fs::write(&log, format!("{lines}/data/f read zz 4096\n")).unwrap();
    let out = iocap(d.path())
        .args(["replay", "--no-save"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 5"), "{err}");
    assert!(!d.path().join("iocap.testfile").exists(), "nothing created");
}

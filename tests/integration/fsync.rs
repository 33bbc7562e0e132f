//! `iocap fsync`: every log-flush method measured (or said to be unavailable, with a reason),
//! foreign files refused, O_DIRECT sizes below the logical block skipped.

use predicates::prelude::*;
use serde_json::Value;

use crate::iocap;

const METHODS: [&str; 7] = [
    "fsync",
    "fdatasync",
    "o_dsync",
    "o_direct_o_dsync",
    "o_sync",
    "o_direct_o_sync",
    "rwf_dsync",
];

fn fsync_json(dir: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> Value {
    let out = iocap(dir)
        .envs(env.iter().copied())
        .args([
            "fsync",
            "--duration",
            "0.3s",
            "--output",
            "json",
            "--no-save",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "iocap fsync failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document")
}

#[test]
fn quick_measures_every_method_at_8k_and_16k() {
    let dir = tempfile::tempdir().unwrap();
    let v = fsync_json(dir.path(), &[], &["--quick"]);
    assert_eq!(v["command"], "fsync");
    let r = &v["fsync"];
    assert_eq!(r["offsets"], "same");
    assert_eq!(r["file_size_bytes"], 16 << 20);
    assert!(
        r["target"]
            .as_str()
            .unwrap()
            .ends_with("iocap-fsync.testfile"),
        "{r}"
    );
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 14, "7 methods x 2 sizes: {r}");
    for size in [8192u64, 16384] {
        for m in METHODS {
            let p = points
                .iter()
                .find(|p| p["method"] == m && p["size_bytes"] == size)
                .unwrap_or_else(|| panic!("{m} {size} missing"));
            if p["available"] == true {
                let ops = p["ops"].as_u64().unwrap();
                assert!(ops > 0, "{p}");
                let secs = p["duration_s"].as_f64().unwrap();
                assert!((0.29..1.0).contains(&secs), "{p}");
                let rate = p["ops_per_s"].as_f64().unwrap();
                assert!(
                    (rate - ops as f64 / secs).abs() <= rate * 1e-6,
                    "ops_per_s is ops over the duration: {p}"
                );
                let lat = &p["lat_us"];
                assert!(lat["p50"].as_f64().unwrap() <= lat["p99"].as_f64().unwrap());
                assert!(lat["p99"].as_f64().unwrap() <= lat["max"].as_f64().unwrap());
            } else {
                assert!(
                    !p["reason"].as_str().unwrap_or("").is_empty(),
                    "unavailable without a reason: {p}"
                );
            }
        }
    }
    assert!(
        r["recommendation"]
            .as_str()
            .unwrap()
            .contains("wal_sync_method"),
        "{r}"
    );
}

#[test]
fn a_file_iocap_did_not_create_is_refused_and_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pg_wal.seg");
    let data: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(&p, &data).unwrap();
    iocap(dir.path())
        .args(["fsync", "--quick", "--duration", "0.1s", "--no-save"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did not create"))
        .stderr(predicate::str::contains("--allow-overwrite"));
    assert_eq!(std::fs::read(&p).unwrap(), data, "the file changed");
}

#[test]
fn o_direct_sizes_below_the_logical_block_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    // the alignment a 4Kn device would report, whatever this machine's is
    let v = fsync_json(
        dir.path(),
        &[("IOCAP_TEST_DIO_ALIGN", "4096")],
        &["--sizes", "512,4K", "--duration", "0.1s"],
    );
    let points = v["fsync"]["points"].as_array().unwrap();
    for m in ["o_direct_o_dsync", "o_direct_o_sync"] {
        let small = points
            .iter()
            .find(|p| p["method"] == m && p["size_bytes"] == 512)
            .unwrap();
        assert_eq!(small["available"], false, "{small}");
        assert!(
            small["reason"]
                .as_str()
                .unwrap()
                .contains("O_DIRECT alignment"),
            "{small}"
        );
        let ok = points
            .iter()
            .find(|p| p["method"] == m && p["size_bytes"] == 4096)
            .unwrap();
        assert!(ok["available"] == true || ok["reason"].is_string(), "{ok}");
    }
    // buffered methods still run at 512 B
    let fd = points
        .iter()
        .find(|p| p["method"] == "fdatasync" && p["size_bytes"] == 512)
        .unwrap();
    assert_eq!(fd["available"], true, "{fd}");
}

#[test]
fn bad_sizes_are_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    iocap(dir.path())
        .args(["fsync", "--sizes", "8K,128K", "--no-save"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("outside 512 B to 64K"));
    assert!(!dir.path().join("iocap-fsync.testfile").exists());
}

#[test]
fn text_shows_the_tables_and_a_saved_run_shows_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = iocap(dir.path())
        .args(["fsync", "--sizes", "8K", "--duration", "0.1s", "--db"])
        .arg(&db)
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("ops/s") && text.contains("*8K"), "{text}");
    assert!(text.contains("Fastest durable method per size"), "{text}");
    let shown = iocap(dir.path())
        .args(["history", "--db"])
        .arg(&db)
        .assert()
        .success()
        .get_output()
        .clone();
    let hist = String::from_utf8_lossy(&shown.stdout).to_string();
    let id = hist
        .split_whitespace()
        .find(|w| w.len() > 16 && w.contains('T') && w.contains('-'))
        .unwrap_or_else(|| panic!("no run id in {hist}"))
        .to_string();
    iocap(dir.path())
        .args(["show", &id, "--db"])
        .arg(&db)
        .assert()
        .success()
        .stdout(predicate::str::contains("write + fdatasync"));
}

#[test]
fn methods_limits_the_run_to_the_ones_named_in_their_order() {
    let dir = tempfile::tempdir().unwrap();
    let v = fsync_json(
        dir.path(),
        &[],
        &[
            "--sizes",
            "8K",
            "--duration",
            "0.1s",
            "--methods",
            "o_direct_o_sync,fdatasync",
        ],
    );
    let measured: Vec<&str> = v["fsync"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["method"].as_str().unwrap())
        .collect();
    assert_eq!(measured, ["o_direct_o_sync", "fdatasync"]);
}

#[test]
fn an_unknown_method_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    iocap(dir.path())
        .args(["fsync", "--methods", "fdatasync,open_datasync", "--no-save"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown method 'open_datasync'"))
        .stderr(predicate::str::contains("o_direct_o_dsync"));
    assert!(!dir.path().join("iocap-fsync.testfile").exists());
}

/// Log writes are new data every time (issue 23): after walking the file with the same 8 KiB
/// buffer, no 512-byte sector of what was written equals another, so a device that
/// deduplicates or compresses gains nothing from the log test.
#[test]
fn cycled_log_writes_leave_no_duplicate_sector() {
    let dir = tempfile::tempdir().unwrap();
    let v = fsync_json(
        dir.path(),
        &[],
        &[
            "--sizes",
            "8K",
            "--methods",
            "fdatasync",
            "--offsets",
            "cycle",
            "--duration",
            "0.2s",
        ],
    );
    let ios = v["fsync"]["points"][0]["ops"].as_u64().unwrap_or(0);
    let path = v["fsync"]["target"].as_str().unwrap();
    let data = std::fs::read(dir.path().join(path)).unwrap();
    let written = &data[..(ios.min(2048) as usize) * 8192];
    assert!(written.len() >= 16 * 8192, "only {ios} writes: {v}");
    let mut seen = std::collections::HashSet::new();
    let dups = written
        .chunks(512)
        .filter(|s| !seen.insert(s.to_vec()))
        .count();
    assert_eq!(dups, 0, "{dups} repeated sectors in {ios} log writes");
}

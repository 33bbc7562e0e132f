//! `iocap audit` on this machine: a report for a path, JSON for scripts, `--fail-on` as the
//! checks say. (Every check against fixture trees is tested in crates/iocap-audit.)

use crate::iocap;

#[test]
fn audit_reports_every_check_and_fails_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path())
        .args(["audit", ".", "--profile", "postgres", "--output", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = r["checks"].as_array().unwrap();
    let ids: Vec<&str> = checks.iter().map(|c| c["id"].as_str().unwrap()).collect();
    for id in [
        "mem.thp",
        "vm.swappiness",
        "cpu.governor",
        "device.scheduler",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    for c in checks {
        let sev = c["severity"].as_str().unwrap();
        assert!(
            ["PASS", "WARN", "FAIL", "INFO", "UNKNOWN"].contains(&sev),
            "{c}"
        );
        assert!(!c["evidence"].as_str().unwrap().is_empty(), "{c}");
    }
    let bad = checks
        .iter()
        .any(|c| c["severity"] == "WARN" || c["severity"] == "FAIL");
    let code = iocap(dir.path())
        .args(["audit", ".", "--profile", "postgres", "--fail-on", "warn"])
        .output()
        .unwrap()
        .status
        .code();
    assert_eq!(code, Some(if bad { 1 } else { 0 }));
    let out = iocap(dir.path())
        .args(["audit", "--profile", "db2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // a planned database larger than the free space fails its check
    let out = iocap(dir.path())
        .args(["audit", ".", "--db-size", "900T", "--output", "json"])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let free = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "fs.free_space")
        .unwrap();
    assert_eq!(free["severity"], "FAIL", "{free}");
}

#[test]
fn every_run_records_the_configuration_under_its_targets() {
    let dir = tempfile::tempdir().unwrap();
    let j = crate::run_json(dir.path(), &["--no-save"]);
    let ids: Vec<&str> = j["config"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for id in ["fs.block_size", "mount.atime", "mem.thp", "cpu.governor"] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    // and its clock's self-check, as pg_test_timing does it
    let t = &j["timer"];
    assert_eq!(t["clock"], "CLOCK_MONOTONIC");
    assert!(t["readings"].as_u64().unwrap() > 1000, "{t}");
    assert_eq!(t["backwards"], 0, "{t}");
    let median = t["median_step_ns"].as_u64().unwrap();
    assert!(
        median > 0 && median <= t["max_step_ns"].as_u64().unwrap(),
        "{t}"
    );
    let counted: u64 = t["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, t["readings"].as_u64().unwrap(), "{t}");
}

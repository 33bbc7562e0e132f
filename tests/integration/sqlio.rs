//! The SQLIO front end: flags and parameter files as SQLIO took them, SQLIO's summary shape, and
//! batch files that run after only the program name changed.

use predicates::prelude::*;

use crate::iocap;

/// The batch of seed 003, as users keep it: `::` comments, `call sqlio`, an en dash in `–b8`.
const SEED_BATCH: &str = "::Test randmon IO's of 8K\r
call sqlio -kW -s600 -frandom -o32 -b8 -LS -Fparam.txt\r
call sqlio -kR -s600 -frandom -o32 -b8 -LS -Fparam.txt\r
\r
::Test small sequential writes \r
call sqlio -kW -s60 -fsequential -o1 -b4 -LS -Fparam.txt\r
call sqlio -kW -s60 -fsequential -o1 -b8 -LS -Fparam.txt\r
call sqlio -kW -s60 -fsequential -o1 -b16 -LS -Fparam.txt\r
call sqlio -kW -s60 -fsequential -o1 -b32 -LS -Fparam.txt\r
call sqlio -kW -s60 -fsequential -o1 -b64 -LS -Fparam.txt\r
\r
::Test large sequential read/write\r
call sqlio -kR -s60 -fsequential -o8 \u{2013}b8 -LS -Fparam.txt\r
call sqlio -kR -s60 -fsequential -o8 -b64 -LS -Fparam.txt\r
call sqlio -kR -s60 -fsequential -o8 -b128 -LS -Fparam.txt\r
call sqlio -kR -s60 -fsequential -o8 -b256 -LS -Fparam.txt\r
call sqlio -kW -s60 -fsequential -o8 \u{2013}b8 -LS -Fparam.txt\r
call sqlio -kW -s60 -fsequential -o8 -b64 -LS -Fparam.txt\r
call sqlio -kW -s60 -fsequential -o8 -b128 -LS -Fparam.txt\r
call sqlio -kW -s60 -fsequential -o8 -b256 -LS -Fparam.txt\r
";

fn two_file_params(dir: &std::path::Path) {
    std::fs::write(
        dir.join("param.txt"),
        "# two volumes\na.dat 2 0x0 16\n#c.dat 1 0x0 16\nb.dat 1 0x0 16\n",
    )
    .unwrap();
}

#[test]
fn sqlio_runs_a_two_file_param_file_and_prints_sqlio_shape() {
    let dir = tempfile::tempdir().unwrap();
    two_file_params(dir.path());
    let out = iocap(dir.path())
        .args([
            "sqlio",
            "-kR",
            "-s1",
            "-frandom",
            "-o8",
            "-b8",
            "-LS",
            "-Fparam.txt",
        ])
        .assert()
        .success();
    let s = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for want in [
        "IOs/sec:",
        "MBs/sec:",
        "Min_Latency(ms):",
        "Avg_Latency(ms):",
        "Max_Latency(ms):",
        "histogram:",
        "24+",
        "p99",
    ] {
        assert!(s.contains(want), "missing {want:?} in\n{s}");
    }
    assert_eq!(
        std::fs::metadata(dir.path().join("a.dat")).unwrap().len(),
        16 << 20
    );
    assert_eq!(
        std::fs::metadata(dir.path().join("b.dat")).unwrap().len(),
        16 << 20
    );
    assert!(
        !dir.path().join("c.dat").exists(),
        "a commented-out line ran"
    );
    // the histogram percentages add up to about 100
    let pct: u32 = s
        .lines()
        .find(|l| l.starts_with("%:"))
        .unwrap()
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse::<u32>().unwrap())
        .sum();
    assert!((97..=103).contains(&pct), "histogram sums to {pct}");
}

#[test]
fn sqlio_json_covers_both_files_with_their_threads() {
    let dir = tempfile::tempdir().unwrap();
    two_file_params(dir.path());
    let out = iocap(dir.path())
        .args([
            "sqlio",
            "-kW",
            "-s1",
            "-fsequential",
            "-o2",
            "-b64",
            "-BH",
            "-Fparam.txt",
        ])
        .args(["--output", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["tests"][0];
    assert_eq!(t["targets"].as_array().unwrap().len(), 2);
    assert_eq!(t["targets"][0]["threads"], 2);
    assert_eq!(t["targets"][1]["threads"], 1);
    assert_eq!(t["spec"]["rw"], "write");
    assert_eq!(t["spec"]["bs_bytes"], 65536);
    assert_eq!(t["spec"]["write_through"], false);
    for tr in t["targets"].as_array().unwrap() {
        assert!(tr["total"]["ios"].as_u64().unwrap() > 0);
    }
}

#[test]
fn sqlio_errors_name_the_flag_or_the_line() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (vec!["-kX"], "-kX"),
        (vec!["-o0"], "-o0"),
        (vec!["-Q5"], "-Q"),
        (vec!["-Fmissing.txt"], "missing.txt"),
    ] {
        iocap(dir.path())
            .arg("sqlio")
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(want));
    }
    std::fs::write(dir.path().join("bad.txt"), "# ok\na.dat two 0x0 16\n").unwrap();
    iocap(dir.path())
        .args(["sqlio", "-Fbad.txt"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.txt:2"));
}

#[test]
fn the_seed_batch_file_runs_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("param.txt"), "t.dat 1 0x0 16\n").unwrap();
    std::fs::write(dir.path().join("tests.bat"), SEED_BATCH).unwrap();
    // every line parses
    let out = iocap(dir.path())
        .args(["sqlio-batch", "tests.bat", "--dry-run"])
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(err.matches("== tests.bat line").count(), 15, "{err}");
    // and all fifteen run, shortened
    let out = iocap(dir.path())
        .args([
            "sqlio-batch",
            "tests.bat",
            "--seconds",
            "0.2s",
            "--output",
            "csv",
            "--db",
            "r.db",
            "--label",
            "seed batch",
            "--html",
            "batch.html",
        ])
        .assert()
        .success();
    let csv = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(
        csv.lines().filter(|l| l.contains(",total,")).count(),
        15,
        "{csv}"
    );
    // each call was saved as its own run, and one report holds them all
    let out = iocap(dir.path())
        .args([
            "history",
            "--db",
            "r.db",
            "--label",
            "seed batch",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    let runs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 15);
    let html = std::fs::read_to_string(dir.path().join("batch.html")).unwrap();
    assert!(html.contains("15 runs"), "the report covers the batch");
}

#[test]
fn a_sqlio_call_is_saved_with_its_label_and_tags() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.txt"), "t.dat 1 0x0 16\n").unwrap();
    iocap(dir.path())
        .args(["sqlio", "-kW", "-s1", "-b8", "-o2", "-Fp.txt", "--db=r.db"])
        .args([
            "--label",
            "log test",
            "--tag",
            "wal",
            "--tag=qd2",
            "--note",
            "n",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("saved run"));
    let out = iocap(dir.path())
        .args(["show", "last", "--db", "r.db", "--output", "json"])
        .output()
        .unwrap();
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["label"], "log test");
    assert_eq!(run["tags"], serde_json::json!(["wal", "qd2"]));
    assert_eq!(run["note"], "n");
    assert_eq!(run["tests"][0]["spec"]["rw"], "randwrite");
    iocap(dir.path())
        .args([
            "sqlio",
            "-kR",
            "-s1",
            "-Fp.txt",
            "--db",
            "r.db",
            "--no-save",
        ])
        .assert()
        .success();
    let out = iocap(dir.path())
        .args(["history", "--db", "r.db", "--output", "json"])
        .output()
        .unwrap();
    let runs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 1, "--no-save saved nothing");
}

#[test]
fn a_batch_with_a_bad_line_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("b.bat"),
        "sqlio -kR -s1 t.dat\nsqlio -kR -s1 -o0 t.dat\n",
    )
    .unwrap();
    iocap(dir.path())
        .args(["sqlio-batch", "b.bat"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("line 2"));
    assert!(!dir.path().join("t.dat").exists());
}

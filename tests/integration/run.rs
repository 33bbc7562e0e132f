//! `iocap run` as a user drives it: the default job, the output formats, bad input, engine and
//! O_DIRECT fallbacks, and Ctrl-C.

use predicates::prelude::*;
use serde_json::Value;

use crate::{iocap, run_json, run_json_env, QUICK};

#[test]
fn default_run_creates_the_test_file_once_and_prints_tables() {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path()).arg("run").args(QUICK).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for want in [
        "randread 8K",
        "IOPS",
        "MB/s",
        "p99.9",
        "CPU:",
        "µs per I/O",
        "O_DIRECT",
    ] {
        assert!(stdout.contains(want), "missing {want:?} in:\n{stdout}");
    }
    let f = dir.path().join("iocap.testfile");
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 16 << 20);
    let data = std::fs::read(&f).unwrap();
    // filled, not sparse: no 4 KiB block of zeros
    assert!(data.chunks(4096).all(|b| b.iter().any(|x| *x != 0)));
    // reused: no second fill
    iocap(dir.path())
        .arg("run")
        .args(QUICK)
        .assert()
        .success()
        .stderr(predicate::str::contains("writing").not());
}

#[test]
fn json_is_the_contract_and_alone_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let v = run_json(
        dir.path(),
        &["--rw", "randrw", "--write-pct", "30", "--bs", "4K"],
    );
    for k in ["iocap_version", "run_id", "started_at", "host", "tests"] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    for k in ["hostname", "kernel", "cpu_model", "cpus", "memory_bytes"] {
        assert!(v["host"].get(k).is_some(), "missing host.{k}");
    }
    let t = &v["tests"][0];
    for k in [
        "name",
        "spec",
        "engine",
        "direct",
        "duration_s",
        "total",
        "read",
        "write",
        "cpu",
        "qd_mean",
        "targets",
        "per_second",
        "warnings",
    ] {
        assert!(t.get(k).is_some(), "missing tests[0].{k}");
    }
    for k in ["ios", "bytes", "iops", "mib_s", "mb_s", "lat_us"] {
        assert!(t["total"].get(k).is_some(), "missing total.{k}");
    }
    for k in [
        "min", "mean", "stddev", "p50", "p90", "p95", "p99", "p99_9", "p99_99", "p99_999", "max",
    ] {
        assert!(t["total"]["lat_us"][k].is_number(), "missing lat_us.{k}");
    }
    for k in ["user_s", "sys_s", "us_per_io"] {
        assert!(t["cpu"][k].is_number(), "missing cpu.{k}");
    }
    assert!(t["targets"][0]["path"]
        .as_str()
        .unwrap()
        .ends_with("iocap.testfile"));
    assert!(t["write"]["ios"].as_u64().unwrap() > 0 && t["read"]["ios"].as_u64().unwrap() > 0);
    let mib = t["total"]["mib_s"].as_f64().unwrap();
    let mb = t["total"]["mb_s"].as_f64().unwrap();
    assert!(
        (mb / mib - 1.048576).abs() < 1e-6,
        "MB/s and MiB/s disagree"
    );
    assert_eq!(t["spec"]["bs_bytes"], 4096);
}

#[test]
fn csv_has_a_header_and_rows() {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path())
        .arg("run")
        .args(QUICK)
        .args(["--output", "csv"])
        .assert()
        .success();
    let s = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let mut lines = s.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("run_id,test,scope,target,ios,bytes,iops"));
    let total: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(total[2], "total");
    assert!(total[4].parse::<u64>().unwrap() > 0);
}

#[test]
fn bad_input_is_a_clear_error_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--qd", "0"], "queue depth"),
        (&["--bs", "1000"], "block size"),
        (&["--bs", "128M"], "block size"),
        (&["--size", "12X"], "invalid size"),
        (&["--duration", "soon"], "invalid duration"),
        (&["--rw", "sideways"], "unknown workload"),
        (&["--write-pct", "30"], "--write-pct"),
        (&["--engine", "magic"], "unknown engine"),
        (&["--rate-iops", "0"], "rate"),
        (&["no/such/dir/file.dat"], "does not exist"),
        (&["--size", "100T"], "not enough free space"),
    ];
    for (args, want) in cases {
        iocap(dir.path())
            .arg("run")
            .args(["--duration", "0.2s", "--warmup", "0s"])
            .args(*args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*want))
            .stderr(predicate::str::contains("panicked").not());
    }
    assert!(
        !dir.path().join("iocap.testfile").exists(),
        "a failed run left a file"
    );
}

#[test]
fn too_many_psync_threads_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    iocap(dir.path())
        .args(["run", "--engine", "psync", "--qd", "4096", "--threads", "8"])
        .args(QUICK)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("32768 worker threads"))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn auto_engine_falls_back_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let v = run_json_env(dir.path(), &[("IOCAP_TEST_NO_IO_URING", "1")], &[]);
    assert_eq!(v["tests"][0]["engine"], "psync");
    let warnings = v["tests"][0]["warnings"].to_string();
    assert!(warnings.contains("io_uring is not available"), "{warnings}");
    // asked for explicitly, it is an error
    iocap(dir.path())
        .env("IOCAP_TEST_NO_IO_URING", "1")
        .arg("run")
        .args(QUICK)
        .args(["--engine", "io_uring"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("io_uring is not available"));
}

#[test]
fn io_uring_records_its_features() {
    let dir = tempfile::tempdir().unwrap();
    let v = run_json(dir.path(), &["--engine", "io_uring"]);
    let t = &v["tests"][0];
    assert_eq!(t["engine"], "io_uring");
    let f = t["engine_features"].to_string();
    assert!(f.contains("registered_files"), "{f}");
    // auto submission unless asked otherwise: the trial's choice is in the features and the
    // record, and the spec keeps what was asked
    assert!(f.contains("submit_auto"), "{f}");
    assert_eq!(t["spec"]["submit"], "auto", "{}", t["spec"]);
    let rec = &t["submit"];
    assert_eq!(rec["requested"], "auto", "{rec}");
    let chosen = rec["chosen"].as_str().unwrap();
    assert!(
        f.contains(&format!("submit_{chosen}")),
        "features {f} do not name the mode kept, {chosen}"
    );
    let v = run_json(dir.path(), &["--engine", "io_uring", "--submit", "batch"]);
    let f = v["tests"][0]["engine_features"].to_string();
    assert!(
        f.contains("submit_batch") && !f.contains("submit_each"),
        "{f}"
    );
    let v = run_json(dir.path(), &["--engine", "io_uring", "--submit", "each"]);
    let f = v["tests"][0]["engine_features"].to_string();
    assert!(
        f.contains("submit_each") && !f.contains("submit_batch"),
        "{f}"
    );
    assert!(v["tests"][0]["total"]["ios"].as_u64().unwrap() > 0);
}

#[test]
fn refused_o_direct_falls_back_to_buffered_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let v = run_json_env(dir.path(), &[("IOCAP_TEST_REFUSE_DIRECT", "1")], &[]);
    assert_eq!(v["tests"][0]["direct"], false);
    assert!(v["tests"][0]["warnings"]
        .to_string()
        .contains("O_DIRECT was refused"));
    // --buffered is a choice, not a fallback: no warning
    let v = run_json(dir.path(), &["--buffered"]);
    assert_eq!(v["tests"][0]["direct"], false);
    assert!(!v["tests"][0]["warnings"].to_string().contains("O_DIRECT"));
}

/// Runs `iocap ARGS` in `dir`, sends it Ctrl-C (SIGINT) after `ms` milliseconds, and checks it
/// exited 130; its stdout as JSON.
fn interrupted_after(dir: &std::path::Path, args: &[&str], ms: u64) -> Value {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iocap"))
        .current_dir(dir)
        .env("XDG_DATA_HOME", crate::data_home())
        .env_remove("IOCAP_DB")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(ms));
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn ctrl_c_stops_drains_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    // create the file first so the interrupt lands in the measured window
    iocap(dir.path()).arg("run").args(QUICK).assert().success();
    let run = [
        "run",
        "--duration",
        "60s",
        "--warmup",
        "0s",
        "--size",
        "16M",
    ];
    let v = interrupted_after(
        dir.path(),
        &[&run[..], &["--output", "json"]].concat(),
        1500,
    );
    let t = &v["tests"][0];
    assert_eq!(t["interrupted"], true);
    let d = t["duration_s"].as_f64().unwrap();
    assert!(d > 0.5 && d < 10.0, "measured {d} s");
    assert!(t["total"]["ios"].as_u64().unwrap() > 0);
    assert!(t["warnings"].to_string().contains("interrupted"));
}

#[test]
fn help_documents_every_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path()).args(["run", "--help"]).assert().success();
    let s = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for flag in [
        "--rw",
        "--write-pct",
        "--bs",
        "--qd",
        "--threads",
        "--size",
        "--duration",
        "--warmup",
        "--cooldown",
        "--seed",
        "--align",
        "--rate-iops",
        "--rate-mbps",
        "--write-through",
        "--fsync-every",
        "--buffered",
        "--engine",
        "--submit",
        "--allow-overwrite",
        "--output",
    ] {
        assert!(s.contains(flag), "--help lacks {flag}");
    }
}

#[test]
fn live_progress_only_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let run = format!(
        "run --duration 2s --warmup 0s --size 16M {}",
        dir.path().join("t.dat").display()
    );
    let Some(tty) = crate::on_a_terminal(&run) else {
        return;
    };
    assert!(
        tty.contains("measuring") && tty.contains("IOPS  "),
        "no live line:\n{tty}"
    );
    assert!(
        tty.contains("writing test file"),
        "no fill progress bar:\n{tty}"
    );
    // without a terminal: no live line anywhere
    let out = iocap(dir.path())
        .args(["run", "--duration", "1.5s", "--warmup", "0s", "t.dat"])
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !all.contains("measuring") && !all.contains("starting"),
        "live line off a terminal:\n{all}"
    );
}

#[test]
fn a_block_size_mix_and_bursts_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let j = crate::run_json(dir.path(), &["--bs-split", "8K:70,64K:30", "--no-save"]);
    let t = &j["tests"][0];
    assert_eq!(t["spec"]["bs_split"].as_array().unwrap().len(), 2);
    assert_eq!(
        t["spec"]["bs_bytes"], 65536,
        "buffers hold the largest size"
    );
    assert_eq!(
        t["spec"]["align_bytes"], 8192,
        "offsets align to the smallest"
    );
    let mean = t["total"]["bytes"].as_f64().unwrap() / t["total"]["ios"].as_f64().unwrap();
    let want = 0.7 * 8192.0 + 0.3 * 65536.0;
    assert!(
        (mean - want).abs() / want < 0.1,
        "mean I/O {mean} B, want {want}"
    );
    let j = crate::run_json(dir.path(), &["--burst", "0.1s:0.1s", "--no-save"]);
    assert_eq!(j["tests"][0]["spec"]["burst"]["on_s"], 0.1);
    for bad in [
        ["--bs-split", "8K:0"],
        ["--burst", "1s"],
        ["--bs-split", "8K"],
    ] {
        iocap(dir.path()).arg("run").args(bad).assert().code(2);
    }
}

#[test]
fn the_shape_of_written_data_is_asked_for_recorded_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let v = run_json(
        dir.path(),
        &[
            "--rw",
            "randwrite",
            "--compressible",
            "40",
            "--dedupe",
            "20",
        ],
    );
    let spec = &v["tests"][0]["spec"];
    assert_eq!(
        (
            spec["compressible_pct"].as_u64(),
            spec["dedupe_pct"].as_u64()
        ),
        (Some(40), Some(20))
    );
    let v = run_json(dir.path(), &["--rw", "randwrite"]);
    assert_eq!(
        v["tests"][0]["spec"]["compressible_pct"], 0,
        "incompressible by default"
    );
    for flag in ["--compressible", "--dedupe"] {
        iocap(dir.path())
            .args(["run", flag, "101", "--no-save"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(flag).and(predicate::str::contains("101")));
    }
}

/// Ctrl-C in the pause between repeated runs stops the runs, prints what ran and exits 130,
/// as Ctrl-C in a test does (it exited 0 before).
#[test]
fn ctrl_c_in_a_repeat_pause_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    iocap(dir.path()).arg("run").args(QUICK).assert().success();
    let run = [
        "run",
        "--duration",
        "0.3s",
        "--warmup",
        "0s",
        "--size",
        "16M",
        "--no-save",
    ];
    let repeat = ["--repeat", "3", "--repeat-pause", "30s", "--output", "json"];
    let v = interrupted_after(dir.path(), &[&run[..], &repeat].concat(), 2500);
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(
        tests.len(),
        1,
        "the first run, not the ones after the pause"
    );
    assert_eq!(tests[0]["interrupted"], false, "the run itself finished");
    // the run was cut short all the same, and says by what
    assert_eq!(v["interrupted_by"], "SIGINT");
}

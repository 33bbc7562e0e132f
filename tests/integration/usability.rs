//! What a new user meets (issue 14): every view fits an 80-column terminal, the live line
//! names the test and its step, a memory-backed target is called so, missing paths are refused
//! without creating anything, fio's flag names work, and a file that is not a suite says so.
//! Issue 23: bare `iocap` and its help fit and say where to start, and so do the widths found
//! since (sqlio's and diskspd's help, a compare of different workloads, a `--bs-split`
//! heading, audit's paths); bash completion offers `--rw`'s and `--engine`'s values.

use crate::{iocap, json_of};

/// Runs `iocap ARGS` with `COLUMNS=80` in `dir`, which must succeed; its stdout.
fn at_80(dir: &std::path::Path, args: &[&str]) -> String {
    let out = iocap(dir).env("COLUMNS", "80").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "iocap {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn assert_fits(what: &str, text: &str) {
    let long: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
    assert!(
        long.is_empty(),
        "{what}: {} lines over 80:\n{}",
        long.len(),
        long.join("\n")
    );
}

#[test]
fn every_view_fits_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    for d in ["data", "log", "backup"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    let quick = [
        "--duration",
        "0.3s",
        "--warmup",
        "0s",
        "--size",
        "16M",
        "--no-save",
    ];
    let run = [&["run", "--rw", "randrw"][..], &quick, &["t.dat"]].concat();
    let sat = [
        "saturate",
        "--sizes",
        "none",
        "--step-duration",
        "0.3s",
        "--warmup",
        "0s",
        "--max-qd",
        "2",
        "--size",
        "16M",
        "--no-save",
        "t.dat",
    ];
    let pre = [
        "preflight",
        "--quick",
        "--timing",
        "0.2s:0.2s",
        "--size",
        "16M",
        "--data",
        "data",
        "--log",
        "log",
        "--backup",
        "backup",
        "--no-save",
    ];
    for args in [
        &run[..],
        &sat[..],
        &pre[..],
        &["suite", "list"][..],
        &["suite", "show", "quick"][..],
        &["suite", "show", "oltp"][..],
        &["audit", "."][..],
        &["run", "--help"][..],
        &["preflight", "--help"][..],
        &["cachescan", "--help"][..],
    ] {
        let text = at_80(dir.path(), args);
        assert!(text.lines().count() > 3, "{args:?}: {text}");
        assert_fits(&args.join(" "), &text);
    }
    // suite list's descriptions read from the left, as words do
    let list = at_80(dir.path(), &["suite", "list"]);
    let quick = list.lines().find(|l| l.contains("│ quick")).unwrap();
    assert!(quick.contains("s   A few minutes"), "{quick}");
    let wrapped = list.lines().nth(4).unwrap();
    assert!(wrapped.trim_end_matches('│').ends_with("  "), "{list}");
}

#[test]
fn the_live_line_names_the_test_and_step_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let saturate = format!(
        "saturate --step-duration 1.5s --warmup 1.2s --max-qd 2 --no-throttled --sizes none \
         --size 16M --no-save {}",
        dir.path().join("t.dat").display()
    );
    let Some(tty) = crate::on_a_terminal(&saturate) else {
        return;
    };
    let tty = tty.replace("\x1b[2K", "");
    let lines: Vec<&str> = tty.split(['\r', '\n']).collect();
    for want in [
        "qd 1, step 1: starting",
        "qd 2, step 2: starting",
        "step 1: warming up",
    ] {
        assert!(
            lines.iter().any(|l| l.contains(want)),
            "no '{want}':\n{tty}"
        );
    }
    assert!(
        lines.iter().all(|l| l.chars().count() <= 80),
        "a live line over 80 columns:\n{tty}"
    );
}

#[test]
fn a_memory_backed_target_is_called_so() {
    let shm = std::path::Path::new("/dev/shm");
    let is_tmpfs = std::fs::read_to_string("/proc/self/mounts")
        .map(|m| {
            m.lines()
                .any(|l| l.split(' ').nth(1) == Some("/dev/shm") && l.contains("tmpfs"))
        })
        .unwrap_or(false);
    if !is_tmpfs {
        crate::skip("/dev/shm is not a tmpfs here");
        return;
    }
    let f = shm.join(format!("iocap-usability-{}", std::process::id()));
    let j = crate::run_json(shm, &["--no-save", f.to_str().unwrap()]);
    let _ = std::fs::remove_file(&f);
    let w = j["tests"][0]["warnings"].to_string();
    assert!(
        w.contains("is on tmpfs") && w.contains("measure memory"),
        "{w}"
    );
}

#[test]
fn missing_paths_are_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("nonexistent");
    for cmd in ["audit", "fsync"] {
        let out = iocap(dir.path())
            .args(
                [cmd, "--no-save"]
                    .iter()
                    .take(if cmd == "fsync" { 2 } else { 1 }),
            )
            .arg(&gone)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("nonexistent") && err.contains("no such"),
            "{cmd}: {err}"
        );
        assert!(!gone.exists(), "{cmd} created {}", gone.display());
    }
}

#[test]
fn fio_flag_names_work_and_the_help_shows_the_write_share_default() {
    let dir = tempfile::tempdir().unwrap();
    let j = json_of(
        dir.path(),
        &[
            "run",
            "--blocksize",
            "4K",
            "--iodepth",
            "4",
            "--numjobs",
            "2",
            "--runtime",
            "0.3s",
            "--ramp_time",
            "0s",
            "--readwrite",
            "randrw",
            "--rwmixwrite",
            "20",
            "--size",
            "16M",
            "--no-save",
            "--output",
            "json",
            "t.dat",
        ],
    );
    let s = &j["tests"][0]["spec"];
    assert_eq!(
        (&s["bs_bytes"], &s["qd"], &s["threads"], &s["write_pct"]),
        (&4096.into(), &4.into(), &2.into(), &20.into()),
        "{s:#}"
    );
    let help = at_80(dir.path(), &["run", "--help"]);
    let at = help.find("--write-pct").unwrap();
    assert!(
        help[at..at + 200].contains("[default: 50]"),
        "{}",
        &help[at..at + 200]
    );
}

#[test]
fn a_file_that_is_not_a_suite_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("passwd");
    std::fs::write(&p, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    let out = iocap(dir.path())
        .args(["suite", "show"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not a suite file") && err.contains("line 1"),
        "{err}"
    );
}

/// Runs `iocap ARGS` with `COLUMNS=80` in `dir`, whatever its exit; the code, stdout, stderr.
fn at_80_any(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = iocap(dir).env("COLUMNS", "80").args(args).output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.code(), text(out.stdout), text(out.stderr))
}

/// Issue 23: bare `iocap` listed every command on one 235-column line, the hidden `store-fill`
/// among them; neither it nor `--help` said where to start.
#[test]
fn bare_iocap_and_its_help_fit_and_name_preflight_quick_first() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, bare) = at_80_any(dir.path(), &[]);
    assert_eq!(code, Some(2), "{out}{bare}");
    assert!(!bare.contains("store-fill"), "{bare}");
    for (what, text) in [
        ("iocap", bare),
        ("iocap --help", at_80(dir.path(), &["--help"])),
        ("iocap -h", at_80(dir.path(), &["-h"])),
    ] {
        assert_fits(what, &text);
        let start = text.find("iocap preflight --quick");
        let commands = text.find("Commands:");
        assert!(
            matches!((start, commands), (Some(s), Some(c)) if s < c),
            "{what} names no place to start before its commands:\n{text}"
        );
    }
}

/// Issue 23: `sqlio --help` and `diskspd --help` (their own usage text) were 96 and 93 columns.
#[test]
fn sqlio_and_diskspd_help_fit_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    for args in [["sqlio", "--help"], ["diskspd", "--help"]] {
        assert_fits(&args.join(" "), &at_80(dir.path(), &args));
    }
}

/// Issue 23: a compare of different workloads printed a 206-column line, and a `--bs-split`
/// run's heading was 89 columns.
#[test]
fn a_compare_of_different_workloads_and_a_bs_split_heading_fit() {
    let dir = tempfile::tempdir().unwrap();
    let quick = ["--duration", "0.3s", "--warmup", "0s", "--size", "16M"];
    let mut ids = Vec::new();
    for shape in [
        &["--rw", "randread", "--bs", "8K"][..],
        &[
            "--rw",
            "write",
            "--bs",
            "64K",
            "--qd",
            "2",
            "--threads",
            "2",
        ][..],
    ] {
        let args = [&["run"][..], &quick, shape, &["--db", "r.db", "t.dat"]].concat();
        let text = at_80(dir.path(), &[&args[..], &["--output", "json"]].concat());
        let run: serde_json::Value = serde_json::from_str(&text).unwrap();
        ids.push(run["run_id"].as_str().unwrap().to_string());
    }
    let compare = at_80(dir.path(), &["compare", &ids[0], &ids[1], "--db", "r.db"]);
    assert!(compare.contains("different workload"), "{compare}");
    assert_fits("compare", &compare);
    let split = "512:10,8K:20,16K:20,64K:50";
    let args = [
        &["run"][..],
        &quick,
        &["--bs-split", split, "--no-save", "t.dat"],
    ]
    .concat();
    let text = at_80(dir.path(), &args);
    assert!(text.contains(split), "{text}");
    assert_fits("run --bs-split", &text);
}

/// Issue 23: audit's table broke paths in the middle (`/sys/class/block/vd` / `a/queue/...`).
/// Every path of the evidence, and the audited path itself, stays whole on one line.
#[test]
fn audit_keeps_paths_whole_within_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("database-files-of-the-accounting");
    std::fs::create_dir(&deep).unwrap();
    let deep = deep.to_str().unwrap();
    let text = at_80(dir.path(), &["audit", deep]);
    assert_fits("audit", &text);
    let report = crate::json_of(dir.path(), &["audit", deep, "--output", "json"]);
    let mut words = vec![deep.to_string()];
    for c in report["checks"].as_array().unwrap() {
        let evidence = c["evidence"].as_str().unwrap();
        words.extend(
            evidence
                .split_whitespace()
                .filter(|w| w.contains('/') && w.chars().count() < 70)
                .map(String::from),
        );
    }
    for w in words {
        assert!(
            text.lines().any(|l| l.contains(&w)),
            "'{w}' is broken across lines:\n{text}"
        );
    }
}

/// Issue 23: bash completion of `--rw` and `--engine` offered file names.
#[test]
fn bash_completion_offers_the_values_of_rw_and_engine() {
    let dir = tempfile::tempdir().unwrap();
    let script = at_80(dir.path(), &["completions", "bash"]);
    let lines: Vec<&str> = script.lines().collect();
    for (flag, want) in [
        (
            "--rw)",
            "compgen -W \"read write randread randwrite rw randrw\"",
        ),
        (
            "--engine)",
            "compgen -W \"auto io_uring io_uring_unregistered psync\"",
        ),
    ] {
        let at: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].trim() == flag)
            .collect();
        assert!(!at.is_empty(), "no {flag} in the bash completion");
        for i in at {
            assert!(
                lines[i + 1].contains(want),
                "{flag} offers: {}",
                lines[i + 1]
            );
        }
    }
}

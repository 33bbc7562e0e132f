//! `export` and `report` (issue 14 items 8 and 9): `--format` for the format and `-o FILE` for
//! the file, a format name after `--output` refused, no file overwritten without `--force`
//! and no symbolic link written through even with it;
//! the CSV's columns and quoting, `--all` and the history filters.

use std::path::Path;

use crate::{iocap, QUICK};

/// A quick test saved to `db`; returns its run id.
fn saved(dir: &Path, db: &str, args: &[&str]) -> String {
    let out = iocap(dir)
        .arg("run")
        .args(QUICK)
        .args(args)
        .args(["--db", db, "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["run_id"].as_str().unwrap().to_string()
}

fn stdout_of(dir: &Path, args: &[&str]) -> String {
    let out = iocap(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "iocap {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_format_name_after_output_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    saved(dir.path(), db, &["a.dat"]);
    for (cmd, fmt) in [
        ("export", "json"),
        ("export", "CSV"),
        ("export", "md"),
        ("report", "html"),
        ("report", "text"),
    ] {
        let out = iocap(dir.path())
            .args([cmd, "last", "--output", fmt, "--db", db])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd} --output {fmt}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--format") && err.contains("-o FILE"),
            "{cmd} --output {fmt}: {err}"
        );
        assert!(!dir.path().join(fmt).exists(), "no file named {fmt}");
    }
    // the format by --format, the file by -o (or --out)
    iocap(dir.path())
        .args(["export", "last", "--format", "csv", "--out", "runs.csv"])
        .args(["--db", db])
        .assert()
        .success();
    let csv = std::fs::read_to_string(dir.path().join("runs.csv")).unwrap();
    assert!(csv.starts_with("run_id,"), "{csv}");
    iocap(dir.path())
        .args(["report", "last", "--format", "html", "-o", "r.html"])
        .args(["--db", db])
        .assert()
        .success();
    let md = stdout_of(
        dir.path(),
        &["export", "last", "--format", "md", "--db", db],
    );
    assert!(md.contains("| ---"), "{md}");
    // --format works where --output takes a format
    let h = stdout_of(dir.path(), &["history", "--format", "json", "--db", db]);
    assert!(h.trim_start().starts_with('['), "{h}");
}

#[test]
fn an_existing_file_is_never_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    saved(dir.path(), db, &["a.dat"]);
    let mine = dir.path().join("mine.txt");
    for cmd in ["export", "report"] {
        std::fs::write(&mine, "my data").unwrap();
        let out = iocap(dir.path())
            .args([cmd, "last", "-o", "mine.txt", "--db", db])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("already exists") && err.contains("--force"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my data", "{cmd}");
        iocap(dir.path())
            .args([cmd, "last", "-o", "mine.txt", "--force", "--db", db])
            .assert()
            .success();
        assert_ne!(std::fs::read_to_string(&mine).unwrap(), "my data", "{cmd}");
    }
}

#[test]
fn an_output_symlink_is_refused_and_its_target_kept_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    saved(dir.path(), db, &["a.dat"]);
    // the user's file elsewhere, and a link to it where the report is asked for
    let elsewhere = tempfile::tempdir().unwrap();
    let theirs = elsewhere.path().join("notes.txt");
    let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&theirs, &data).unwrap();
    let link = dir.path().join("out.html");
    std::os::unix::fs::symlink(&theirs, &link).unwrap();
    for args in [
        &["report", "last", "-o", "out.html", "--force"][..],
        &["report", "last", "-o", "out.html"][..],
        &[
            "export", "last", "--format", "csv", "-o", "out.html", "--force",
        ][..],
        &["export", "last", "-o", "out.html"][..],
        &[
            "run",
            "--duration",
            "0.2s",
            "--warmup",
            "0s",
            "--size",
            "4M",
        ][..],
    ] {
        let mut cmd = iocap(dir.path());
        cmd.args(args).args(["--db", db]);
        if args[0] == "run" {
            cmd.args(["--html", "out.html", "b.dat"]);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("out.html is a symbolic link"),
            "{args:?}: {err}"
        );
        assert_eq!(std::fs::read(&theirs).unwrap(), data, "{args:?}: replaced");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    }
    // a real path is still replaced with --force
    iocap(dir.path())
        .args(["report", "last", "-o", theirs.to_str().unwrap(), "--force"])
        .args(["--db", db])
        .assert()
        .success();
    assert_ne!(std::fs::read(&theirs).unwrap(), data);
}

#[test]
fn export_all_or_filtered_runs_as_csv_with_a_quoted_label() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    let label = "raid10, \"tuned\"";
    let a = saved(dir.path(), db, &["a.dat", "--label", label, "--tag", "n"]);
    let b = saved(dir.path(), db, &["b.dat", "--qd", "4", "--rw", "randwrite"]);
    let all = stdout_of(
        dir.path(),
        &["export", "--all", "--format", "csv", "--db", db],
    );
    let head: Vec<&str> = all.lines().next().unwrap().split(',').collect();
    for c in [
        "label",
        "started_at",
        "rw",
        "bs_bytes",
        "qd",
        "threads",
        "targets",
    ] {
        assert!(head.contains(&c), "no {c} column: {head:?}");
    }
    // every run, oldest first; the label quoted as RFC 4180 says
    let first_b = all.find(&b).unwrap();
    assert!(all.find(&a).unwrap() < first_b, "{all}");
    let quoted = "\"raid10, \"\"tuned\"\"\"";
    let a_total = all.lines().find(|l| l.starts_with(&a)).unwrap();
    assert!(a_total.contains(quoted), "{a_total}");
    let b_total = all.lines().find(|l| l.starts_with(&b)).unwrap();
    assert!(b_total.contains(",randwrite,8192,4,1,b.dat"), "{b_total}");

    // history's filters pick the runs
    let on_b = stdout_of(
        dir.path(),
        &["export", "--target", "b.dat", "--format", "csv", "--db", db],
    );
    assert!(on_b.contains(&b) && !on_b.contains(&a), "{on_b}");
    let tagged = stdout_of(dir.path(), &["export", "--tag", "n", "--db", db]);
    let v: serde_json::Value = serde_json::from_str(&tagged).unwrap();
    assert_eq!(v["run_id"], a.as_str(), "one run: its JSON object");

    // nothing named, both kinds named, nothing matched: refused
    for (args, says) in [
        (vec!["export"], "name the runs"),
        (vec!["export", "last", "--all"], "not both"),
        (vec!["export", "--host", "no-such-host"], "no runs"),
        (vec!["export", "--all", "--since", "yesterday"], "--since"),
    ] {
        let out = iocap(dir.path())
            .args(&args)
            .args(["--db", db])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn history_fits_80_columns_unless_wide() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    iocap(dir.path())
        .args(["store-fill", "--runs", "8", "--db", db])
        .assert()
        .success();
    let label = "très longue étiquette: san-a raid10 après la mise à jour du firmware";
    let id = saved(
        dir.path(),
        db,
        &["a.dat", "--label", label, "--tag", "nightly"],
    );
    let narrow = iocap(dir.path())
        .env("COLUMNS", "80")
        .args(["history", "--db", db])
        .output()
        .unwrap();
    assert!(narrow.status.success());
    let narrow = String::from_utf8(narrow.stdout).unwrap();
    for line in narrow.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} chars: {line}",
            line.chars().count()
        );
    }
    assert!(narrow.contains(&id), "run ids whole: {narrow}");
    assert!(narrow.contains("run: "), "each run's key figure: {narrow}");
    // the terminal's width when COLUMNS is a number
    let w40 = iocap(dir.path())
        .env("COLUMNS", "40")
        .args(["history", "--db", db])
        .output()
        .unwrap();
    let w40 = String::from_utf8(w40.stdout).unwrap();
    assert!(w40.lines().all(|l| l.chars().count() <= 40), "{w40}");

    let wide = iocap(dir.path())
        .env("COLUMNS", "80")
        .args(["history", "--wide", "--db", db])
        .output()
        .unwrap();
    let wide = String::from_utf8(wide.stdout).unwrap();
    let head = wide.lines().nth(1).unwrap();
    for col in [
        "tags",
        "workload",
        "targets",
        "IOPS",
        "MB/s",
        "p99",
        "key figure",
    ] {
        assert!(head.contains(col), "--wide shows {col}: {head}");
    }
    assert!(wide.lines().any(|l| l.chars().count() > 80));
    assert!(wide.contains(label) && wide.contains("nightly"));
}

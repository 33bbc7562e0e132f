//! Keeping every result, end to end: runs saved to the store, listed, shown, compared, exported
//! and reported; the store survives concurrent writers and a killed writer; the same commands
//! work on PostgreSQL.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::{iocap, QUICK};

fn json(dir: &Path, args: &[&str]) -> Value {
    let out = iocap(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "iocap {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

fn ids(history: &Value) -> Vec<String> {
    history
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_string())
        .collect()
}

/// Runs a quick test saved to `db`; returns the JSON it printed.
fn saved_run(dir: &Path, db: &str, args: &[&str]) -> Value {
    let out = iocap(dir)
        .arg("run")
        .args(QUICK)
        .args(args)
        .args(["--db", db, "--output", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("saved run"), "no word of the save: {err}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The "done when": three runs on two targets, listed, compared, exported, reported.
fn three_runs_on_two_targets(dir: &Path, db: &str) {
    let r1 = saved_run(
        dir,
        db,
        &["a.dat", "--label", "before <tuning>", "--tag", "nightly"],
    );
    let r2 = saved_run(dir, db, &["b.dat", "--qd", "4", "--note", "qd 4 on b"]);
    let r3 = saved_run(
        dir,
        db,
        &["a.dat", "b.dat", "--tag", "nightly", "--tag", "both"],
    );
    let hist = json(dir, &["history", "--db", db, "--output", "json"]);
    let want: Vec<String> = [&r3, &r2, &r1]
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids(&hist), want, "newest first");
    assert_eq!(hist[2]["label"], "before <tuning>");
    assert_eq!(hist[0]["targets"].as_array().unwrap().len(), 2);
    let nightly = json(
        dir,
        &[
            "history", "--db", db, "--tag", "nightly", "--output", "json",
        ],
    );
    assert_eq!(ids(&nightly), [want[0].clone(), want[2].clone()]);
    let on_b = json(
        dir,
        &[
            "history", "--db", db, "--target", "b.dat", "--output", "json",
        ],
    );
    assert_eq!(ids(&on_b), [want[0].clone(), want[1].clone()]);

    // show gives back exactly what the run printed, percentiles and histograms included
    for r in [&r1, &r2, &r3] {
        let id = r["run_id"].as_str().unwrap();
        assert_eq!(&json(dir, &["show", id, "--db", db, "--output", "json"]), r);
    }
    let text = iocap(dir)
        .args(["show", &want[2], "--db", db])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("label: before <tuning>") && text.contains("p99.9"),
        "{text}"
    );

    let c = json(
        dir,
        &[
            "compare", &want[2], &want[1], &want[0], "--db", db, "--output", "json",
        ],
    );
    assert_eq!(c["runs"].as_array().unwrap().len(), 2);
    let diffs = c["runs"][0]["tests"][0]["differences"].to_string();
    assert!(
        diffs.contains("spec.qd"),
        "qd 16 against qd 4 is a difference: {diffs}"
    );

    let md = iocap(dir)
        .args([
            "export", &want[0], &want[1], "--format", "markdown", "--db", db,
        ])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains(&want[0]) && md.contains(&want[1]) && md.contains("| ---"),
        "{md}"
    );
    let csv = iocap(dir)
        .args(["export", &want[0], &want[2], "--format", "csv", "--db", db])
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert_eq!(csv.lines().filter(|l| l.starts_with("run_id,")).count(), 1);
    assert!(csv.contains(&want[0]) && csv.contains(&want[2]));
    let one = json(dir, &["export", &want[1], "--db", db]);
    assert_eq!(&one, &r2, "a JSON export of one run is the run's JSON");

    let html = dir.join("report.html");
    iocap(dir)
        .args(["report", &want[0], &want[1], &want[2], "-o"])
        .arg(&html)
        .args(["--db", db])
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("before &lt;tuning&gt;"), "the label, escaped");
    assert!(!page.contains("before <tuning>"));
    assert!(page.contains("<svg"));
}

#[test]
fn three_runs_on_two_targets_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    three_runs_on_two_targets(dir.path(), db.to_str().unwrap());
}

#[test]
fn three_runs_on_two_targets_postgres() {
    let Some(url) = pg_schema() else { return };
    let dir = tempfile::tempdir().unwrap();
    three_runs_on_two_targets(dir.path(), &url);
}

/// A fresh schema in the test database, or `None` (with a message) when no server is there.
pub(crate) fn pg_schema() -> Option<String> {
    let url = std::env::var("IOCAP_TEST_PG")
        .unwrap_or_else(|_| "postgres://iocap:iocap@127.0.0.1:5432/iocap_test".into());
    let mut client = match postgres::Client::connect(&url, postgres::NoTls) {
        Ok(c) => c,
        Err(e) => {
            if std::env::var_os("CI").is_some() {
                panic!("PostgreSQL at {url} is required under CI (.ci/run starts it): {e}");
            }
            eprintln!("skipping: no PostgreSQL at {url} ({e}); run .ci/postgres.sh as root");
            return None;
        }
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let schema = format!("cli{}_{nanos}", std::process::id());
    client
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .unwrap();
    Some(format!("{url}?options=-csearch_path%3D{schema}"))
}

#[test]
fn runs_go_to_the_default_store_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("xdg");
    let run = |extra: &[&str], env: Option<(&str, &str)>| {
        let mut c = iocap(dir.path());
        c.env("XDG_DATA_HOME", &data)
            .arg("run")
            .args(QUICK)
            .args(extra);
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        c.assert().success();
    };
    run(&[], None);
    let default = data.join("iocap/results.db");
    assert!(default.exists(), "the default store is in XDG_DATA_HOME");
    run(&["--no-save"], None);
    let env_db = dir.path().join("env.db");
    run(&[], Some(("IOCAP_DB", env_db.to_str().unwrap())));
    let count = |db: &Path| {
        ids(&json(
            dir.path(),
            &["history", "--db", db.to_str().unwrap(), "--output", "json"],
        ))
        .len()
    };
    assert_eq!(count(&default), 1, "--no-save saved nothing");
    assert_eq!(count(&env_db), 1, "IOCAP_DB is honoured");
}

#[test]
fn output_files_are_never_written_over() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    let mine = dir.path().join("mine.html");
    std::fs::write(&mine, "my own file").unwrap();
    // refused before the test runs, not after
    let out = iocap(dir.path())
        .args(["run", "--duration", "30s", "--db", db, "--html"])
        .arg(&mine)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    saved_run(dir.path(), db, &["--html", "new.html"]);
    assert!(std::fs::read_to_string(dir.path().join("new.html"))
        .unwrap()
        .contains("<svg"));
    for args in [
        vec!["report", "last", "-o", "mine.html"],
        vec!["export", "last", "-o", "mine.html"],
    ] {
        let out = iocap(dir.path())
            .args(&args)
            .args(["--db", db])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my own file");
    }
    iocap(dir.path())
        .args(["export", "last", "-o", "mine.html", "--force", "--db", db])
        .assert()
        .success();
    assert!(std::fs::read_to_string(&mine).unwrap().starts_with('{'));
}

#[test]
fn regressions_set_the_exit_code_and_thresholds_are_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    // constructed runs 0 and 4: the same 8K random reads, 10,000 against 11,200 IOPS
    iocap(dir.path())
        .args(["store-fill", "--runs", "5", "--db", db])
        .assert()
        .success();
    let all = ids(&json(
        dir.path(),
        &["history", "--db", db, "--output", "json"],
    ));
    let (run0, run4) = (&all[4], &all[0]);
    let compare = |extra: &[&str]| {
        iocap(dir.path())
            .args(["compare", run4, run0, "--fail-on-regression", "--db", db])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = compare(&[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("REGRESSION") && text.contains("IOPS -10.7 %"),
        "{text}"
    );
    assert_eq!(
        compare(&["--iops-drop", "15", "--mbps-drop", "15"])
            .status
            .code(),
        Some(0)
    );
    // without --fail-on-regression a regression is reported, not failed
    iocap(dir.path())
        .args(["compare", run4, run0, "--db", db])
        .assert()
        .success();
    // against the baseline of the host and target
    iocap(dir.path())
        .args(["baseline", "set", run4, "--db", db])
        .assert()
        .success();
    let out = iocap(dir.path())
        .args([
            "compare",
            "--baseline",
            run4,
            "--db",
            db,
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = iocap(dir.path())
        .args(["compare", "--baseline", run0, "--db", db])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "run 0 is on another host: no baseline"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no baseline for host db01"));
}

#[test]
fn delete_and_prune_keep_baselines() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    // constructed runs start in October 2025: all older than 30 days
    iocap(dir.path())
        .args(["store-fill", "--runs", "12", "--db", db])
        .assert()
        .success();
    let all = ids(&json(
        dir.path(),
        &["history", "--db", db, "--output", "json"],
    ));
    iocap(dir.path())
        .args(["baseline", "set", &all[3], "--db", db])
        .assert()
        .success();
    iocap(dir.path())
        .args(["delete", &all[0], &all[1][..18], "--db", db])
        .assert()
        .success();
    let out = iocap(dir.path())
        .args(["delete", &all[2], "no-such-run", "--db", db])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "one bad id deletes nothing");
    let out = iocap(dir.path())
        .args(["prune", "--older-than", "30d", "--dry-run", "--db", db])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 9);
    iocap(dir.path())
        .args(["prune", "--older-than", "30d", "--db", db])
        .assert()
        .success();
    let left = ids(&json(
        dir.path(),
        &["history", "--db", db, "--output", "json"],
    ));
    assert_eq!(left, [all[3].clone()], "only the baseline run is left");
}

#[test]
fn two_processes_saving_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    iocap(dir.path())
        .args(["store-fill", "--runs", "1", "--first", "9999", "--db", db])
        .assert()
        .success();
    let bin = assert_cmd::cargo::cargo_bin("iocap");
    let kids: Vec<_> = [0, 1000]
        .iter()
        .map(|first| {
            std::process::Command::new(&bin)
                .args(["store-fill", "--runs", "150", "--first", &first.to_string()])
                .args(["--db", db])
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut k in kids {
        assert!(k.wait().unwrap().success());
    }
    let all = json(
        dir.path(),
        &["history", "--db", db, "--limit", "0", "--output", "json"],
    );
    assert_eq!(ids(&all).len(), 301);
}

#[test]
fn a_writer_killed_mid_save_leaves_a_consistent_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let bin = assert_cmd::cargo::cargo_bin("iocap");
    let mut kid = std::process::Command::new(&bin)
        .args(["store-fill", "--runs", "1000000", "--db"])
        .arg(&db)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // wait until it has saved a few runs, then kill it in the middle of whatever it does
    let loc = iocap_store::Location::Sqlite(db.clone());
    for _ in 0..200 {
        std::thread::sleep(Duration::from_millis(50));
        if let Ok(mut s) = iocap_store::Store::open(&loc) {
            if s.list(&iocap_store::Filter::default())
                .map_or(0, |l| l.len())
                >= 20
            {
                break;
            }
        }
    }
    kid.kill().unwrap(); // SIGKILL
    kid.wait().unwrap();
    let mut s = iocap_store::Store::open(&loc).unwrap();
    let runs = s
        .list(&iocap_store::Filter {
            limit: 0,
            ..Default::default()
        })
        .unwrap();
    assert!(runs.len() >= 20, "{} runs", runs.len());
    for r in &runs {
        let full = s.load(&r.run_id).expect("every listed run loads whole");
        assert_eq!(full.tests.len(), 1);
        let hists = s.histograms(&r.run_id).unwrap();
        assert!(
            hists.iter().any(|h| h.1 == "total"),
            "{} lacks its rows",
            r.run_id
        );
    }
    // and the store takes new runs
    iocap(dir.path())
        .args(["store-fill", "--runs", "1", "--first", "5000000", "--db"])
        .arg(&db)
        .assert()
        .success();
}

#[test]
fn bad_store_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db = db.to_str().unwrap();
    for (args, says) in [
        (
            vec!["show", "nope", "--db", db],
            "there is no result store at",
        ),
        (
            vec!["history", "--db", "mysql://x/y"],
            "not a store iocap knows",
        ),
        (
            vec!["history", "--since", "yesterday", "--db", db],
            "--since 'yesterday'",
        ),
        (
            vec!["prune", "--older-than", "soon", "--db", db],
            "duration",
        ),
        (
            vec!["compare", "last", "--db", db],
            "there is no result store at",
        ),
        (
            vec!["compare", "a", "b", "--p99-rise=-5", "--db", db],
            "outside 0 to 1000",
        ),
    ] {
        let out = iocap(dir.path()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn an_unreachable_store_fails_before_the_test_not_after() {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path())
        .args([
            "run",
            "--duration",
            "60s",
            "--db",
            "postgres://x:secret@127.0.0.1:1/x",
        ])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Connection refused"),
        "the reason is named: {err}"
    );
    assert!(!err.contains("secret"), "the password is not shown: {err}");
    assert!(!dir.path().join("iocap.testfile").exists(), "no test ran");
}

/// Issue 14: commands that read or change saved runs never create a store: a mistyped `--db`
/// is an error (exit 2) and leaves no file and no directory behind.
#[test]
fn reading_commands_create_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("typo/r.db");
    let db = db.to_str().unwrap();
    for args in [
        vec!["history", "--db", db],
        vec!["show", "last", "--db", db],
        vec!["compare", "a", "b", "--db", db],
        vec!["export", "last", "--db", db],
        vec!["report", "last", "--db", db, "-o", "r.html"],
        vec!["baseline", "show", "--db", db],
        vec!["delete", "last", "--db", db],
    ] {
        let out = iocap(dir.path()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("there is no result store at"),
            "{args:?}: {err}"
        );
        assert!(
            !dir.path().join("typo").exists(),
            "{args:?} made the directory"
        );
    }
}

/// Issue 14: another program's SQLite database is refused, by every command, and stays
/// byte-identical.
#[test]
fn another_programs_database_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);
             INSERT INTO users (name) VALUES ('alice');",
        )
        .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let db = path.to_str().unwrap();
    for args in [
        vec!["history", "--db", db],
        vec![
            "run",
            "--duration",
            "0.2s",
            "--warmup",
            "0s",
            "--size",
            "16M",
            "--db",
            db,
        ],
    ] {
        let out = iocap(dir.path()).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("another program's database (tables: users)"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "the file changed");
    for side in ["other.db-wal", "other.db-shm"] {
        assert!(!dir.path().join(side).exists(), "{side} left behind");
    }
    // a file that is no database at all is refused too, untouched
    let junk = dir.path().join("notes.txt");
    std::fs::write(&junk, "my notes, not a database\n".repeat(200)).unwrap();
    let out = iocap(dir.path())
        .args(["history", "--db", junk.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a result store iocap can use"));
    assert_eq!(
        std::fs::read_to_string(&junk).unwrap(),
        "my notes, not a database\n".repeat(200)
    );
}

/// Issue 14: a valid store on a read-only mount can still be read (as root: a tmpfs mounted
/// read-only; skipped otherwise).
#[test]
fn a_store_on_a_read_only_mount_can_be_read() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        crate::skip("not root (the test mounts a read-only tmpfs)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.db");
    let src = src.to_str().unwrap();
    iocap(dir.path())
        .args([
            "run",
            "--duration",
            "0.3s",
            "--warmup",
            "0s",
            "--size",
            "16M",
            "--db",
            src,
        ])
        .assert()
        .success();
    let mnt = dir.path().join("ro");
    std::fs::create_dir(&mnt).unwrap();
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let mount = |args: &[&str]| {
        std::process::Command::new("mount")
            .args(args)
            .arg(&mnt)
            .status()
            .unwrap()
            .success()
    };
    assert!(mount(&["-t", "tmpfs", "none"]), "mount tmpfs");
    let _guard = Unmount(mnt.clone());
    std::fs::copy(src, mnt.join("r.db")).unwrap();
    assert!(mount(&["-o", "remount,ro"]), "remount read-only");
    let db = mnt.join("r.db");
    let out = iocap(dir.path())
        .args(["history", "--db", db.to_str().unwrap(), "--output", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
}

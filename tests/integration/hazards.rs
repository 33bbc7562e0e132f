//! Paths that are not what iocap takes them for (issue 23, point 4): a FIFO, a socket or a
//! character device as a test target or an input file, anything but a SQLite file as `--db`, a mistyped role
//! directory, and a file another run is filling or testing. Each is refused promptly (exit 2),
//! naming what it is, and nothing is created in its place. Every command here has a timeout,
//! so a regression that hangs fails instead.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::{iocap, QUICK};

/// Well past what a refusal takes, well short of a hang.
const PROMPT: Duration = Duration::from_secs(30);

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Runs `iocap args..` in `dir` under [`PROMPT`]; asserts exit 2 and returns stderr.
fn refused(dir: &Path, args: &[&str]) -> String {
    let out = iocap(dir).args(args).timeout(PROMPT).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    err
}

#[test]
fn a_fifo_socket_or_character_device_target_is_refused_before_it_is_opened() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mkfifo(&d.join("pipe"));
    std::os::unix::fs::symlink("pipe", d.join("to-pipe")).unwrap();
    let _sock = std::os::unix::net::UnixListener::bind(d.join("sock")).unwrap();
    for (target, kind) in [
        ("pipe", "is a FIFO"),
        ("to-pipe", "is a FIFO"),
        ("sock", "is a socket"),
        ("/dev/null", "is a character device"),
    ] {
        for rw in ["read", "randwrite"] {
            let t0 = Instant::now();
            let err = refused(d, &[&["run", "--rw", rw][..], &QUICK, &[target]].concat());
            assert!(err.contains(&format!("{target} {kind}")), "{target}: {err}");
            assert!(t0.elapsed() < PROMPT, "{target}");
        }
    }
    // a FIFO's open for reading would have waited for a writer, for ever
    let err = refused(d, &["fsync", "pipe"]);
    assert!(err.contains("pipe is a FIFO"), "{err}");
    assert_eq!(names(d), ["pipe", "sock", "to-pipe"]);
}

/// Files iocap reads because they were named (a suite, a profile, SQLIO's param and batch files,
/// a verify journal): a FIFO among them is refused at once by its kind. Their reads used to wait
/// for a writer for ever, with Ctrl-C swallowed.
#[test]
fn a_fifo_named_as_an_input_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mkfifo(&d.join("pipe"));
    for args in [
        &["suite", "show", "pipe"][..],
        &["suite", "run", "pipe", "--no-save"],
        &["preflight", "--quick", "--profile", "pipe", "--no-save"],
        &["sqlio", "-Fpipe", "--no-save"],
        &["sqlio-batch", "pipe", "--no-save"],
        &[
            "verify",
            "--check",
            "--journal",
            "pipe",
            "t.dat",
            "--no-save",
        ],
    ] {
        let err = refused(d, args);
        assert!(
            err.contains("pipe is a FIFO (named pipe), not a file"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(names(d), ["pipe"]);
}

#[test]
fn a_db_that_is_not_a_file_is_refused_and_nothing_is_made_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mkfifo(&d.join("pipe"));
    std::fs::create_dir(d.join("store")).unwrap();
    for (db, kind) in [("pipe", "is a FIFO"), ("store", "is a directory")] {
        for args in [
            &["history"][..],
            &["export", "last"][..],
            &[&["run"][..], &QUICK, &["t.dat"]].concat(),
        ] {
            let err = refused(d, &[args, &["--db", db]].concat());
            assert!(err.contains(&format!("{db} {kind}")), "{args:?}: {err}");
        }
    }
    // no journal, no WAL, no test file, nothing in the directory
    assert_eq!(names(d), ["pipe", "store"]);
    assert!(names(&d.join("store")).is_empty());
    // /dev/null: SQLite left /dev/null-journal behind (as root, the only one who can)
    let journal = Path::new("/dev/null-journal");
    if is_root() && !journal.exists() {
        let err = refused(
            d,
            &[&["run"][..], &QUICK, &["t.dat", "--db", "/dev/null"]].concat(),
        );
        assert!(err.contains("/dev/null is a character device"), "{err}");
        assert!(!journal.exists(), "/dev/null-journal was made");
        assert!(!Path::new("/dev/null-wal").exists());
        assert_eq!(names(d), ["pipe", "store"]);
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn a_missing_role_directory_is_an_error_and_nothing_is_made_in_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("data")).unwrap();
    let quick = [
        "preflight",
        "--quick",
        "--timing",
        "0.2s:0.2s",
        "--size",
        "4M",
        "--no-save",
    ];
    for (flag, rest) in [
        ("--data", &[][..]),
        ("--log", &["--data", "data"][..]),
        ("--backup", &["--data", "data"][..]),
    ] {
        let err = refused(d, &[&quick[..], rest, &[flag, "typo_dir"]].concat());
        assert!(err.contains(&format!("{flag} typo_dir")), "{flag}: {err}");
        assert!(err.contains("no such directory"), "{flag}: {err}");
    }
    let err = refused(
        d,
        &["suite", "run", "quick", "--log", "typo_dir", "--no-save"],
    );
    assert!(err.contains("--log typo_dir"), "{err}");
    assert_eq!(names(d), ["data"]);
    assert!(names(&d.join("data")).is_empty());
}

/// The pid holding a `flock` on `path` in /proc/locks, once there is one.
fn flock_holder(path: &Path, within: Duration) -> Option<u32> {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if let Ok(m) = std::fs::metadata(path) {
            let dev = format!(
                "{:02x}:{:02x}:{}",
                libc::major(m.dev()),
                libc::minor(m.dev()),
                m.ino()
            );
            let locks = std::fs::read_to_string("/proc/locks").unwrap();
            let pid = locks
                .lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
                .find(|w| w.get(1) == Some(&"FLOCK") && w.get(5) == Some(&dev.as_str()))
                .and_then(|w| w[4].parse().ok());
            if pid.is_some() {
                return pid;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

#[test]
fn a_second_run_on_a_file_being_filled_or_tested_is_refused_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file: PathBuf = d.join("new.dat");
    let first = assert_cmd::cargo::cargo_bin("iocap");
    let first = std::process::Command::new(first)
        .current_dir(d)
        .env("XDG_DATA_HOME", crate::data_home())
        .args(["run", "--duration", "3s", "--warmup", "0s", "--size", "64M"])
        .args([
            "--rw",
            "randwrite",
            "--no-save",
            "--output",
            "json",
            "new.dat",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let holder = flock_holder(&file, PROMPT);
    assert_eq!(holder, Some(first.id()), "the first run locks its new file");
    // while it fills or tests: a read and a write run are both refused at once
    for rw in ["read", "randwrite"] {
        let t0 = Instant::now();
        let err = refused(
            d,
            &[&["run", "--rw", rw][..], &QUICK, &["new.dat"]].concat(),
        );
        let who = format!("process {} (iocap) holds its lock", first.id());
        assert!(
            err.contains("new.dat is in use") && err.contains(&who),
            "{err}"
        );
        assert!(t0.elapsed() < Duration::from_secs(10), "not prompt");
    }
    let out = first.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the first run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["tests"][0]["write"]["ios"].as_u64().unwrap() > 0);
    assert_eq!(v["tests"][0]["targets"][0]["created"], true);
    // once it has ended, the file is free
    iocap(d)
        .args(["run", "--no-save"])
        .args(QUICK)
        .arg("new.dat")
        .timeout(PROMPT)
        .assert()
        .success();
}

/// `iocap ARGS` in `dir`, started and left running (stderr kept, stdout dropped).
fn started(dir: &Path, args: &[&str]) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("iocap"))
        .current_dir(dir)
        .env("XDG_DATA_HOME", crate::data_home())
        .env_remove("IOCAP_DB")
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The pid holding the lock on `path`, once the file has bytes: the lock is taken as the file is
/// created, and its marker (iocap's, which a second run reads first) is written before any byte.
fn held_and_marked(path: &Path) -> Option<u32> {
    let end = Instant::now() + PROMPT;
    while std::fs::metadata(path).map_or(0, |m| m.len()) == 0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    flock_holder(path, PROMPT)
}

/// Stops `child` with SIGINT (Ctrl-C) and waits for it: exit 130.
fn interrupt(child: std::process::Child) {
    // SAFETY: kill(2) on our own child, not yet waited for, with a plain signal
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
}

/// Issue 35, defect 1: verify took no lock, so a verify on a file a run was testing wrote over
/// it (and failed with "corrupt"), and a run or a replay on verify's file went ahead. Each now
/// waits for the other to hold the file's lock (read from /proc/locks, not a sleep), then is
/// refused at once naming it; the holder is interrupted after.
#[test]
fn verify_and_a_run_or_replay_on_one_file_refuse_each_other_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = [
        &["run", "--duration", "600s", "--warmup", "0s"][..],
        &["--size", "16M"],
    ];
    let first = started(
        d,
        &[
            &run.concat()[..],
            &["--rw", "randwrite", "--no-save", "r.dat"],
        ]
        .concat(),
    );
    let holder = held_and_marked(&d.join("r.dat"));
    assert_eq!(holder, Some(first.id()), "the run locks its new file");
    let err = refused(
        d,
        &[
            "verify",
            "--size",
            "16M",
            "--duration",
            "1s",
            "--no-save",
            "r.dat",
        ],
    );
    let who = format!("process {} (iocap) holds its lock", first.id());
    assert!(
        err.contains("r.dat is in use") && err.contains(&who),
        "{err}"
    );
    assert!(!err.contains("corrupt") && !err.contains("FAIL"), "{err}");
    interrupt(first);

    let verify = ["verify", "--size", "16M", "--duration", "600s", "--no-save"];
    let first = started(d, &[&verify[..], &["v.dat"]].concat());
    let holder = held_and_marked(&d.join("v.dat"));
    assert_eq!(holder, Some(first.id()), "verify locks its file");
    // a write trace: 64 writes of 4 KiB
    let mut log = String::from("fio version 3 iolog\n0 /dev/sdx add\n");
    for i in 0..64 {
        log.push_str(&format!("{i} /dev/sdx write {} 4096\n", i * 4096));
    }
    std::fs::write(d.join("w.log"), log).unwrap();
    let who = format!("process {} (iocap) holds its lock", first.id());
    for args in [
        &[
            &run.concat()[..],
            &["--rw", "randwrite", "--no-save", "v.dat"],
        ]
        .concat(),
        &["replay", "w.log", "v.dat", "--no-save"][..],
        &["replay", "w.log", "v.dat", "--allow-overwrite", "--no-save"][..],
    ] {
        let err = refused(d, args);
        assert!(
            err.contains("v.dat is in use") && err.contains(&who),
            "{args:?}: {err}"
        );
    }
    interrupt(first);
}

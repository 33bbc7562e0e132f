//! Runs cut short by a signal, end to end (issue 23 item 5): SIGINT and SIGTERM stop saturate,
//! preflight and the fill of a new test file with exit 130; what is printed says "PARTIAL"
//! first and names the signal, and the saved run says it too in `history` and `show`.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::iocap;

/// What a signalled iocap left: its exit code, stdout and stderr.
struct Stopped {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `iocap ARGS` in `dir`, waits until a line of its stderr contains `cue`, then `after`
/// more, and sends it `signal`.
fn signalled(dir: &Path, args: &[&str], cue: &str, after: Duration, signal: i32) -> Stopped {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("iocap"))
        .current_dir(dir)
        .env("XDG_DATA_HOME", crate::data_home())
        .env_remove("IOCAP_DB")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut stderr = String::new();
    while !stderr.lines().any(|l| l.contains(cue)) {
        let n = err.read_line(&mut stderr).unwrap();
        assert!(n > 0, "iocap ended before {cue:?}:\n{stderr}");
    }
    std::thread::sleep(after);
    // SAFETY: kill(2) on our own child, which has not been waited for, with a plain signal.
    unsafe { libc::kill(child.id() as i32, signal) };
    err.read_to_string(&mut stderr).unwrap();
    let out = child.wait_with_output().unwrap();
    Stopped {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr,
    }
}

/// `iocap ARGS` in `dir`, which must succeed: its stdout.
fn stdout_of(dir: &Path, args: &[&str]) -> String {
    let out = iocap(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The saved run (in `r.db` in `dir`) is partial in the history's list and `show`'s first line,
/// and names `signal`.
fn saved_as_partial(dir: &Path, command: &str, signal: &str) {
    let listed = stdout_of(dir, &["history", "--db", "r.db"]);
    assert!(listed.contains("partial:"), "{listed}");
    let shown = stdout_of(dir, &["show", "last", "--db", "r.db"]);
    let first = shown.lines().next().unwrap();
    assert!(
        first.starts_with(&format!(
            "PARTIAL: this {command} was interrupted by {signal}"
        )),
        "{shown}"
    );
}

#[test]
fn sigterm_stops_saturate_and_every_view_says_partial_and_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "saturate",
        "--sizes",
        "none",
        "--size",
        "16M",
        "--step-duration",
        "1s",
        "--warmup",
        "0s",
        "--db",
        "r.db",
    ];
    // the first step's figures are said on stderr when it ends: stop the second step
    let s = signalled(
        dir.path(),
        &args,
        "qd 1:",
        Duration::from_millis(300),
        libc::SIGTERM,
    );
    assert_eq!(s.code, Some(130), "{}", s.stderr);
    assert!(
        s.stdout
            .starts_with("PARTIAL: this saturate was interrupted by SIGTERM after 1 complete"),
        "{}",
        s.stdout
    );
    assert!(
        !s.stdout.contains("Ctrl-C"),
        "SIGTERM is not Ctrl-C:\n{}",
        s.stdout
    );
    saved_as_partial(dir.path(), "saturate", "SIGTERM");
    let csv = stdout_of(
        dir.path(),
        &["export", "last", "--db", "r.db", "--format", "csv"],
    );
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",partial"), "{csv}");
    assert!(lines.all(|l| l.ends_with(",true")), "{csv}");
}

#[test]
fn sigint_stops_preflight_and_every_view_says_partial_and_sigint() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let args = [
        "preflight",
        "--quick",
        "--timing",
        "1s:1s",
        "--size",
        "16M",
        "--data",
        "data",
        "--db",
        "r.db",
    ];
    // each role's file is written before its tests: stop the data file's (a few seconds)
    let s = signalled(
        dir.path(),
        &args,
        "iocap.testfile",
        Duration::from_millis(1500),
        libc::SIGINT,
    );
    assert_eq!(s.code, Some(130), "{}", s.stderr);
    assert!(
        s.stdout
            .starts_with("PARTIAL: this preflight was interrupted by SIGINT (Ctrl-C) after"),
        "{}",
        s.stdout
    );
    saved_as_partial(dir.path(), "preflight", "SIGINT (Ctrl-C)");
}

/// Ctrl-C while a new test file is written exits 130 as Ctrl-C during a test does (it was 2),
/// and the partial file is removed.
#[test]
fn sigint_during_the_fill_of_a_new_file_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "--size",
        "512M",
        "--duration",
        "1s",
        "--no-save",
        "big.dat",
    ];
    let s = signalled(dir.path(), &args, "writing", Duration::ZERO, libc::SIGINT);
    assert_eq!(s.code, Some(130), "{}", s.stderr);
    assert!(
        s.stderr.contains("interrupted while creating big.dat"),
        "{}",
        s.stderr
    );
    assert!(
        !dir.path().join("big.dat").exists(),
        "the partial file is removed"
    );
}

//! End-to-end tests of the `iocap` binary, in one test binary (ripgrep's layout). Each module
//! covers what a user notices: output, refusals that protect data, SQLIO compatibility, and
//! (as root) real block devices.
//!
//! Linux's: they drive the binary with Linux paths, xattrs, FUSE and block devices. The
//! Windows binary's end-to-end tests are `tests/wine.rs`, run under Wine by `.ci/windows.sh`.
#![cfg(target_os = "linux")]

mod assess;
mod audit;
mod burst;
mod cachescan;
mod claims;
mod cost;
mod devices;
mod diskspd;
mod exports;
mod faults;
mod fsync;
mod hazards;
mod headroom;
mod install;
mod mariadb;
mod monitor;
#[cfg(feature = "mpi")]
mod mpi;
mod nonsense;
mod partial;
mod pg;
mod pgcost;
mod printing;
mod replay;
mod run;
mod safety;
mod secrets;
mod sqlio;
mod store;
mod sure;
mod traces;
mod usability;
mod verify;
mod verify_faults;

use assert_cmd::Command;
use std::path::Path;

/// A data directory for the whole test binary, outside every test's target directory: runs
/// save their results there (the default store), never in the user's home.
pub fn data_home() -> std::path::PathBuf {
    // under the build's own scratch directory, which `cargo clean` empties: not in /tmp, where
    // one directory per test run would pile up
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("iocap-it-data-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `iocap` with its working directory in `dir`, no inherited test hooks, and the default result
/// store in [`data_home`].
pub fn iocap(dir: &Path) -> Command {
    hooks_off(Command::cargo_bin("iocap").unwrap(), dir)
}

/// [`iocap`] run at the highest priority a process can ask for (`nice -n -20`; as root, or
/// at the usual priority with nice's warning elsewhere): for the tests that time a simulated
/// device, where a busy host's scheduling delays would add to every latency iocap measures.
pub fn iocap_first(dir: &Path) -> Command {
    let mut c = Command::new("nice");
    c.args(["-n", "-20"])
        .arg(assert_cmd::cargo::cargo_bin("iocap"));
    hooks_off(c, dir)
}

fn hooks_off(mut c: Command, dir: &Path) -> Command {
    c.current_dir(dir)
        .env_remove("IOCAP_TEST_NO_IO_URING")
        .env_remove("IOCAP_TEST_REFUSE_DIRECT")
        .env_remove("IOCAP_DB")
        .env("XDG_DATA_HOME", data_home());
    c
}

/// A test that cannot run here says why and returns; under CI (`CI` set), where .ci/run
/// installs everything the tests use, that is a failure instead (issue 26).
pub fn skip(why: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "cannot run under CI: {why} (.ci/run must provide it)"
    );
    eprintln!("skipping: {why}");
}

/// Runs `iocap ARGS` (one shell-quoted string, paths included) on a terminal made by
/// `script(1)`, with `COLUMNS=80`, and returns what the terminal showed; `None` (after saying
/// why) where util-linux's `script` is not installed.
pub fn on_a_terminal(args: &str) -> Option<String> {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        skip("`script` (util-linux) is not installed");
        return None;
    }
    let cmd = format!("{} {args}", assert_cmd::cargo::cargo_bin("iocap").display());
    let out = std::process::Command::new("script")
        .env("XDG_DATA_HOME", data_home())
        .env("COLUMNS", "80")
        .env_remove("IOCAP_DB")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `iocap args..` in `dir`, which must succeed, and returns its stdout as JSON.
pub fn json_of(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = iocap(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "iocap {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// Short-test flags: 0.3 s, no warmup, a 16 MiB file.
pub const QUICK: [&str; 6] = ["--duration", "0.3s", "--warmup", "0s", "--size", "16M"];

/// Runs `iocap run QUICK.. args.. --output json` in `dir` and returns the parsed JSON.
pub fn run_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    run_json_env(dir, &[], args)
}

/// [`run_json`] with extra environment variables (the test hooks).
pub fn run_json_env(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> serde_json::Value {
    let out = iocap(dir)
        .envs(env.iter().copied())
        .arg("run")
        .args(QUICK)
        .args(args)
        .args(["--output", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "iocap failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document")
}

//! `iocap verify` against storage that misbehaves on purpose: each fault class of
//! `iocap-faultfs` (a FUSE layer between iocap and a real file) is injected while verify runs,
//! and verify must find it and name it: an I/O error, a lost write (stale), a page that never
//! arrived, a misdirected write, a torn write. Then the crash check: `kill -9` during a journaled
//! run, `--check` after, fails when the layer dropped writes verify was told were durable.
//!
//! Faults are armed only once verify's workload has started (its first single-page write is in
//! the layer's log), so the initial fill is clean and the expected generations are known.

use std::path::Path;
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use iocap_faultfs::{Fault, FaultFs, Ops, Rule};

const FILE: &str = "iocap-verify.testfile";
const PAGE: u64 = 8192;
/// 4 MiB: 512 pages; the log region is the last 32.
const SIZE: &str = "4M";

struct Mounted {
    fs: FaultFs,
    _backing: tempfile::TempDir,
    _mnt: tempfile::TempDir,
    /// For journals and results: outside the mount.
    side: tempfile::TempDir,
}

fn mount() -> Mounted {
    let backing = tempfile::tempdir().unwrap();
    let mnt = tempfile::tempdir().unwrap();
    let fs = FaultFs::mount(backing.path(), mnt.path()).expect("mount iocap-faultfs");
    Mounted {
        fs,
        _backing: backing,
        _mnt: mnt,
        side: tempfile::tempdir().unwrap(),
    }
}

/// `iocap verify` on the mount, in the background.
fn start(m: &Mounted, extra: &[&str]) -> Child {
    StdCommand::new(assert_cmd::cargo::cargo_bin("iocap"))
        .current_dir(m.side.path())
        .env("XDG_DATA_HOME", crate::data_home())
        .env_remove("IOCAP_DB")
        .arg("verify")
        .arg(m.fs.mountpoint())
        .args(["--size", SIZE, "--no-save", "--output", "json"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until verify's workload has begun: a single-page write reached the layer.
fn wait_for_workload(m: &Mounted, child: &mut Child) {
    let t0 = Instant::now();
    loop {
        if m.fs
            .writes()
            .iter()
            .any(|w| w.file == FILE && w.len == PAGE)
        {
            return;
        }
        if let Ok(Some(st)) = child.try_wait() {
            panic!("verify ended ({st}) before its workload started");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "verify's workload did not start"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs verify for `secs`, arms `rule` once its workload runs, and returns (exit code, JSON).
fn verify_with(rule: Rule, secs: &str, extra: &[&str]) -> (Option<i32>, serde_json::Value, u64) {
    let m = mount();
    let mut child = start(&m, &[&["--duration", secs], extra].concat());
    wait_for_workload(&m, &mut child);
    let id = m.fs.add(rule.file(FILE));
    let out = child.wait_with_output().unwrap();
    let fired = m.fs.fired(id);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), v, fired)
}

fn class(v: &serde_json::Value, name: &str) -> u64 {
    v["verify"]["classes"][name].as_u64().unwrap_or_else(|| {
        panic!("no class {name} in {}", v["verify"]["classes"]);
    })
}

fn failures(v: &serde_json::Value, name: &str) -> Vec<serde_json::Value> {
    v["verify"]["failures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == name)
        .cloned()
        .collect()
}

/// The data pages (not the log region) of the first 2 MiB.
const DATA: std::ops::Range<u64> = 0..2 << 20;

#[test]
fn dropped_writes_are_found_as_stale_pages() {
    if !iocap_faultfs::fuse_or_skip("dropped_writes_are_found_as_stale_pages") {
        return;
    }
    let (code, v, fired) = verify_with(
        Rule::new(Fault::DropWrites).range(DATA).ops(Ops::Write),
        "1.5s",
        &[],
    );
    assert!(fired > 0, "no write was dropped");
    assert_eq!(code, Some(1), "{}", v["verify"]["classes"]);
    assert!(class(&v, "stale") > 0, "{}", v["verify"]["classes"]);
    let f = &failures(&v, "stale")[0];
    assert!(f["offset_bytes"].as_u64().unwrap() < DATA.end, "{f}");
    assert!(
        f["found_generation"].as_u64().unwrap() < f["expected_generation"].as_u64().unwrap(),
        "{f}"
    );
    // a lost write stays lost: re-reading does not make it appear
    assert_eq!(f["transient"], false, "{f}");
    assert_eq!(v["verify"]["passed"], false);
}

#[test]
fn stale_reads_are_named_stale() {
    if !iocap_faultfs::fuse_or_skip("stale_reads_are_named_stale") {
        return;
    }
    let (code, v, fired) = verify_with(
        Rule::new(Fault::StaleReads).range(DATA).ops(Ops::Read),
        "1.5s",
        &[],
    );
    assert!(fired > 0, "no stale block was served");
    assert_eq!(code, Some(1));
    assert!(class(&v, "stale") > 0, "{}", v["verify"]["classes"]);
    assert_eq!(class(&v, "corrupt"), 0, "{}", v["verify"]["classes"]);
}

#[test]
fn misdirected_writes_are_named_misdirected() {
    if !iocap_faultfs::fuse_or_skip("misdirected_writes_are_named_misdirected") {
        return;
    }
    let (code, v, fired) = verify_with(
        Rule::new(Fault::Misdirect {
            shift_bytes: 16 * PAGE as i64,
        })
        .range(DATA)
        .ops(Ops::Write),
        "1.5s",
        &[],
    );
    assert!(fired > 0);
    assert_eq!(code, Some(1));
    assert!(class(&v, "misdirected") > 0, "{}", v["verify"]["classes"]);
    let f = &failures(&v, "misdirected")[0];
    // the page found belongs 16 pages earlier: it was written 16 pages too far
    let (at, from) = (
        f["page"].as_u64().unwrap(),
        f["found_page"].as_u64().unwrap(),
    );
    assert_eq!(at, from + 16, "{f}");
}

#[test]
fn torn_writes_are_named_torn_with_the_sectors_that_differ() {
    if !iocap_faultfs::fuse_or_skip("torn_writes_are_named_torn") {
        return;
    }
    let (code, v, fired) = verify_with(
        Rule::new(Fault::tear_4k()).range(DATA).ops(Ops::Write),
        "1.5s",
        &[],
    );
    assert!(fired > 0);
    assert_eq!(code, Some(1));
    assert!(class(&v, "torn") > 0, "{}", v["verify"]["classes"]);
    let f = &failures(&v, "torn")[0];
    // only the second 4 KiB of the 8 KiB page is old
    assert_eq!(f["sectors_4k_differing"], serde_json::json!([1]), "{f}");
    let s512: Vec<u64> = f["sectors_512_differing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(s512, (8..16).collect::<Vec<u64>>(), "{f}");
}

#[test]
fn read_errors_are_named_io_errors_with_their_offset() {
    if !iocap_faultfs::fuse_or_skip("read_errors_are_named_io_errors") {
        return;
    }
    let bad = 64 * PAGE..65 * PAGE;
    let (code, v, fired) = verify_with(
        Rule::new(Fault::Eio).range(bad.clone()).ops(Ops::Read),
        "1s",
        &[],
    );
    assert!(fired > 0);
    assert_eq!(code, Some(1), "{v}");
    assert!(class(&v, "io_error") > 0, "{}", v["verify"]["classes"]);
    let f = &failures(&v, "io_error")[0];
    assert_eq!(f["errno"], 5, "{f}");
    let off = f["offset_bytes"].as_u64().unwrap();
    assert!(
        off <= bad.start && bad.start < off + f["len_bytes"].as_u64().unwrap(),
        "{f}"
    );
    // the fault stays: every re-read failed too
    assert_eq!(f["transient"], false, "{f}");
}

#[test]
fn pages_that_never_arrive_are_named_never_written() {
    if !iocap_faultfs::fuse_or_skip("pages_that_never_arrive") {
        return;
    }
    // every write to one range is dropped from the start: the fill never lands there
    let m = mount();
    let id = m.fs.add(
        Rule::new(Fault::DropWrites)
            .file(FILE)
            .range(PAGE * 10..PAGE * 12)
            .ops(Ops::Write),
    );
    let out = start(&m, &["--duration", "0.5s"])
        .wait_with_output()
        .unwrap();
    assert!(m.fs.fired(id) > 0);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(class(&v, "never_written") > 0, "{}", v["verify"]["classes"]);
    // the layer drops whole requests: a fill write that touched pages 10 and 11 took its
    // neighbours with it. Every page named never_written lies in a dropped request, and 10 and
    // 11 are among them.
    let dropped: Vec<std::ops::Range<u64>> =
        m.fs.writes()
            .iter()
            .filter(|w| w.file == FILE && w.outcome == iocap_faultfs::Outcome::Dropped)
            .map(|w| w.offset / PAGE..(w.offset + w.len).div_ceil(PAGE))
            .collect();
    let pages: Vec<u64> = failures(&v, "never_written")
        .iter()
        .map(|f| f["page"].as_u64().unwrap())
        .collect();
    for p in &pages {
        assert!(
            dropped.iter().any(|r| r.contains(p)),
            "page {p} was not dropped: {dropped:?}"
        );
    }
    assert!(pages.contains(&10) && pages.contains(&11), "{pages:?}");
}

/// Kills a journaled verify run on the mount once `armed` has been in force for a while, then
/// checks: `(exit code of --check, its JSON)`.
fn crash_and_check(rule: Option<Rule>) -> (Option<i32>, serde_json::Value) {
    let m = mount();
    let journal = m.side.path().join("journal");
    let j = journal.to_str().unwrap().to_string();
    let mut child = start(&m, &["--duration", "30s", "--journal", &j]);
    wait_for_workload(&m, &mut child);
    if let Some(r) = rule {
        m.fs.add(r.file(FILE));
    }
    // let acknowledged writes pile up in the journal, then pull the plug on the process
    let len0 = std::fs::metadata(&journal).map(|m| m.len()).unwrap_or(0);
    let t0 = Instant::now();
    while std::fs::metadata(&journal).map(|m| m.len()).unwrap_or(0) < len0 + 64 * 100 {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the journal did not grow"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    m.fs.clear();
    let out = StdCommand::new(assert_cmd::cargo::cargo_bin("iocap"))
        .current_dir(m.side.path())
        .env("XDG_DATA_HOME", crate::data_home())
        .args([
            "verify",
            "--check",
            "--journal",
            &j,
            "--no-save",
            "--output",
            "json",
        ])
        .arg(m.fs.mountpoint().join(FILE))
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), v)
}

#[test]
fn kill_9_then_check_passes_through_a_healthy_layer_and_fails_when_it_drops_writes() {
    if !iocap_faultfs::fuse_or_skip("kill_9_then_check") {
        return;
    }
    let (code, v) = crash_and_check(None);
    assert_eq!(code, Some(0), "healthy: {}", v["verify"]);
    assert_eq!(v["verify"]["passed"], true);
    let (code, v) = crash_and_check(Some(Rule::new(Fault::DropWrites).ops(Ops::Write)));
    assert_eq!(code, Some(1), "dropping: {}", v["verify"]);
    let lost = failures(&v, "stale");
    assert!(!lost.is_empty(), "{}", v["verify"]);
    assert!(Path::new(&v["verify"]["target"].as_str().unwrap().to_string()).ends_with(FILE));
}

#[test]
fn a_full_disk_is_an_io_error_on_write_and_stops_the_run() {
    if !iocap_faultfs::fuse_or_skip("a_full_disk_is_an_io_error_on_write") {
        return;
    }
    let (code, v, fired) = verify_with(
        Rule::new(Fault::Enospc).range(DATA).ops(Ops::Write),
        "5s",
        &[],
    );
    assert!(fired > 0);
    assert_eq!(code, Some(1), "{}", v["verify"]);
    let f = &failures(&v, "io_error")[0];
    assert_eq!(f["errno"], 28, "{f}");
    assert!(
        ["write", "log_append"].contains(&f["op"].as_str().unwrap()),
        "{f}"
    );
    assert!(
        f["message"].as_str().unwrap().contains("the run stopped"),
        "{f}"
    );
    // it stopped at the first failed write, well before the 5 s were up
    assert!(
        v["verify"]["elapsed_s"].as_f64().unwrap() < 4.0,
        "{}",
        v["verify"]
    );
}

//! `iocap verify` end to end: a clean run passes, damage made between a journaled run and
//! `--check` is found and named by class, a `kill -9` mid-run loses no acknowledged write on
//! healthy storage, and a file iocap did not create (or a symlink) is never written.

use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use iocap_verify::journal;
use iocap_verify::page::{self, FileIdent};
use predicates::prelude::*;

use crate::iocap;

const SMALL: [&str; 4] = ["--duration", "0.5s", "--size", "8M"];

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn a_clean_verify_passes_and_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path())
        .arg("verify")
        .args(SMALL)
        .args(["--output", "json", "--label", "verify-it"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = &json(&out)["verify"];
    assert_eq!(v["passed"], true);
    assert!(v["counts"]["pages_checked"].as_u64().unwrap() >= v["pages"].as_u64().unwrap());
    assert!(v["counts"]["log_appends"].as_u64().unwrap() > 0);
    assert_eq!(v["failures"].as_array().unwrap().len(), 0);
    assert!(dir.path().join("iocap-verify.testfile").exists());
    // the saved run shows and lists without trouble
    let id = json(&out)["run_id"].as_str().unwrap().to_string();
    iocap(dir.path())
        .args(["show", &id])
        .assert()
        .success()
        .stdout(predicate::str::contains("PASS"));
    iocap(dir.path())
        .args(["history", "--label", "verify-it"])
        .assert()
        .success()
        .stdout(predicate::str::contains("verify: PASS, "));
}

/// Writes `bytes` at page `p` of `file`.
fn put(file: &Path, p: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.write_all_at(bytes, p * 8192).unwrap();
    f.sync_all().unwrap();
}

fn get(file: &Path, p: u64) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(file).unwrap();
    let mut b = vec![0u8; 8192];
    f.read_exact_at(&mut b, p * 8192).unwrap();
    b
}

#[test]
fn damage_after_a_journaled_run_is_found_and_classified() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("iocap-verify.testfile");
    iocap(dir.path())
        .arg("verify")
        .args(SMALL)
        .args(["--journal", "j", "--no-save"])
        .assert()
        .code(0);
    let j = journal::read(&dir.path().join("j")).unwrap();
    let id = FileIdent {
        file_id: j.header.file_id,
        seed: j.header.seed,
        page_bytes: 8192,
    };
    let mut acked = vec![1u32; j.header.pages as usize];
    for r in &j.records {
        acked[r.page as usize] = acked[r.page as usize].max(r.generation);
    }
    let rewritten: Vec<u64> = (0..j.header.pages)
        .filter(|p| acked[*p as usize] >= 2)
        .collect();
    assert!(rewritten.len() >= 2, "the run rewrote pages");
    let enc = |p: u64, g: u64| {
        let mut b = vec![0u8; 8192];
        page::encode(&mut b, &id, p, g, 1);
        b
    };
    // a lost write: an acknowledged page back at generation 1
    let stale = rewritten[0];
    put(&file, stale, &enc(stale, 1));
    // torn inside a 4 KiB unit: 512 B of an older write in the acknowledged page
    let torn = rewritten[1];
    let g = u64::from(acked[torn as usize]);
    let mut t = enc(torn, g);
    t[1024..1536].copy_from_slice(&enc(torn, g - 1)[1024..1536]);
    put(&file, torn, &t);
    // zeros, a misdirected copy, a flipped bit: on pages the run did not rewrite
    let fresh: Vec<u64> = (0..j.header.pages)
        .filter(|p| acked[*p as usize] == 1)
        .take(4)
        .collect();
    put(&file, fresh[0], &[0u8; 8192]);
    put(&file, fresh[1], &get(&file, fresh[2]));
    let mut c = get(&file, fresh[3]);
    c[5000] ^= 0x10;
    put(&file, fresh[3], &c);

    let out = iocap(dir.path())
        .args([
            "verify",
            "--check",
            "--journal",
            "j",
            "--output",
            "json",
            "--no-save",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = &json(&out)["verify"];
    assert_eq!(v["passed"], false);
    let classes = &v["classes"];
    for k in ["stale", "torn", "never_written", "misdirected", "corrupt"] {
        assert_eq!(classes[k], 1, "{k}: {classes}");
    }
    let class_of = |p: u64| {
        v["failures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["page"] == p)
            .map(|f| f["class"].as_str().unwrap().to_string())
    };
    assert_eq!(class_of(stale).as_deref(), Some("stale"));
    assert_eq!(class_of(torn).as_deref(), Some("torn"));
    assert_eq!(class_of(fresh[1]).as_deref(), Some("misdirected"));
    let corrupt = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["class"] == "corrupt")
        .unwrap();
    assert_eq!(corrupt["sectors_512_differing"], serde_json::json!([9]));
    assert_eq!(corrupt["sectors_4k_differing"], serde_json::json!([1]));
    let dump = corrupt["dump"].as_str().unwrap();
    assert!(Path::new(dump).exists() && dump.contains(".dumps"));
    let lost = v["check"]["lost_pages"].as_array().unwrap();
    assert_eq!(lost.len(), 5);
    // the text view names the page and the class
    iocap(dir.path())
        .args(["verify", "--check", "--journal", "j", "--no-save"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("FAIL"))
        .stdout(predicate::str::contains(format!("page {stale} at")));
}

#[test]
fn kill_9_during_a_journaled_run_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("iocap");
    let mut child = StdCommand::new(bin)
        .current_dir(dir.path())
        .env("XDG_DATA_HOME", crate::data_home())
        .args([
            "verify",
            "--duration",
            "30s",
            "--size",
            "8M",
            "--journal",
            "j",
            "--no-save",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let j = dir.path().join("j");
    let start = Instant::now();
    while std::fs::metadata(&j).map_or(0, |m| m.len()) < 512 + 16 * 200 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the journal never grew"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    iocap(dir.path())
        .args(["verify", "--check", "--journal", "j", "--no-save"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("PASS"));
}

#[test]
fn ctrl_c_stops_a_run_with_130() {
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("iocap");
    let child = StdCommand::new(bin)
        .current_dir(dir.path())
        .env("XDG_DATA_HOME", crate::data_home())
        .args(["verify", "--duration", "30s", "--size", "8M", "--no-save"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    // SAFETY: sends SIGINT to the child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
}

#[test]
fn a_file_iocap_did_not_create_and_symlinks_are_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("database.mdf");
    let data: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(&p, &data).unwrap();
    iocap(dir.path())
        .arg("verify")
        .args(SMALL)
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did not create"));
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&p, &link).unwrap();
    iocap(dir.path())
        .arg("verify")
        .args(SMALL)
        .arg("--allow-overwrite")
        .arg(&link)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("symbolic link"));
    assert_eq!(std::fs::read(&p).unwrap(), data, "the file changed");
    // --check needs a journal
    iocap(dir.path())
        .args(["verify", "--check"])
        .assert()
        .code(2);
}

/// Inputs found in review: a FIFO target is refused instead of blocking in open(); a journal
/// named like the target is refused and leaves nothing behind (it used to be created first and
/// then claimed as the target; the command's claim now refuses it before either is made);
/// threads × qd is compared without overflowing.
#[test]
fn a_fifo_a_journal_on_the_target_and_huge_threads_are_refused_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(StdCommand::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    iocap(dir.path())
        .args(["verify", "--duration", "0.2s", "--no-save"])
        .arg(&fifo)
        .timeout(Duration::from_secs(20))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a regular file"));
    let t = dir.path().join("t.dat");
    iocap(dir.path())
        .args([
            "verify",
            "--duration",
            "0.2s",
            "--size",
            "1M",
            "--allow-overwrite",
        ])
        .args(["--no-save", "--journal"])
        .arg(&t)
        .arg(&t)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is the same file as --journal"));
    assert!(!t.exists(), "the target made for the run was removed");
    iocap(dir.path())
        .args(["verify", "--threads", "65536", "--qd", "65536", "--no-save"])
        .arg(dir.path().join("u.dat"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("at most 1024"));
    assert!(!dir.path().join("u.dat").exists());
}

#![cfg(target_os = "linux")]
//! The way iocap's tests use the crate: another process does the I/O on the mount, and a test
//! process that dies without unwinding must not leave its mount behind.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{is_mounted, mount};
use iocap_faultfs::{Fault, Ops, Outcome, Rule};

#[test]
fn child_process_io_sees_the_faults() {
    let Some(m) = mount("child_process_io_sees_the_faults") else {
        return;
    };
    drop(m.file("data", 4 * 8192, 0));
    let id = m.fs.add(
        Rule::new(Fault::Eio)
            .file("data")
            .range(16384..24576)
            .ops(Ops::Write),
    );
    let dd = |seek: u32| {
        Command::new("dd")
            .arg("if=/dev/zero")
            .arg(format!("of={}", m.fs.mountpoint().join("data").display()))
            .args(["bs=8192", "count=1", "oflag=direct", "conv=notrunc,fsync"])
            .arg(format!("seek={seek}"))
            .output()
            .expect("run dd")
    };
    let ok = dd(1);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let failed = dd(2);
    assert!(!failed.status.success());
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(stderr.contains("Input/output error"), "{stderr}");
    assert_eq!(m.fs.fired(id), 1);
    let outcomes: Vec<_> =
        m.fs.writes()
            .iter()
            .map(|w| (w.offset, w.outcome))
            .collect();
    assert!(outcomes.contains(&(8192, Outcome::Passed)));
    assert!(outcomes.contains(&(16384, Outcome::Failed(libc::EIO))));
}

const CHILD_ENV: &str = "IOCAP_FAULTFS_ABORT_AT";

/// Run as a child of `killed_test_process_leaves_no_mount`: mount, then die without unwinding.
#[test]
fn abort_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let fs = iocap_faultfs::FaultFs::mount(&dir.join("backing"), &dir.join("mnt")).unwrap();
    std::fs::write(fs.mountpoint().join("f"), b"x").unwrap();
    println!("mounted");
    std::process::abort();
}

#[test]
fn killed_test_process_leaves_no_mount() {
    if !iocap_faultfs::fuse_or_skip("killed_test_process_leaves_no_mount") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("backing")).unwrap();
    std::fs::create_dir(dir.path().join("mnt")).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "abort_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("mounted"));
    // fusermount3 (auto_unmount) notices the dead process and unmounts shortly after
    let mnt = dir.path().join("mnt").canonicalize().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_mounted(&mnt) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!is_mounted(&mnt), "the dead process's mount is still there");
    assert!(dir.path().join("backing/f").exists());
}

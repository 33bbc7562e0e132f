//! iocap never destroys data it did not create: foreign files are read-only unless the user says
//! otherwise, symlinks are not followed for writes, and a user's file is never extended.

use predicates::prelude::*;

use crate::{iocap, run_json, QUICK};

fn foreign_file(dir: &std::path::Path) -> (std::path::PathBuf, Vec<u8>) {
    let p = dir.join("database.mdf");
    let data: Vec<u8> = (0..(4u32 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(&p, &data).unwrap();
    (p, data)
}

#[test]
fn writes_to_a_file_iocap_did_not_create_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (p, data) = foreign_file(dir.path());
    for rw in ["write", "randwrite", "randrw", "rw"] {
        iocap(dir.path())
            .args(["run", "--rw", rw, "--duration", "0.2s", "--warmup", "0s"])
            .arg(&p)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("did not create"))
            .stderr(predicate::str::contains("--allow-overwrite"));
    }
    assert_eq!(std::fs::read(&p).unwrap(), data, "the file changed");
}

#[test]
fn reads_of_a_foreign_file_are_allowed_and_leave_it_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let (p, data) = foreign_file(dir.path());
    let v = run_json(dir.path(), &["--size", "64M", p.to_str().unwrap()]);
    let t = &v["tests"][0];
    assert!(t["total"]["ios"].as_u64().unwrap() > 0);
    // never extended: the test range is the file's own size, with a warning
    assert_eq!(t["targets"][0]["size_bytes"], 4 << 20);
    assert!(t["warnings"].to_string().contains("never extends"));
    assert_eq!(t["targets"][0]["created"], false);
    assert_eq!(std::fs::read(&p).unwrap(), data);
}

#[test]
fn allow_overwrite_permits_writes_inside_the_file_only() {
    let dir = tempfile::tempdir().unwrap();
    let (p, data) = foreign_file(dir.path());
    let v = run_json(
        dir.path(),
        &[
            "--rw",
            "randwrite",
            "--allow-overwrite",
            "--size",
            "64M",
            p.to_str().unwrap(),
        ],
    );
    assert!(v["tests"][0]["write"]["ios"].as_u64().unwrap() > 0);
    let after = std::fs::read(&p).unwrap();
    assert_eq!(after.len(), data.len(), "the file was extended");
    assert_ne!(after, data);
}

#[test]
fn symlinks_are_not_followed_for_writes() {
    let dir = tempfile::tempdir().unwrap();
    // an iocap test file, reached through a symlink
    iocap(dir.path()).arg("run").args(QUICK).assert().success();
    let real = dir.path().join("iocap.testfile");
    let before = std::fs::read(&real).unwrap();
    let link = dir.path().join("link.dat");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    iocap(dir.path())
        .args([
            "run",
            "--rw",
            "randwrite",
            "--duration",
            "0.2s",
            "--warmup",
            "0s",
        ])
        .arg(&link)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("symbolic link"));
    assert_eq!(std::fs::read(&real).unwrap(), before);
    // reading through it is fine
    iocap(dir.path())
        .args(["run", "--duration", "0.2s", "--warmup", "0s"])
        .arg(&link)
        .assert()
        .success();
}

#[test]
fn a_directory_target_gets_a_test_file_inside() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("data");
    std::fs::create_dir(&sub).unwrap();
    let v = run_json(dir.path(), &["--rw", "randwrite", sub.to_str().unwrap()]);
    assert!(v["tests"][0]["targets"][0]["created"].as_bool().unwrap());
    assert!(sub.join("iocap.testfile").exists());
}

#[test]
fn a_larger_size_grows_only_iocap_files() {
    let dir = tempfile::tempdir().unwrap();
    run_json(dir.path(), &[]);
    let f = dir.path().join("iocap.testfile");
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 16 << 20);
    let v = run_json(dir.path(), &["--size", "24M"]);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 24 << 20);
    assert_eq!(v["tests"][0]["targets"][0]["size_bytes"], 24 << 20);
    let data = std::fs::read(&f).unwrap();
    assert!(data[16 << 20..]
        .chunks(4096)
        .all(|b| b.iter().any(|x| *x != 0)));
}

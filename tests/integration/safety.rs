//! iocap never destroys data it did not create: foreign files are read-only unless the user says
//! otherwise, symlinks are not followed for writes, and a user's file is never extended. Every
//! command that writes refuses a file iocap did not create and leaves it byte-identical with its
//! mtime unchanged, and a symlink (to a foreign file, or swapped in for iocap's own test file) is
//! never written through, not even with `--allow-overwrite`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

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

/// A user's file: 4 MiB of a pattern, with an mtime an hour ago (so a write cannot hide in the
/// same timestamp tick).
fn foreign(path: &Path) -> Snapshot {
    let data: Vec<u8> = (0..(4u32 << 20))
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    std::fs::write(path, &data).unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    drop(f);
    Snapshot::of(path)
}

/// What a user would compare: every byte, the length and the mtime.
#[derive(PartialEq, Eq)]
struct Snapshot {
    data: Vec<u8>,
    mtime: SystemTime,
}

impl Snapshot {
    fn of(path: &Path) -> Snapshot {
        Snapshot {
            data: std::fs::read(path).unwrap(),
            mtime: std::fs::metadata(path).unwrap().modified().unwrap(),
        }
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes, mtime {:?}", self.data.len(), self.mtime)
    }
}

fn assert_refused(dir: &Path, args: &[&str], what: &str) {
    let out = iocap(dir).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
    assert!(
        stderr.contains("did not create") && stderr.contains("--allow-overwrite"),
        "{what}: the refusal must say why and how to override: {stderr}"
    );
}

#[test]
fn every_writing_command_refuses_a_foreign_file_and_leaves_it_identical() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("database.mdf");
    let before = foreign(&file);
    let f = file.to_str().unwrap();
    let short = ["--duration", "0.2s", "--warmup", "0s"];
    for rw in ["write", "randwrite", "rw", "randrw"] {
        assert_refused(
            dir.path(),
            &[&["run", "--rw", rw][..], &short, &[f]].concat(),
            &format!("run --rw {rw}"),
        );
    }
    assert_refused(
        dir.path(),
        &["sqlio", "-kW", "-s1", "-frandom", "-b8", "-o2", f],
        "sqlio -kW random",
    );
    assert_refused(
        dir.path(),
        &["sqlio", "-kW", "-s1", "-fsequential", "-b64", "-o1", f],
        "sqlio -kW sequential",
    );
    assert_refused(
        dir.path(),
        &[
            "saturate",
            "--rw",
            "randwrite",
            "--step-duration",
            "0.2s",
            "--warmup",
            "0s",
            "--max-qd",
            "2",
            f,
        ],
        "saturate --rw randwrite",
    );
    let file2 = dir.path().join("log.ldf");
    let before2 = foreign(&file2);
    assert_refused(
        dir.path(),
        &[
            &["scaleup", "--rw", "randwrite"][..],
            &short,
            &[f, file2.to_str().unwrap()],
        ]
        .concat(),
        "scaleup --rw randwrite",
    );
    assert_eq!(Snapshot::of(&file), before, "the file changed");
    assert_eq!(Snapshot::of(&file2), before2, "the second file changed");
}

/// `suite run` and `preflight` test role directories; a file there named like iocap's own test
/// files, but not created by iocap, is a user's file.
#[test]
fn suites_and_preflight_refuse_a_foreign_file_named_like_a_test_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let names = [
        "iocap.testfile",
        "iocap-log.testfile",
        "iocap-tempdb.testfile",
        "iocap-temp.testfile",
        "iocap-backup.testfile",
    ];
    let before: Vec<(PathBuf, Snapshot)> = names
        .iter()
        .map(|n| (data.join(n), foreign(&data.join(n))))
        .collect();
    assert_refused(
        dir.path(),
        &[
            "suite",
            "run",
            SUITE_THAT_WRITES,
            "--data",
            "data",
            "--size",
            "4M",
            "--duration",
            "0.2s",
            "--pause",
            "0s",
            "--no-save",
        ],
        "suite run",
    );
    assert_refused(
        dir.path(),
        &[
            "preflight",
            "--quick",
            "--timing",
            "0.2s:0.2s",
            "--size",
            "4M",
            "--data",
            "data",
            "--no-save",
        ],
        "preflight",
    );
    for (p, b) in &before {
        assert_eq!(&Snapshot::of(p), b, "{} changed", p.display());
    }
}

/// A built-in suite with write tests (`iocap suite show quick`: a random read first, which a
/// foreign file allows, then random and log writes, which stop the suite with exit 2).
const SUITE_THAT_WRITES: &str = "quick";

#[test]
fn a_symlink_to_a_foreign_file_is_not_written_even_with_allow_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("database.mdf");
    let before = foreign(&file);
    let link = dir.path().join("link.dat");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    for extra in [&[][..], &["--allow-overwrite"]] {
        let out = iocap(dir.path())
            .args([
                "run",
                "--rw",
                "randwrite",
                "--duration",
                "0.2s",
                "--warmup",
                "0s",
            ])
            .args(extra)
            .arg(&link)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains("symbolic link"), "{extra:?}: {stderr}");
    }
    assert_eq!(Snapshot::of(&file), before);
}

#[test]
fn a_symlink_swapped_in_for_the_test_file_is_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    // iocap's own test file, then a user's file put in its place as a symlink
    iocap(dir.path())
        .arg("run")
        .args(QUICK)
        .arg("--no-save")
        .assert()
        .success();
    let testfile = dir.path().join("iocap.testfile");
    let victim = dir.path().join("database.mdf");
    let before = foreign(&victim);
    std::fs::remove_file(&testfile).unwrap();
    std::os::unix::fs::symlink(&victim, &testfile).unwrap();
    // by the default target, by the directory and by the path; with and without permission
    for target in [None, Some(dir.path()), Some(testfile.as_path())] {
        for extra in [&[][..], &["--allow-overwrite"]] {
            let out = iocap(dir.path())
                .args([
                    "run",
                    "--rw",
                    "write",
                    "--duration",
                    "0.2s",
                    "--warmup",
                    "0s",
                ])
                .args(extra)
                .args(target)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{target:?} {extra:?}: {stderr}");
            assert!(
                stderr.contains("symbolic link"),
                "{target:?} {extra:?}: {stderr}"
            );
        }
    }
    assert_eq!(
        Snapshot::of(&victim),
        before,
        "the file behind the symlink changed"
    );
}

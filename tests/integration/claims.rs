//! A command never writes over what it reads (issue 35, §1, defects 2 to 5): an output that is
//! one of the command's inputs, by its own name, `./NAME`, a symbolic or a hard link, is
//! refused naming both (exit 2), `--force` or not, and the input stays byte for byte as it was;
//! so are two outputs that are one file, and a target that is the store, a report or a journal.
//! The check is the claim's (`iocap_platform::claim::Claim`).

use std::path::Path;

use crate::iocap;

/// A fio iolog (version 3) of `n` 4 KiB writes, at `dir/name`; its bytes.
fn iolog(dir: &Path, name: &str, n: u64) -> Vec<u8> {
    let mut log = String::from("fio version 3 iolog\n0 /dev/sdx add\n");
    for i in 0..n {
        log.push_str(&format!(
            "{} /dev/sdx write {} 4096\n",
            i + 1,
            i * 4096 % (1 << 20)
        ));
    }
    std::fs::write(dir.join(name), &log).unwrap();
    log.into_bytes()
}

/// Runs `iocap ARGS` in `dir`; asserts exit 2 and returns stderr.
fn refused(dir: &Path, args: &[&str]) -> String {
    let out = iocap(dir).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    err
}

/// Error text as one line of words, however it was wrapped (on a terminal it is).
fn unwrapped(err: &str) -> String {
    err.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Defect 2: `characterise in.iotrace --as-profile in.iotrace --force` wrote the profile over
/// the trace, and `capture -o s.iotrace --as-profile s.iotrace --force` over the trace it had
/// just recorded.
#[test]
fn a_profile_is_never_written_over_its_trace() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let before = iolog(d, "in.log", 300);
    std::fs::hard_link(d.join("in.log"), d.join("hard.log")).unwrap();
    std::os::unix::fs::symlink("in.log", d.join("link.log")).unwrap();
    for (out, how) in [
        ("in.log", "(in.log);"),
        ("./in.log", "(in.log, the same file by another name)"),
        ("hard.log", "(in.log, the same file by another name)"),
        ("link.log", "(in.log, the same file by another name)"),
    ] {
        let args = ["characterise", "in.log", "--as-profile", out, "--force"];
        let err = unwrapped(&refused(d, &[&args[..], &["--no-save"]].concat()));
        assert!(
            err.contains(&format!("--as-profile {out} is the trace being read {how}")),
            "{out}: {err}"
        );
        assert!(err.contains("not even with --force"), "{err}");
        assert_eq!(std::fs::read(d.join("in.log")).unwrap(), before, "{out}");
    }
    assert!(std::fs::symlink_metadata(d.join("link.log"))
        .unwrap()
        .is_symlink());
    // capture: refused before anything is recorded, whether the name is taken or not
    let theirs = b"an earlier trace".to_vec();
    std::fs::write(d.join("old.iotrace"), &theirs).unwrap();
    for name in ["old.iotrace", "new.iotrace"] {
        let args = ["capture", ".", "--duration", "1s", "--force", "--no-save"];
        let both = ["-o", name, "--as-profile", name];
        let err = unwrapped(&refused(d, &[&args[..], &both].concat()));
        assert!(
            err.contains(&format!(
                "--as-profile {name} is the same file as -o {name}; each output of a command \
                 is a file of its own"
            )),
            "{err}"
        );
    }
    assert_eq!(std::fs::read(d.join("old.iotrace")).unwrap(), theirs);
    assert!(!d.join("new.iotrace").exists());
}

/// blktrace's file for one CPU (version 7, little-endian): `n` 4 KiB reads of device 8:0 from
/// `sector` on, each issued and completed, at `dir/name`; its bytes.
fn blktrace_cpu(dir: &Path, name: &str, sector: u64, n: u64) -> Vec<u8> {
    const ISSUE: u32 = 7 | (1 << 6 | 1 << 8 | 1) << 16;
    const COMPLETE: u32 = 8 | (1 << 7 | 1 << 8 | 1) << 16;
    let mut b = Vec::new();
    let mut seq = 0u32;
    for i in 0..n {
        for (t, action) in [(i * 1_000_000, ISSUE), (i * 1_000_000 + 100_000, COMPLETE)] {
            seq += 1;
            b.extend_from_slice(&0x6561_7407u32.to_le_bytes());
            b.extend_from_slice(&seq.to_le_bytes());
            b.extend_from_slice(&t.to_le_bytes());
            b.extend_from_slice(&(sector + i * 8).to_le_bytes());
            b.extend_from_slice(&4096u32.to_le_bytes());
            b.extend_from_slice(&action.to_le_bytes());
            b.extend_from_slice(&1u32.to_le_bytes()); // pid
            b.extend_from_slice(&(8u32 << 20).to_le_bytes()); // 8:0
            b.extend_from_slice(&0u32.to_le_bytes()); // cpu
            b.extend_from_slice(&[0; 4]); // error, pdu_len
        }
    }
    std::fs::write(dir.join(name), &b).unwrap();
    b
}

/// Defect 3: `convert sd --to csv -o sd.blktrace.1 --force`, sd.blktrace.0 and .1 being the
/// files the base name stands for, wrote over .1 and reported half the requests.
#[test]
fn convert_never_writes_over_a_file_a_base_name_stands_for() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cpu0 = blktrace_cpu(d, "sd.blktrace.0", 0, 50);
    let cpu1 = blktrace_cpu(d, "sd.blktrace.1", 1 << 20, 50);
    for (inputs, out) in [
        (&["sd"][..], "sd.blktrace.1"),
        (&["sd"], "./sd.blktrace.0"),
        (&["sd.blktrace.0"], "sd.blktrace.1"),
    ] {
        let args = [
            &["convert"][..],
            inputs,
            &["--to", "csv", "--force", "-o", out],
        ]
        .concat();
        let err = unwrapped(&refused(d, &args));
        assert!(
            err.contains(&format!("-o {out} is the trace being read")),
            "{args:?}: {err}"
        );
        assert_eq!(std::fs::read(d.join("sd.blktrace.0")).unwrap(), cpu0);
        assert_eq!(std::fs::read(d.join("sd.blktrace.1")).unwrap(), cpu1);
    }
    // to a file of its own, every request of both files
    let out = iocap(d)
        .args(["convert", "sd", "--to", "csv", "-o", "sd.csv"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(unwrapped(&err).contains("100 requests"), "{err}");
}

/// Defect 4: `replay x.iotrace x.iotrace --map wrap --allow-overwrite` replayed the trace's
/// writes over the trace itself.
#[test]
fn replay_never_writes_over_its_own_trace() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let before = iolog(d, "x.log", 300);
    std::fs::hard_link(d.join("x.log"), d.join("hard.log")).unwrap();
    std::os::unix::fs::symlink("x.log", d.join("link.log")).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    let testfile = d.join("sub").join(iocap_model::DEFAULT_TARGET);
    std::fs::hard_link(d.join("x.log"), &testfile).unwrap();
    for (trace, target) in [
        ("x.log", "x.log"),
        ("x.log", "./x.log"),
        ("x.log", "hard.log"),
        ("x.log", "link.log"),
        ("link.log", "x.log"),
        ("x.log", "sub"),
    ] {
        let args = [
            "replay",
            trace,
            target,
            "--map",
            "wrap",
            "--allow-overwrite",
        ];
        let err = unwrapped(&refused(d, &[&args[..], &["--no-save"]].concat()));
        assert!(
            err.contains("is the trace being read") && err.contains("TARGET"),
            "{target}: {err}"
        );
        assert_eq!(std::fs::read(d.join("x.log")).unwrap(), before, "{target}");
    }
    assert!(std::fs::symlink_metadata(d.join("link.log"))
        .unwrap()
        .is_symlink());
}

/// Defect 5: `--db LINK`, LINK pointing where nothing is, created the store where it pointed,
/// where every `-o` and `--html` refuses such a link.
#[test]
fn a_db_that_is_a_dangling_link_is_refused_and_nothing_is_made_where_it_points() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("elsewhere/r.db", d.join("dangling.db")).unwrap();
    iolog(d, "in.log", 10);
    let run = [
        &["run"][..],
        &crate::QUICK,
        &["--db", "dangling.db", "t.dat"],
    ]
    .concat();
    for (args, env) in [
        (&run[..], None),
        (&["characterise", "in.log", "--db", "dangling.db"][..], None),
        (&["characterise", "in.log"][..], Some("dangling.db")),
    ] {
        let mut cmd = iocap(d);
        if let Some(db) = env {
            cmd.env("IOCAP_DB", db);
        }
        let out = cmd.args(args).output().unwrap();
        let err = unwrapped(&String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("dangling.db is a symbolic link (to elsewhere/r.db, where nothing is)"),
            "{args:?}: {err}"
        );
        let made: Vec<_> = std::fs::read_dir(d.join("elsewhere")).unwrap().collect();
        assert!(made.is_empty(), "{args:?}: {made:?}");
        assert!(!d.join("t.dat").exists(), "refused before the test");
    }
    // a link to an existing store is followed, as before
    let args = ["characterise", "in.log", "--db", "elsewhere/r.db"];
    assert!(iocap(d).args(args).output().unwrap().status.success());
    let out = iocap(d)
        .args(["history", "--db", "dangling.db"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Found beside the eight: `export --db r.db -o r.db --force` wrote the CSV over the result
/// store it read, and `report -o` could do the same.
#[test]
fn an_export_or_a_report_is_never_written_over_the_store_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    iolog(d, "in.log", 10);
    let saved = iocap(d)
        .args(["characterise", "in.log", "--db", "r.db"])
        .output()
        .unwrap();
    assert!(saved.status.success(), "{saved:?}");
    let before = std::fs::read(d.join("r.db")).unwrap();
    std::os::unix::fs::symlink("r.db", d.join("link.db")).unwrap();
    for args in [
        &["export", "--all", "--db", "r.db", "-o", "r.db", "--force"][..],
        &[
            "export", "--all", "--db", "r.db", "-o", "link.db", "--force",
        ],
        &["report", "last", "--db", "r.db", "-o", "./r.db", "--force"],
    ] {
        let err = unwrapped(&refused(d, args));
        assert!(
            err.contains("is the result store being read"),
            "{args:?}: {err}"
        );
        assert_eq!(std::fs::read(d.join("r.db")).unwrap(), before, "{args:?}");
    }
    // another file is written as before
    let out = iocap(d)
        .args(["export", "--all", "--db", "r.db", "-o", "runs.csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(std::fs::read_to_string(d.join("runs.csv"))
        .unwrap()
        .contains("characterise"));
}

/// A target that is the result store, the HTML report or verify's journal, by any name, is
/// refused before anything is written, naming both roles: `run X --db X` tested the store (and
/// then saved into the file it had filled), `run X --html X` wrote the report over the test
/// file.
#[test]
fn a_target_is_never_the_store_the_report_or_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let theirs = b"the user's file".to_vec();
    std::fs::write(d.join("mine.dat"), &theirs).unwrap();
    std::fs::create_dir(d.join("fs")).unwrap();
    let run = [&["run"][..], &crate::QUICK].concat();
    let verify = ["verify", "--duration", "0.2s", "--size", "1M"];
    for (command, target, other) in [
        (&run[..], "t.dat", &["--db", "t.dat"][..]),
        (&run, "t.dat", &["--db", "./t.dat", "--html", "r.html"]),
        (&run, "mine.dat", &["--db", "mine.dat", "--allow-overwrite"]),
        (&run, "t.dat", &["--html", "t.dat", "--no-save"]),
        (&run, ".", &["--db", "iocap.testfile"]),
        (&verify, "v.dat", &["--db", "v.dat"]),
        (&verify, "v.dat", &["--no-save", "--html", "./v.dat"]),
        (
            &["fsync", "--quick"],
            "fs",
            &["--db", "fs/iocap-fsync.testfile"],
        ),
        (
            &["replay", "in.log", "--map", "wrap"],
            "t.dat",
            &["--db", "t.dat"],
        ),
    ] {
        iolog(d, "in.log", 10);
        let args = [command, &[target], other].concat();
        let err = unwrapped(&refused(d, &args));
        let role = if other[0] == "--db" {
            "the result store"
        } else {
            "--html"
        };
        assert!(
            err.contains("TARGET") && err.contains(&format!("is the same file as {role}")),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("never tests a file it writes"),
            "{args:?}: {err}"
        );
        let made_here = ["t.dat", "v.dat", "r.html", "iocap.testfile"];
        for made in made_here.iter().chain(&["fs/iocap-fsync.testfile"]) {
            assert!(!d.join(made).exists(), "{args:?}: {made} was made");
        }
        assert_eq!(std::fs::read(d.join("mine.dat")).unwrap(), theirs);
    }
    // verify's journal is never its file either
    let args = [&verify[..], &["--no-save", "--journal", "v.dat", "v.dat"]].concat();
    let err = unwrapped(&refused(d, &args));
    assert!(
        err.contains("TARGET v.dat is the same file as --journal v.dat"),
        "{err}"
    );
    assert!(!d.join("v.dat").exists());
    // the store named by IOCAP_DB is claimed as --db is
    let out = iocap(d)
        .env("IOCAP_DB", "t.dat")
        .args([&run[..], &["t.dat"]].concat())
        .output()
        .unwrap();
    let err = unwrapped(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is the same file as the result store"),
        "{err}"
    );
    assert!(!d.join("t.dat").exists());
}

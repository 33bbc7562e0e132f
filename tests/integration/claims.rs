//! A command never writes over what it reads (issue 35, §1, defects 2 to 5): an output that is
//! one of the command's inputs, by its own name, `./NAME`, a symbolic or a hard link, is
//! refused naming both (exit 2), `--force` or not, and the input stays byte for byte as it was;
//! so are two outputs that are one file. The check is `iocap_console::claim::Claim`'s.

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

/// Error text as one line: a refusal wraps to the terminal's width.
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
        assert!(err.contains("--force or not"), "{err}");
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

//! Silent nonsense and misleading messages (issue 23): a "random" test over one offset, a CPU
//! mask naming CPUs the host lacks, a date that does not exist, a negative number, a suite with
//! a bad key, a bad size in a block-size mix, a batch file's `%VAR%`, and the docs' flags. Each
//! is refused with exit 2 and a message that names the problem, before anything is created.

use std::path::Path;

use crate::iocap;

/// Runs `iocap ARGS` in `dir`, which must fail with exit 2; its stderr.
fn refused(dir: &Path, args: &[&str]) -> String {
    let out = iocap(dir).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "iocap {args:?}: {err}");
    err
}

#[test]
fn a_random_test_over_one_offset_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = refused(
        dir.path(),
        &[
            "run",
            "--size",
            "8K",
            "--threads",
            "4",
            "--no-save",
            "t.dat",
        ],
    );
    assert!(
        err.contains("t.dat: a random test needs at least 2 offsets"),
        "{err}"
    );
    assert!(!dir.path().join("t.dat").exists(), "nothing is created");
    // an existing 64 MiB file, aligned to 128 MiB: known only once the file is looked at
    let user = dir.path().join("user.dat");
    std::fs::File::create(&user)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let err = refused(
        dir.path(),
        &[
            "run",
            "--align",
            "128M",
            "--duration",
            "1s",
            "--no-save",
            "user.dat",
        ],
    );
    assert!(
        err.contains("aligned to 128M fit its 64M range at 1 only"),
        "{err}"
    );
}

/// A CPU this host does not have, for a mask: CPU 63, unless the host has that many.
fn missing_cpu() -> Option<u32> {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let highest = online
        .trim()
        .rsplit([',', '-'])
        .next()
        .and_then(|c| c.parse::<u32>().ok())?;
    (highest < 63).then_some(63)
}

#[test]
fn a_cpu_mask_naming_cpus_the_host_lacks_is_refused_before_any_file_is_made() {
    let Some(cpu) = missing_cpu() else {
        eprintln!("skipping: this host has 64 CPUs or more");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mask = format!("{:#x}", 1u64 << cpu);
    std::fs::write(dir.path().join("p.txt"), format!("t.dat 1 {mask} 1\n")).unwrap();
    let err = refused(dir.path(), &["sqlio", "-kR", "-s1", "-Fp.txt", "--no-save"]);
    assert!(
        err.contains(&format!(
            "CPU mask {mask} names CPU {cpu}, which iocap cannot run on"
        )),
        "{err}"
    );
    assert!(err.contains("this host has"), "{err}");
    let a = format!("-a{cpu}");
    let err = refused(
        dir.path(),
        &["diskspd", &a, "-c1M", "-d1", "-r", "--no-save", "d.dat"],
    );
    assert!(err.contains(&format!("names CPU {cpu},")), "{err}");
    assert!(!dir.path().join("t.dat").exists() && !dir.path().join("d.dat").exists());
}

#[test]
fn a_date_that_does_not_exist_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = refused(
        dir.path(),
        &["history", "--db", "r.db", "--since", "2026-13-45"],
    );
    assert!(
        err.contains("--since '2026-13-45' is not a date: there is no month 13"),
        "{err}"
    );
}

#[test]
fn a_negative_number_is_called_one_without_clap_s_tip() {
    let dir = tempfile::tempdir().unwrap();
    let err = refused(dir.path(), &["run", "--qd", "-1", "t.dat"]);
    assert_eq!(
        err.trim_end(),
        "iocap: error: --qd -1: the value must be positive; iocap takes no negative numbers"
    );
}

#[test]
fn a_suite_with_a_bad_key_names_the_key_and_line_not_a_non_suite() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        "name = \"mine\"\n[[test]]\nname = \"t\"\nbogus = 1\n",
    )
    .unwrap();
    let err = refused(dir.path(), &["suite", "show", "s.toml"]);
    assert!(
        err.contains("in suite file s.toml: key or value not accepted at line 4")
            && err.contains("unknown field `bogus`"),
        "{err}"
    );
    assert!(!err.contains("not a suite file"), "{err}");
}

#[test]
fn a_bad_size_in_a_mix_is_named_as_a_size() {
    let dir = tempfile::tempdir().unwrap();
    let err = refused(dir.path(), &["run", "--bs-split", "8K:50,1000:50", "t.dat"]);
    assert!(
        err.contains("block size 1000 B in the mix is not a multiple of 512 B"),
        "{err}"
    );
}

#[test]
fn a_batch_file_s_variables_come_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("b.bat"),
        "@echo off\r\ncall sqlio -kR -s%SECS% -b8 %DATA%/t.dat\r\n",
    )
    .unwrap();
    let out = iocap(dir.path())
        .env("SECS", "7")
        .env("DATA", "vol")
        .args(["sqlio-batch", "b.bat", "--dry-run"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("line 2: sqlio -kR -s7 -b8 vol/t.dat"), "{err}");
    let out = iocap(dir.path())
        .env_remove("SECS")
        .env("DATA", "vol")
        .args(["sqlio-batch", "b.bat", "--dry-run"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("line 2: %SECS% is not set in the environment"),
        "{err}"
    );
}

#[test]
fn every_flag_the_docs_tables_list_is_one_the_command_takes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (doc, command) in [("run.md", "run"), ("fsync.md", "fsync")] {
        let text = std::fs::read_to_string(root.join("docs").join(doc)).unwrap();
        let out = iocap(root).args([command, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        let takes = |flag: &str| {
            help.split(|c: char| c.is_whitespace() || c == ',')
                .any(|w| w == flag)
        };
        for line in text.lines().filter(|l| l.starts_with("| `--")) {
            let flag: String = line[3..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            assert!(
                takes(&flag),
                "docs/{doc} lists {flag}, which `iocap {command}` does not take"
            );
        }
    }
}

//! `iocap diskspd`: a DiskSpd command line run unchanged, in DiskSpd's text and XML layouts,
//! saved like any run; the lines iocap refused until issue 27 (`-B`, `-rs`, `-p`, `-i`/`-j`,
//! `-O` over several targets, strides other than the block, `-vs`) run; an unsupported flag, a
//! missing target without `-c` or a Windows device target on Linux is refused.

use crate::iocap;

#[test]
fn a_diskspd_command_line_runs_and_prints_diskspd_s_tables() {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path())
        .args([
            "diskspd", "-b8K", "-d1", "-o4", "-t2", "-r", "-w30", "-h", "-L", "-c16M",
        ])
        .args(["-W0", "t.dat"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for part in [
        "Command Line: diskspd -b8K",
        "Total IO",
        "Read IO",
        "Write IO",
        "total:",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    assert!(
        text.contains("%-ile |  Read (ms) | Write (ms) | Total (ms)"),
        "{text}"
    );
    // saved, with the command line kept
    let v = crate::json_of(dir.path(), &["history", "--output", "json"]);
    let runs = v
        .as_array()
        .or_else(|| v["runs"].as_array())
        .unwrap()
        .clone();
    let id = runs[0]["run_id"].as_str().unwrap().to_string();
    let saved = crate::json_of(dir.path(), &["show", &id, "--output", "json"]);
    assert!(
        saved["note"].as_str().unwrap().starts_with("diskspd -b8K"),
        "{saved}"
    );
    assert!(saved["tests"][0]["write"]["ios"].as_u64().unwrap() > 0);
}

#[test]
fn rxml_gives_diskspd_s_xml_and_output_json_gives_iocap_s() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "diskspd",
        "-b4K",
        "-d1",
        "-W0",
        "-o2",
        "-r",
        "-c16M",
        "-Rxml",
        "--no-save",
    ];
    let out = iocap(dir.path()).args(args).arg("x.dat").output().unwrap();
    assert!(out.status.success());
    let xml = String::from_utf8_lossy(&out.stdout);
    for el in [
        "<Results>",
        "<TimeSpan>",
        "<TestTimeSeconds>",
        "<Thread>",
        "<Target>",
        "<IOCount>",
    ] {
        assert!(xml.contains(el), "{el}: {xml}");
    }
    let out = iocap(dir.path())
        .args(args)
        .args(["--output", "json", "x.dat"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["tests"][0]["total"]["iops"].as_f64().unwrap() > 0.0);
}

#[test]
fn an_unsupported_flag_or_a_missing_file_without_c_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path())
        .args(["diskspd", "-b8K", "-Sm", "-c16M", "--no-save", "t.dat"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-Sm"));
    let out = iocap(dir.path())
        .args(["diskspd", "-b8K", "-d1", "--no-save", "missing.dat"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("missing.dat does not exist") && err.contains("-c"),
        "{err}"
    );
    assert!(!dir.path().join("missing.dat").exists());
}

#[test]
fn the_command_line_is_saved_after_the_user_s_note() {
    let dir = tempfile::tempdir().unwrap();
    let out = iocap(dir.path())
        .args(["diskspd", "-b4K", "-d1", "-W0", "-c4M", "t.dat"])
        .args(["--note", "after the firmware update"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = crate::json_of(dir.path(), &["history", "--output", "json"]);
    let runs = v.as_array().or_else(|| v["runs"].as_array()).unwrap();
    let id = runs[0]["run_id"].as_str().unwrap().to_string();
    let saved = crate::json_of(dir.path(), &["show", &id, "--output", "json"]);
    assert_eq!(
        saved["note"],
        "after the firmware update\n(diskspd -b4K -d1 -W0 -c4M t.dat)"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_windows_disk_or_volume_target_is_refused_on_linux_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    for (target, said) in [("#2", "physical disk 2"), ("E:", "Windows volume")] {
        let out = iocap(dir.path())
            .args([
                "diskspd",
                "-b8K",
                "-d1",
                "-W0",
                "-c16M",
                "--no-save",
                target,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{target}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("'{target}'")) && err.contains(said) && err.contains("/dev/sdX"),
            "{err}"
        );
        assert!(!dir.path().join(target).exists(), "{target} was created");
    }
}

/// DiskSpd's lines that iocap refused until issue 27 run, each for a second on a small file.
#[test]
fn the_once_refused_lines_run() {
    let dir = tempfile::tempdir().unwrap();
    for line in [
        "-b4K -B1M:1M -r -w100 -c4M base.dat",
        "-b4K -B1M -f3M -w100 -c4M end.dat",
        "-b4K -rs50 -w30 -c4M mixed.dat",
        "-b4K -o4 -p -w100 -c4M parallel.dat",
        "-b4K -t2 -i8 -j5 -c4M think.dat",
        "-b4K -F2 -O4 -r -c4M a.dat b.dat",
        "-b256K -t2 -si4K -w100 -c8M fill.dat",
        "-b8K -r4K -w100 -c4M align.dat",
        "-b4K -vs -c4M verbose.dat",
    ] {
        let out = iocap(dir.path())
            .args(["diskspd", "-d1", "-W0", "--no-save"])
            .args(line.split_whitespace())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{line}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Total IO"),
            "{line}"
        );
    }
    // -B1M:1M creates the file to the region's end; nothing before the base was written
    assert_eq!(
        std::fs::metadata(dir.path().join("base.dat"))
            .unwrap()
            .len(),
        2 << 20
    );
}

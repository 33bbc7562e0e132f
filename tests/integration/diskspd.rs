//! `iocap diskspd`: a DiskSpd command line run unchanged, in DiskSpd's text and XML layouts,
//! saved like any run; an unsupported flag, a missing target without `-c` or a Windows device
//! target on Linux is refused.

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
        .args(["diskspd", "-b8K", "-B4K", "-c16M", "--no-save", "t.dat"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-B4K"));
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

//! `iocap capture` of iocap's own runs on a loop device made by the test (issue 24): the count
//! against the device's counters and iocap's own, the shape (sizes, read share, randomness,
//! queue depth), a stop by Ctrl-C and a kill -9 that leave a readable trace, and a trace file
//! never written over.

use std::process::{Child, Command as Std, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::rig::*;
use super::MIB;

/// `iocap capture ARGS` in the background.
pub(super) fn capture(dir: &std::path::Path, args: &[&str]) -> Child {
    Std::new(assert_cmd::cargo::cargo_bin("iocap"))
        .arg("capture")
        .args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", crate::data_home())
        .env_remove("IOCAP_DB")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iocap capture starts")
}

/// Reads completed, from /sys/block/NAME/stat (field 1).
fn reads_done(dev: &str) -> u64 {
    let name = std::path::Path::new(dev)
        .file_name()
        .unwrap()
        .to_string_lossy();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    stat.split_whitespace().next().unwrap().parse().unwrap()
}

fn f64_at(v: &Value, p: &str) -> f64 {
    v.pointer(p)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{p} in {v:#}"))
}

#[test]
fn a_capture_of_8k_random_reads_at_qd_4_counts_and_shapes_them_as_they_ran() {
    require!("losetup");
    let mut rig = Rig::new();
    let file = rig.backing_file("disk", 128 * MIB, None);
    let dev = rig.attach(&file);
    settle();
    let trace = rig.path("run.iotrace");
    let cap = capture(
        rig.dir.path(),
        &[
            &dev,
            "--duration",
            "5s",
            "-o",
            trace.to_str().unwrap(),
            "--format",
            "json",
            "--no-save",
        ],
    );
    std::thread::sleep(Duration::from_millis(1200));
    let before = reads_done(&dev);
    let run = iocap(
        rig.dir.path(),
        "run --rw randread --bs 8K --qd 4 --duration 2s --warmup 0s --no-save --output json",
        &dev,
    );
    let after = reads_done(&dev);
    assert_eq!(run.status.code(), Some(0), "{}", shown(&run));
    let out = cap.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let w = &json(&out)["workload"];
    let captured = u64_at(w, "/records");
    let device = after - before;
    let own = u64_at(&json(&run)["tests"][0], "/total/ios");
    let near = |a: u64, b: u64| (a as f64 - b as f64).abs() <= 0.01 * b as f64 + 2.0;
    assert!(
        near(captured, device),
        "captured {captured} requests, the device completed {device}"
    );
    assert!(
        near(captured, own),
        "captured {captured} requests, iocap counted {own}"
    );
    // under load the kernel may skip a program run (an interrupt completing a request inside
    // one): such requests are counted as lost, and must stay rare
    let lost = u64_at(w, "/lost_ring_full") + u64_at(w, "/lost_other");
    assert!(lost * 1000 <= captured, "{lost} lost of {captured}: {w:#}");
    let mix = &w["mix"];
    assert_eq!(
        (mix[0]["op"].as_str(), f64_at(&mix[0], "/count_pct")),
        (Some("read"), 100.0),
        "{w:#}"
    );
    assert_eq!(u64_at(&w["sizes"][0], "/size_bytes"), 8192, "{w:#}");
    assert!(f64_at(&w["sizes"][0], "/pct") > 99.0, "{w:#}");
    assert!(f64_at(w, "/randomness/sequential_pct") < 5.0, "{w:#}");
    assert_eq!(
        u64_at(w, "/queue_depth/typical"),
        4,
        "{:#}",
        w["queue_depth"]
    );
    assert_eq!(u64_at(w, "/queue_depth/max"), 4, "{:#}", w["queue_depth"]);
    // the trace reads back to the same description
    let again = iocap(
        rig.dir.path(),
        "characterise --format json --no-save",
        trace.to_str().unwrap(),
    );
    assert_eq!(again.status.code(), Some(0), "{}", shown(&again));
    assert_eq!(u64_at(&json(&again)["workload"], "/records"), captured);
}

#[test]
fn ctrl_c_ends_a_capture_with_a_complete_trace_and_kill_9_keeps_its_whole_seconds() {
    require!("losetup");
    let mut rig = Rig::new();
    let file = rig.backing_file("disk", 64 * MIB, None);
    let dev = rig.attach(&file);
    settle();
    for (signal, name) in [
        (libc::SIGINT, "int.iotrace"),
        (libc::SIGKILL, "kill.iotrace"),
    ] {
        let trace = rig.path(name);
        let cap = capture(
            rig.dir.path(),
            &[&dev, "-o", trace.to_str().unwrap(), "--no-save"],
        );
        std::thread::sleep(Duration::from_millis(1000));
        let run = iocap(
            rig.dir.path(),
            "run --rw randread --bs 4K --qd 2 --duration 2s --warmup 0s --no-save",
            &dev,
        );
        assert_eq!(run.status.code(), Some(0), "{}", shown(&run));
        std::thread::sleep(Duration::from_millis(1200)); // the last second's chunk is written
                                                         // SAFETY: kill(2) on the child we started, with a valid signal.
        unsafe { libc::kill(cap.id() as i32, signal) };
        let out = cap.wait_with_output().unwrap();
        let desc = iocap(
            rig.dir.path(),
            "characterise --format json --no-save",
            trace.to_str().unwrap(),
        );
        assert_eq!(
            desc.status.code(),
            Some(0),
            "{}\n{}",
            shown(&out),
            shown(&desc)
        );
        let w = &json(&desc)["workload"];
        assert!(u64_at(w, "/records") > 1000, "{w:#}");
        if signal == libc::SIGINT {
            assert_eq!(
                out.status.code(),
                Some(0),
                "Ctrl-C is how a capture without --duration ends: {}",
                shown(&out)
            );
            assert_eq!(w["complete"], true, "{w:#}");
        } else {
            assert_eq!(
                w["complete"], false,
                "a killed capture has no end mark: {w:#}"
            );
            let text = iocap(
                rig.dir.path(),
                "characterise --no-save",
                trace.to_str().unwrap(),
            );
            assert!(
                stdout(&text).contains("incomplete trace"),
                "{}",
                shown(&text)
            );
        }
    }
}

#[test]
fn a_capture_never_writes_over_a_file() {
    require!("losetup");
    let mut rig = Rig::new();
    let file = rig.backing_file("disk", 16 * MIB, None);
    let dev = rig.attach(&file);
    let mine = rig.path("mine.iotrace");
    std::fs::write(&mine, "the user's").unwrap();
    let out = iocap(
        rig.dir.path(),
        &format!("capture --duration 1s --no-save -o {}", mine.display()),
        &dev,
    );
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    assert!(
        stderr(&out).contains("already exists; iocap does not overwrite"),
        "{}",
        shown(&out)
    );
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "the user's");
}

//! `iocap saturate` and `iocap scaleup` on loop devices: the steps and groups they report, every
//! byte they report read found in the devices' own counters, and no write to a device that was
//! not allowed.

use std::collections::HashMap;
use std::fs;

use serde_json::Value;

use super::rig::*;
use super::MIB;

/// Bytes iocap reported read from `dev` over every test of a run, from the per-target figures.
fn reported_read_bytes(run: &Value, dev: &str) -> u64 {
    run["tests"]
        .as_array()
        .expect("tests is an array")
        .iter()
        .flat_map(|t| t["targets"].as_array().expect("targets is an array"))
        .filter(|t| t["path"] == dev)
        .map(|t| u64_at(t, "/read/bytes"))
        .sum()
}

/// The `path` of each entry of a JSON array.
fn paths(entries: &Value) -> Vec<&str> {
    entries
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {entries:#}"))
        .iter()
        .map(|e| e["path"].as_str().expect("a path"))
        .collect()
}

/// Queue depth 1, 2, 4, 8 on a fresh loop device: one test per step, each on the block device
/// and read only, and every byte the steps report read was read by the device, less nothing but
/// the I/Os in flight when each step's window closed.
#[test]
fn saturate_on_a_loop_device_steps_queue_depth() {
    require!("losetup");
    let mut rig = Rig::new();
    let file = rig.backing_file("disk", 128 * MIB, None);
    let dev = rig.attach(&file);
    settle();
    let bs = 8192u64;
    let (read0, written0) = io_sectors(&dev);
    let out = iocap_on(
        rig.dir.path(),
        "saturate --bs 8K --step-duration 0.3s --warmup 0s --max-qd 8 --no-throttled --sizes none \
         --no-save --output json",
        &[&dev],
    );
    let (read1, written1) = io_sectors(&dev);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let j = json(&out);
    let s = &j["saturation"];
    let steps = s["steps"].as_array().expect("saturation.steps");
    let tests = j["tests"].as_array().expect("tests");

    // The steps double the queue depth from 1; they reach 8 unless the curve flattened first,
    // and say why they stopped either way.
    let qds: Vec<u64> = steps.iter().map(|p| u64_at(p, "/qd")).collect();
    assert!(!qds.is_empty(), "no steps: {s:#}");
    assert_eq!(qds, [1, 2, 4, 8][..qds.len()], "{s:#}");
    let reason = s["stop_reason"].as_str().unwrap_or_default();
    assert!(
        !reason.trim().is_empty(),
        "the steps stopped at qd {} without a reason: {s:#}",
        qds.last().unwrap()
    );
    assert_eq!(
        s["throttled"].as_array().map(Vec::len),
        Some(0),
        "--no-throttled, yet throttled points: {s:#}"
    );
    assert_eq!(
        tests.len(),
        steps.len(),
        "one test per step, and no other: {j:#}"
    );

    for (i, p) in steps.iter().enumerate() {
        let t = &tests[u64_at(p, "/test_idx") as usize];
        assert_eq!(u64_at(p, "/test_idx"), i as u64, "{p:#}");
        assert_eq!(
            u64_at(t, "/spec/qd"),
            qds[i],
            "step {i} ran another qd: {t:#}"
        );
        assert_eq!(t["targets"][0]["kind"], "block_device", "{t:#}");
        assert_eq!(t["targets"][0]["path"], dev.as_str(), "{t:#}");
        assert!(t["error"].is_null(), "step {i} failed: {t:#}");
        let ios = u64_at(t, "/read/ios");
        assert!(ios > 0, "step {i} (qd {}) read nothing: {t:#}", qds[i]);
        assert!(p["iops"].as_f64().unwrap_or(0.0) > 0.0, "{p:#}");
        assert_eq!(u64_at(t, "/read/bytes"), ios * bs, "{t:#}");
        assert_eq!(u64_at(t, "/write/ios"), 0, "a read step wrote: {t:#}");
    }

    let reported: u64 = tests.iter().map(|t| u64_at(t, "/read/bytes")).sum();
    assert_eq!(reported, reported_read_bytes(&j, &dev), "{j:#}");
    let device = (read1 - read0) * 512;
    assert!(
        device >= reported,
        "iocap reported {reported} B read over {} steps but the device saw only {device} B",
        steps.len()
    );
    // Per step, only the I/Os in flight when its window closed may go uncounted, plus a little
    // slack for a stray probe.
    let slack: u64 = qds.iter().map(|qd| qd * bs + 128 * 1024).sum();
    assert!(
        device <= reported + slack,
        "the device read {device} B, {} B more than the {reported} B iocap reported over the \
         steps; at most {slack} B (the I/Os in flight at the end of each step and 128 KiB of \
         slack per step) may go uncounted",
        device - reported
    );
    assert_eq!(written1, written0, "saturate --rw randread wrote to {dev}");
}

/// Two loop devices, each alone and then both together: the report names both in each place,
/// gives a positive efficiency, accounts every byte on each device, and writes nothing.
#[test]
fn scaleup_on_two_loop_devices() {
    require!("losetup");
    let mut rig = Rig::new();
    let devs: Vec<String> = ["disk1", "disk2"]
        .iter()
        .map(|name| {
            let file = rig.backing_file(name, 64 * MIB, None);
            rig.attach(&file)
        })
        .collect();
    settle();
    let targets: Vec<&str> = devs.iter().map(String::as_str).collect();
    let before: HashMap<&str, (u64, u64)> = targets.iter().map(|d| (*d, io_sectors(d))).collect();
    let out = iocap_on(
        rig.dir.path(),
        "scaleup --duration 0.3s --warmup 0s --qd 4 --no-save --output json",
        &targets,
    );
    let after: HashMap<&str, (u64, u64)> = targets.iter().map(|d| (*d, io_sectors(d))).collect();
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let j = json(&out);
    let s = &j["scaleup"];

    let alone = &s["alone"];
    assert_eq!(paths(alone), targets, "each device alone, in order: {s:#}");
    for a in alone.as_array().unwrap() {
        assert!(a["iops"].as_f64().unwrap_or(0.0) > 0.0, "{a:#}");
        assert!(a["slow"].is_boolean(), "{a:#}");
        let t = &j["tests"][u64_at(a, "/test_idx") as usize];
        assert_eq!(t["targets"].as_array().map(Vec::len), Some(1), "{t:#}");
        assert_eq!(t["targets"][0]["path"], a["path"], "{t:#}");
        assert_eq!(t["targets"][0]["kind"], "block_device", "{t:#}");
    }

    let together = s["together"].as_array().expect("scaleup.together");
    assert_eq!(together.len(), 1, "two devices make one group: {s:#}");
    let g = &together[0];
    let group: Vec<&str> = g["paths"]
        .as_array()
        .expect("paths")
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(group, targets, "{g:#}");
    assert!(g["iops"].as_f64().unwrap_or(0.0) > 0.0, "{g:#}");
    let eff = g["efficiency_pct"].as_f64().unwrap_or(0.0);
    assert!(eff > 0.0, "efficiency {eff} %: {g:#}");
    let t = &j["tests"][u64_at(g, "/test_idx") as usize];
    assert_eq!(paths(&t["targets"]), targets, "{t:#}");
    assert!(
        t["targets"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["kind"] == "block_device" && u64_at(x, "/read/ios") > 0),
        "both devices are read together: {t:#}"
    );
    assert_eq!(j["tests"].as_array().map(Vec::len), Some(3), "{j:#}");

    for d in &targets {
        let (r0, w0) = before[d];
        let (r1, w1) = after[d];
        let reported = reported_read_bytes(&j, d);
        let device = (r1 - r0) * 512;
        assert!(
            device >= reported,
            "iocap reported {reported} B read from {d} alone and together, the device saw only \
             {device} B"
        );
        assert_eq!(w1, w0, "scaleup --rw randread wrote to {d}");
    }
}

/// `--rw randwrite` on devices iocap did not create, without `--allow-overwrite`: refused before
/// any I/O, saying how to proceed, and neither device changes.
#[test]
fn scaleup_refuses_writes_to_devices_it_did_not_create() {
    require!("losetup");
    let mut rig = Rig::new();
    let files: Vec<_> = ["disk1", "disk2"]
        .iter()
        .map(|name| rig.backing_file(name, 32 * MIB, Some(0x5C)))
        .collect();
    let devs: Vec<String> = files.iter().map(|f| rig.attach(f)).collect();
    settle();
    let targets: Vec<&str> = devs.iter().map(String::as_str).collect();
    let contents: Vec<Vec<u8>> = files.iter().map(|f| fs::read(f).unwrap()).collect();
    let before: Vec<(u64, u64)> = targets.iter().map(|d| io_sectors(d)).collect();

    let out = iocap_on(
        rig.dir.path(),
        "scaleup --rw randwrite --duration 0.3s --warmup 0s --qd 4 --no-save",
        &targets,
    );
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    let err = stderr(&out);
    assert!(
        err.contains("--allow-overwrite") && err.contains(targets[0]),
        "the refusal does not name the device and how to proceed:\n{}",
        shown(&out)
    );
    assert!(!err.contains("panicked"), "{}", shown(&out));

    for (i, d) in targets.iter().enumerate() {
        let (_, w0) = before[i];
        let (_, w1) = io_sectors(d);
        assert_eq!(w1, w0, "refused, yet {d} was written to");
        let now = fs::read(&files[i]).unwrap();
        assert!(
            now == contents[i],
            "refused, yet {d} changed ({} write stamps)",
            stamps(&now).len()
        );
    }
}

/// `iocap cachescan` on a loop device with direct I/O over a file in memory: nothing below it
/// caches (the backing file is read with O_DIRECT too), so no level is reported and the scan says how
/// far it looked; the device is only read (the read-after-write check is refused on a device
/// without --allow-overwrite, and says so).
#[test]
fn cachescan_on_a_direct_loop_device_finds_no_cache() {
    let _alone = alone();
    require!("losetup");
    // in memory (tmpfs, which loop's direct I/O reads without a page cache): a file on the
    // virtual disk sat on the host's cache of what was just written, which measured as a
    // 64M level some days; memory answers every working set alike. Written, not allocated:
    // reads of unwritten extents cost nothing, which is a cache of its own. Declared before
    // the rig, so it is removed after the loop device is detached.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let mut rig = Rig::new();
    let file = shm.path().join("disk");
    let chunk = vec![0xA5u8; MIB as usize];
    let mut f = fs::File::create(&file).unwrap();
    for _ in 0..256 {
        std::io::Write::write_all(&mut f, &chunk).unwrap();
    }
    drop(f);
    let dev = rig.attach(&file);
    settle();
    let (_, written0) = io_sectors(&dev);
    let out = iocap(
        rig.dir.path(),
        "cachescan --step-duration 0.3s --no-save --output json",
        &dev,
    );
    assert!(out.status.success(), "{}", shown(&out));
    let s = &json(&out)["cachescan"];
    assert_eq!(s["levels"].as_array().map(Vec::len), Some(0), "{s:#}");
    assert_eq!(u64_at(s, "/tried_up_to_bytes"), 256 * MIB);
    assert_eq!(s["steps"].as_array().map(Vec::len), Some(5), "16M to 256M");
    let notes = s["notes"].to_string();
    assert!(notes.contains("no cache found up to 256M"), "{notes}");
    assert!(
        notes.contains("read-after-write check did not run"),
        "{notes}"
    );
    assert_eq!(io_sectors(&dev).1, written0, "nothing was written");
}

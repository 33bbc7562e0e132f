//! A replay of a captured iocap run (issue 25): `iocap run` of 8K random reads and writes on a
//! loop device is captured, and the trace replayed onto a new iocap file keeps the capture's
//! count, sizes and read share.

use std::time::Duration;

use serde_json::Value;

use super::capture::capture;
use super::rig::*;
use super::MIB;

fn op(v: &Value, name: &str) -> Value {
    v["replay"]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in {v:#}"))
}

#[test]
fn a_replay_of_a_captured_run_keeps_its_count_sizes_and_read_share() {
    require!("losetup");
    let mut rig = Rig::new();
    let file = rig.backing_file("disk", 64 * MIB, None);
    let dev = rig.attach(&file);
    settle();
    let trace = rig.path("run.iotrace");
    let t = trace.to_str().unwrap();
    let cap = capture(
        rig.dir.path(),
        &[&dev, "--duration", "4s", "-o", t, "--no-save"],
    );
    std::thread::sleep(Duration::from_millis(1200));
    let run = iocap(
        rig.dir.path(),
        "run --rw randrw --write-pct 30 --bs 8K --qd 4 --duration 1s --warmup 0s --no-save \
         --allow-overwrite",
        &dev,
    );
    assert_eq!(run.status.code(), Some(0), "{}", shown(&run));
    let out = cap.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let w = json(&iocap(
        rig.dir.path(),
        "characterise --format json --no-save",
        t,
    ));
    // the trace's own counts and bytes: udev may have read the new device too
    let mix = |op: &str, what: &str| {
        w["workload"]["mix"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["op"] == op)
            .map_or(0, |m| m[what].as_u64().unwrap())
    };
    let (reads, writes) = (mix("read", "count"), mix("write", "count"));
    assert!(reads > 100 && writes > 30, "{w:#}");
    let eights = &w["workload"]["sizes"][0];
    assert_eq!(eights["size_bytes"].as_u64(), Some(8192), "{w:#}");
    let target = rig.path("replayed");
    let r = iocap(
        rig.dir.path(),
        &format!("replay {t} --output json --no-save"),
        target.to_str().unwrap(),
    );
    assert_eq!(r.status.code(), Some(0), "{}", shown(&r));
    let r = json(&r);
    for (name, n) in [("read", reads), ("write", writes)] {
        let o = op(&r, name);
        assert_eq!(o["recorded"].as_u64(), Some(n), "{o}");
        assert_eq!(o["replayed"].as_u64(), Some(n), "{o}");
        assert_eq!(o["bytes"].as_u64(), Some(mix(name, "bytes")), "{o}");
    }
    let share = |side: &str| r["replay"][side]["read_pct"].as_f64().unwrap();
    assert!((share("replayed") - share("recorded")).abs() < 1e-9);
    assert_eq!(r["replay"]["created"], true);
}

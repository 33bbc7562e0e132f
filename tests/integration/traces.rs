//! Traces at the command line (issue 24): what fio's --write_iolog wrote is characterised and
//! converted, fio replays iocap's export, and bad input is refused with exit 2 and a reason.

use std::path::{Path, PathBuf};
use std::process::Command as Std;

use serde_json::Value;

use super::iocap;

/// fio on PATH, else the static peer beside the workspace; `None` (after saying why) where
/// there is none, except under CI, which installs it.
fn fio() -> Option<PathBuf> {
    let on_path = Std::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if on_path {
        return Some("fio".into());
    }
    let peer = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/fio");
    if peer.is_file() {
        return Some(peer);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "fio is missing under CI (.ci/run installs it)"
    );
    eprintln!("skipping: no fio");
    None
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn a_fio_iolog_is_characterised_converted_and_replayed_by_fio() {
    let Some(fio) = fio() else { return };
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let log = d.path().join("fio.log");
    let job = Std::new(&fio)
        .args([
            "--name=t",
            "--ioengine=psync",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=8k",
            "--size=4m",
        ])
        .args(["--number_ios=400", "--output-format=json"])
        .arg(format!("--filename={}", data.display()))
        .arg(format!("--write_iolog={}", log.display()))
        .output()
        .unwrap();
    assert!(
        job.status.success(),
        "{}",
        String::from_utf8_lossy(&job.stderr)
    );
    let report: Value = serde_json::from_slice(&job.stdout).unwrap();
    let reads = report["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    let writes = report["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
    let out = iocap(d.path())
        .args(["characterise", "--format", "json", "--no-save"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w = &json(&out)["workload"];
    let count = |op: &str| {
        w["mix"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["op"] == op)
            .map_or(0, |m| m["count"].as_u64().unwrap())
    };
    assert_eq!((count("read"), count("write")), (reads, writes), "{w:#}");
    assert_eq!(w["sizes"][0]["size_bytes"], 8192);
    assert_eq!(
        w["has_completions"], false,
        "an iolog has no completion times"
    );
    // its profile is measured by suite run; preflight names suite run instead
    let prof = d.path().join("mine.toml");
    let out = iocap(d.path())
        .args(["characterise", "--no-save", "--as-profile"])
        .arg(&prof)
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spec = format!("profile:{}", prof.display());
    let run = iocap(d.path())
        .args([
            "suite",
            "run",
            &spec,
            "--duration",
            "1s",
            "--size",
            "16M",
            "--no-save",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let t = &json(&run)["tests"][0];
    let want = (writes * 100 + (reads + writes) / 2) / (reads + writes);
    assert_eq!(
        t["spec"]["write_pct"].as_u64(),
        Some(want),
        "fio's 70/30 mix: {}",
        t["spec"]
    );
    let pre = iocap(d.path())
        .args(["preflight", "--quick", "--no-save", "--profile"])
        .arg(&prof)
        .output()
        .unwrap();
    assert_eq!(pre.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&pre.stderr).contains("iocap suite run profile:FILE"),
        "{}",
        String::from_utf8_lossy(&pre.stderr)
    );
    // iocap's export, replayed by fio: the same number of I/Os
    let back = d.path().join("back.log");
    let conv = iocap(d.path())
        .args(["convert", "--to", "fio", "-o"])
        .arg(&back)
        .arg("--filename")
        .arg(&data)
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        conv.status.success(),
        "{}",
        String::from_utf8_lossy(&conv.stderr)
    );
    let replay = Std::new(&fio)
        .args(["--name=r", "--ioengine=psync", "--output-format=json"])
        .arg(format!("--read_iolog={}", back.display()))
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let r: Value = serde_json::from_slice(&replay.stdout).unwrap();
    let j = &r["jobs"][0];
    assert_eq!(
        (
            j["read"]["total_ios"].as_u64(),
            j["write"]["total_ios"].as_u64()
        ),
        (Some(reads), Some(writes))
    );
}

#[test]
fn a_file_of_another_kind_is_refused_naming_the_formats_iocap_reads() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("notes.txt");
    std::fs::write(&f, "hello, this is not a trace\n").unwrap();
    let out = iocap(d.path())
        .args(["characterise", "--no-save"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("not a trace iocap knows")
            && e.contains("blktrace")
            && e.contains("fio's iolog"),
        "{e}"
    );
}

#[test]
fn a_truncated_trace_loads_its_whole_chunks_and_names_the_byte_offset() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("t.log");
    let mut text = String::from("fio version 3 iolog\n0 /dev/sdx add\n0 /dev/sdx open\n");
    for i in 0..200_000u64 {
        text.push_str(&format!(
            "{} /dev/sdx read {} 8192\n",
            i * 10,
            (i * 7919 % 100_000) * 8192
        ));
    }
    std::fs::write(&log, text).unwrap();
    let trace = d.path().join("t.iotrace");
    let conv = iocap(d.path())
        .args(["convert", "--to", "iocap", "-o"])
        .arg(&trace)
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        conv.status.success(),
        "{}",
        String::from_utf8_lossy(&conv.stderr)
    );
    let bytes = std::fs::read(&trace).unwrap();
    std::fs::write(&trace, &bytes[..bytes.len() - 100]).unwrap();
    let out = iocap(d.path())
        .args(["characterise", "--format", "json", "--no-save"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("at byte") && e.contains("truncated"), "{e}");
    let w = &json(&out)["workload"];
    let n = w["records"].as_u64().unwrap();
    assert!(
        (65_536..200_000).contains(&n),
        "the whole chunks before the cut load: {n}"
    );
    assert_eq!(w["complete"], false);
}

#[test]
fn a_capture_of_a_path_without_a_block_device_is_refused_naming_why() {
    let d = tempfile::tempdir().unwrap();
    for (target, why) in [("/dev/shm", "tmpfs"), ("/no/such/device", "no such file")] {
        if target == "/dev/shm" && !Path::new(target).exists() {
            continue;
        }
        let out = iocap(d.path())
            .args(["capture", target, "--duration", "1s", "--no-save"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{target}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains(why), "{target}: {e}");
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "no file left behind"
        );
    }
}

#[test]
fn the_working_set_is_placed_against_this_hosts_last_cache_scan() {
    use iocap_model::cachescan::{CacheLevel, CacheScan};
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("r.db");
    let mut run = iocap_model::fixture::run(&Default::default());
    run.host.hostname = iocap_engine::host::host_info().hostname;
    run.cachescan = Some(CacheScan {
        target: "/data".into(),
        block_bytes: 4096,
        steps: vec![],
        levels: vec![CacheLevel {
            fits_bytes: 1 << 30,
            exceeds_bytes: 2 << 30,
            estimated_bytes: 1 << 30,
            hit_lat_us: 50.0,
            miss_lat_us: 500.0,
            hit_iops_qd32: 1e5,
            miss_iops_qd32: 1e4,
        }],
        tried_up_to_bytes: 8 << 30,
        stop_reason: String::new(),
        read_after_write: None,
        notes: vec![],
    });
    let mut store = iocap_store::Store::open(&iocap_store::Location::Sqlite(db.clone())).unwrap();
    store.save(&run).unwrap();
    let log = d.path().join("t.log");
    let mut text = String::from("fio version 3 iolog\n0 /dev/sdx add\n");
    for i in 0..100u64 {
        text.push_str(&format!("{} /dev/sdx read {} 8192\n", i * 10, i * 8192));
    }
    std::fs::write(&log, text).unwrap();
    let out = iocap(d.path())
        .args(["characterise", "--no-save", "--db"])
        .arg(&db)
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("fits in cache level 1 (holds at least 1024 MiB)"),
        "{s}"
    );
}

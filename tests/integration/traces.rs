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

/// `out`, after checking the command succeeded (its stderr shown if not).
fn ok(out: std::process::Output) -> std::process::Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
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
    let job = ok(Std::new(&fio)
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
        .unwrap());
    let report: Value = serde_json::from_slice(&job.stdout).unwrap();
    let reads = report["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    let writes = report["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
    let out = ok(iocap(d.path())
        .args(["characterise", "--format", "json", "--no-save"])
        .arg(&log)
        .output()
        .unwrap());
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
    ok(iocap(d.path())
        .args(["characterise", "--no-save", "--as-profile"])
        .arg(&prof)
        .arg(&log)
        .output()
        .unwrap());
    let spec = format!("profile:{}", prof.display());
    let run = ok(iocap(d.path())
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
        .unwrap());
    // the profile runs the reads and the writes as two workloads of one test, each at its
    // recorded rate: their rates make fio's mix
    let t = &json(&run)["tests"][0];
    assert!(t["total"]["ios"].as_u64().unwrap() > 0, "{t}");
    let text = std::fs::read_to_string(&prof).unwrap();
    let rate = |key: &str| -> f64 {
        let at = text
            .find(&format!("key = \"{key}\""))
            .unwrap_or_else(|| panic!("{text}"));
        let line = text[at..]
            .lines()
            .find(|l| l.starts_with("rate_iops = "))
            .unwrap();
        line["rate_iops = ".len()..].parse().unwrap()
    };
    let (r, w) = (rate("stream-other-read"), rate("stream-other-write"));
    let want = writes as f64 / (reads + writes) as f64;
    assert!(
        (w / (r + w) - want).abs() < 0.01,
        "fio's {reads} reads and {writes} writes, the profile's rates {r} and {w}:\n{text}"
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
    ok(iocap(d.path())
        .args(["convert", "--to", "fio", "-o"])
        .arg(&back)
        .arg("--filename")
        .arg(&data)
        .arg(&log)
        .output()
        .unwrap());
    let replay = ok(Std::new(&fio)
        .args(["--name=r", "--ioengine=psync", "--output-format=json"])
        .arg(format!("--read_iolog={}", back.display()))
        .output()
        .unwrap());
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
    ok(iocap(d.path())
        .args(["convert", "--to", "iocap", "-o"])
        .arg(&trace)
        .arg(&log)
        .output()
        .unwrap());
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
            assert!(std::env::var_os("CI").is_none(), "CI's Debian has /dev/shm");
            eprintln!("skipping the tmpfs case: no /dev/shm here");
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
    run.host.hostname = iocap_platform::host::host_info().hostname;
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
        rechecks: Vec::new(),
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
    let out = ok(iocap(d.path())
        .args(["characterise", "--no-save", "--db"])
        .arg(&db)
        .arg(&log)
        .output()
        .unwrap());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("fits in cache level 1 (holds at least 1024 MiB)"),
        "{s}"
    );
}

/// Without root a capture says what it needs and how to bring a trace instead, and writes
/// nothing. As root the test runs the binary as `nobody` (from a directory nobody can reach).
#[test]
fn a_capture_without_privileges_names_what_it_needs_and_how_to_bring_a_trace() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("iocap");
    let mut cmd = Std::new(&bin);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let mine = d.path().join("iocap");
        std::fs::hard_link(&bin, &mine)
            .or_else(|_| std::fs::copy(&bin, &mine).map(|_| ()))
            .unwrap();
        cmd = Std::new(&mine);
        cmd.uid(65534).gid(65534);
    }
    let out = cmd
        .args(["capture", "/", "--duration", "1s", "--no-save", "-o"])
        .arg(d.path().join("t.iotrace"))
        .current_dir(d.path())
        .env("XDG_DATA_HOME", d.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("needs root (or the CAP_BPF and CAP_PERFMON"),
        "{e}"
    );
    assert!(
        e.contains("blktrace -d DEV") && e.contains("iocap characterise"),
        "{e}"
    );
    assert!(
        !d.path().join("t.iotrace").exists(),
        "no trace file left behind"
    );
}

#[test]
fn convert_never_writes_over_its_input_or_through_a_link() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("t.log");
    std::fs::write(
        &log,
        "fio version 3 iolog\n0 /dev/sdx add\n5 /dev/sdx read 0 4096\n",
    )
    .unwrap();
    let before = std::fs::read(&log).unwrap();
    let out = iocap(d.path())
        .args(["convert", "--to", "fio", "--force", "-o"])
        .arg(&log)
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is the trace being read"));
    assert_eq!(
        std::fs::read(&log).unwrap(),
        before,
        "the input is untouched"
    );
    let mine = d.path().join("mine.txt");
    std::fs::write(&mine, "the user's").unwrap();
    let link = d.path().join("link.csv");
    std::os::unix::fs::symlink(&mine, &link).unwrap();
    let out = iocap(d.path())
        .args(["convert", "--to", "csv", "--force", "-o"])
        .arg(&link)
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("symbolic link"));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "the user's");
}

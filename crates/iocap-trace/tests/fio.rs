//! fio's own files: a job's `--write_iolog` imported and checked against the job's counts, and
//! a trace exported as an iolog that fio replays request for request.
//!
//! fio is `$FIO` if set, else the first `fio` on PATH (CI installs Debian's), else
//! ../shared/peers/fio beside the workspace. Without one the tests say why and pass, unless
//! `CI` is set: there they fail.
//!
//! fio refuses `--write_iolog` while it replays (`read iolog overrides write_iolog`), so the
//! replay is checked through its per-I/O latency log (`--write_lat_log` with `--log_offset=1`:
//! one line per I/O with its direction, size and offset) and its JSON counts.

use std::path::{Path, PathBuf};
use std::process::Command;

use iocap_trace::fio::export_fio_iolog;
use iocap_trace::{open_trace, DevId, IoFlags, IoRecord, Op, TraceFormat};

fn find_fio() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FIO") {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let on_path = std::env::split_paths(&path).map(|d| d.join("fio"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let peer = root.join("../shared/peers/fio");
    on_path.chain([peer]).find(|p| p.is_file())
}

fn fio_or_skip() -> Option<PathBuf> {
    let fio = find_fio();
    if fio.is_none() {
        let why = "no fio: not in $FIO, on PATH, or at ../shared/peers/fio";
        assert!(
            std::env::var_os("CI").is_none(),
            "{why} (CI installs Debian's fio)"
        );
        eprintln!("skipped: {why}");
    }
    fio
}

/// Runs fio with `args`; its JSON report.
fn run_fio(fio: &Path, args: &[String]) -> serde_json::Value {
    let out = Command::new(fio)
        .args(args)
        .arg("--output-format=json")
        .output()
        .expect("fio runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "fio {args:?} failed: {stdout}\n{stderr}"
    );
    let json = &stdout[stdout.find('{').expect("fio's JSON report")..];
    serde_json::from_str(json).expect("fio's JSON")
}

fn total_ios(job: &serde_json::Value, dir: &str) -> u64 {
    job[dir]["total_ios"].as_u64().unwrap_or(0)
}

#[test]
fn a_fio_jobs_iolog_imports_with_the_jobs_counts() {
    let Some(fio) = fio_or_skip() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let log = dir.path().join("job.iolog");
    let report = run_fio(
        &fio,
        &[
            "--name=job".into(),
            format!("--filename={}", data.display()),
            "--ioengine=psync".into(),
            "--rw=randrw".into(),
            "--bs=4k".into(),
            "--size=1m".into(),
            "--number_ios=200".into(),
            format!("--write_iolog={}", log.display()),
        ],
    );
    let job = &report["jobs"][0];
    let (reads, writes) = (total_ios(job, "read"), total_ios(job, "write"));
    assert_eq!(reads + writes, 200, "{job}");

    let trace = open_trace(&[log]).unwrap();
    // fio 3.31 and later write version 3
    assert_eq!(trace.format(), TraceFormat::FioIologV3);
    assert_eq!(trace.meta().devices[0].name, data.display().to_string());
    let recs: Vec<IoRecord> = trace.map(Result::unwrap).collect();
    let count = |op| recs.iter().filter(|r| r.op == op).count() as u64;
    assert_eq!((count(Op::Read), count(Op::Write)), (reads, writes));
    assert!(recs
        .iter()
        .all(|r| r.bytes == 4096 && r.end_bytes() <= 1 << 20));
    assert!(recs.windows(2).all(|w| w[0].issue_ns <= w[1].issue_ns));
}

fn rec(issue_us: u64, op: Op, offset: u64, bytes: u32) -> IoRecord {
    IoRecord {
        issue_ns: issue_us * 1000 + 321,
        complete_ns: None,
        dev: DevId::default(),
        sector: offset / 512,
        bytes,
        op,
        flags: IoFlags(0),
        error: 0,
        pid: 0,
        comm: [0; 16],
    }
}

#[test]
fn an_exported_trace_replays_in_fio_request_for_request() {
    let Some(fio) = fio_or_skip() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::File::create(&data)
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    let recs = [
        rec(10, Op::Read, 0, 4096),
        rec(20, Op::Write, 1 << 20, 8192),
        rec(30, Op::Read, 3 << 20, 16384),
        rec(40, Op::Flush, 0, 0),
        rec(50, Op::Discard, 2 << 20, 65536),
        rec(60, Op::Other, 0, 0),
        rec(70, Op::Write, 12288, 4096),
        rec(80, Op::Read, 12288, 512),
    ];
    let log = dir.path().join("replay.iolog");
    let out = std::fs::File::create(&log).unwrap();
    let name = data.to_str().unwrap();
    let s = export_fio_iolog(recs.iter().map(|r| Ok(*r)), out, name).unwrap();
    assert_eq!((s.records, s.skipped), (7, 1));

    let lat = dir.path().join("lat");
    let report = run_fio(
        &fio,
        &[
            "--name=replay".into(),
            "--ioengine=psync".into(),
            format!("--read_iolog={}", log.display()),
            // a trim needs a block device; the replay skips it
            "--replay_skip=trim".into(),
            format!("--write_lat_log={}", lat.display()),
            "--log_offset=1".into(),
        ],
    );
    let job = &report["jobs"][0];
    assert_eq!(total_ios(job, "sync"), 1, "{job}");
    let clat = std::fs::read_to_string(dir.path().join("lat_clat.1.log")).unwrap();
    // time, latency, direction (0 read, 1 write), size, offset[, priority]
    let replayed: Vec<(Op, u32, u64)> = clat
        .lines()
        .map(|l| {
            let f: Vec<u64> = l.split(',').map(|x| x.trim().parse().unwrap()).collect();
            let op = if f[2] == 0 { Op::Read } else { Op::Write };
            (op, f[3] as u32, f[4])
        })
        .collect();
    let expected: Vec<(Op, u32, u64)> = recs
        .iter()
        .filter(|r| matches!(r.op, Op::Read | Op::Write))
        .map(|r| (r.op, r.bytes, r.offset_bytes()))
        .collect();
    assert_eq!(replayed, expected);
}

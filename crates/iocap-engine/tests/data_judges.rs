//! What a write test leaves on the storage, judged as an array would (issue 23): after any write
//! test no 512-byte sector of the file equals another (the granularity at which some all-flash
//! arrays deduplicate), and no compressor saves more than 1 %, neither one that sees a file-system
//! record at a time (128 KiB, as ZFS and btrfs compress) nor zstd with a window over the whole
//! file. `--compressible` and `--dedupe` are held to the same judges and keep their meaning.
//!
//! The files are small (16 MiB) and written over several times, so that every slot's buffer is
//! reused many times: the default data used to be a slot's random bytes sent again and again,
//! with only the 32-byte stamps changing, and was 87 % duplicate sectors.
#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use iocap_engine::{prepare_targets, run_test, NoFillProgress, Quiet};
use iocap_model::{EngineChoice, JobSpec, RwMode, TargetSpec};

static NEVER: AtomicBool = AtomicBool::new(false);

const FILE: u64 = 16 << 20;

/// Runs write tests on a new 16 MiB file until `times` times its size has been written, and
/// returns the file. Each test has a seed of its own: on a busy machine a 0.5 s test writes
/// only part of its offsets' order, and with one seed every test would write the same part
/// again (a file left 13 % its fill data, whose --compressible 50 then saved 42 %).
fn written(rw: RwMode, bs: u64, qd: u32, shape: (u8, u8), times: u64) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.dat");
    let spec = JobSpec {
        name: "t".into(),
        targets: vec![TargetSpec::new(path.display().to_string())],
        rw,
        write_pct: 100,
        bs_bytes: bs,
        qd,
        threads: 1,
        size_bytes: FILE,
        duration_s: 0.5,
        warmup_s: 0.0,
        cooldown_s: 0.0,
        engine: EngineChoice::IoUring,
        compressible_pct: shape.0,
        dedupe_pct: shape.1,
        ..JobSpec::default()
    };
    let targets = prepare_targets(&spec, &mut NoFillProgress, &NEVER).unwrap();
    let (mut bytes, mut round) = (0, 0u64);
    while bytes < times * FILE {
        round += 1;
        let spec = JobSpec {
            seed: spec.seed ^ round.rotate_left(32),
            ..spec.clone()
        };
        bytes += run_test(&spec, &targets, &NEVER, &mut Quiet)
            .unwrap()
            .result
            .write
            .bytes;
    }
    std::fs::read(&path).unwrap()
}

/// Share of the 512-byte sectors that equal another sector of `data`, in percent.
fn duplicate_sectors_pct(data: &[u8]) -> f64 {
    let mut seen: HashMap<&[u8], u32> = HashMap::new();
    for s in data.chunks(512) {
        *seen.entry(s).or_default() += 1;
    }
    let dups: u32 = seen.values().filter(|n| **n > 1).sum();
    f64::from(dups) * 100.0 / (data.len() / 512) as f64
}

/// Share of the bytes zstd saves, in percent, compressing `record` bytes at a time (the whole
/// file in one frame when `record` is its length), with a window over the whole record and
/// long-distance matching, so a repeat anywhere earlier in it is found.
fn zstd_saved_pct(data: &[u8], record: usize) -> f64 {
    let packed: usize = data
        .chunks(record)
        .map(|r| {
            let mut enc = zstd::bulk::Compressor::new(3).unwrap();
            enc.long_distance_matching(true).unwrap();
            enc.window_log(27).unwrap();
            enc.compress(r).unwrap().len()
        })
        .sum();
    (1.0 - packed as f64 / data.len() as f64) * 100.0
}

/// Every judge, as (name, value in percent).
fn judge(data: &[u8]) -> [(&'static str, f64); 3] {
    [
        ("duplicate 512 B sectors", duplicate_sectors_pct(data)),
        ("zstd per 128 KiB record", zstd_saved_pct(data, 128 << 10)),
        ("zstd over the whole file", zstd_saved_pct(data, data.len())),
    ]
}

#[test]
fn the_default_write_data_cannot_be_shrunk_at_any_granularity() {
    for (rw, bs, qd) in [
        (RwMode::RandWrite, 8 << 10, 4),
        (RwMode::Write, 64 << 10, 4),
        (RwMode::RandWrite, 4 << 10, 16),
    ] {
        let data = written(rw, bs, qd, (0, 0), 3);
        for (name, v) in judge(&data) {
            eprintln!("{} {bs} B qd {qd}: {name} {v:.3} %", rw.name());
            let limit = if name.starts_with("duplicate") {
                0.0
            } else {
                1.0
            };
            assert!(
                v <= limit,
                "{} {bs} B qd {qd}: {name} {v:.2} % (at most {limit} %)",
                rw.name()
            );
        }
    }
}

#[test]
fn compressible_data_compresses_by_its_share_at_every_window() {
    // five times the file: random offsets leave under 1 % of it unwritten (its fill data)
    let data = written(RwMode::RandWrite, 8 << 10, 4, (50, 0), 5);
    for (name, v) in &judge(&data)[1..] {
        assert!(
            (v - 50.0).abs() <= 5.0,
            "--compressible 50: {name} saved {v:.1} %"
        );
    }
}

#[test]
fn dedupe_data_duplicates_its_share_and_nothing_else() {
    let data = written(RwMode::RandWrite, 8 << 10, 4, (0, 30), 5);
    let blocks: Vec<&[u8]> = data.chunks(4096).collect();
    let mut seen: HashMap<&[u8], u32> = HashMap::new();
    for b in &blocks {
        *seen.entry(b).or_default() += 1;
    }
    let dup_blocks = blocks.iter().filter(|b| seen[*b] > 1).count() as f64;
    let share = dup_blocks * 100.0 / blocks.len() as f64;
    // a block written twice as a duplicate still is one; the share of the file's blocks whose
    // last write was a duplicate is what the flag sets
    assert!((share - 30.0).abs() <= 5.0, "--dedupe 30: {share:.1} %");
    // the sectors that repeat are those of the duplicate blocks, no others
    let sectors = duplicate_sectors_pct(&data);
    assert!(
        (sectors - share).abs() <= 1.0,
        "--dedupe 30: {sectors:.1} % duplicate sectors against {share:.1} % blocks"
    );
    let whole = zstd_saved_pct(&data, data.len());
    assert!(
        (whole - 30.0).abs() <= 5.0,
        "--dedupe 30: zstd over the file saved {whole:.1} %"
    );
}

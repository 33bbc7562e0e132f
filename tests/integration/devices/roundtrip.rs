//! The workload round trip (issue 33, section 4): a profile made from a capture must run what
//! was captured. PostgreSQL on an ext4 file system of its own on a loop device (as in
//! [`super::pgloop`]); a short pgbench TPC-B run, from a cold page cache, recorded by
//! `iocap capture MNT --files PGDATA --comm postgres`; `iocap characterise --as-profile` of it;
//! the profile run by `iocap suite run profile:FILE` on the same file system, recorded with
//! `--files DATADIR LOGDIR` (the whole device, the server stopped); both traces characterised,
//! and each stream present in both (at least the data files' and the log's; the file system's
//! and the write-back's folded into the data's, whose test file the profile runs them on)
//! compared figure by figure: IOPS over its busy seconds, read share, commonest size and
//! durable bytes per second each within ±15 % of the recording; the mean depth is shown, not
//! judged (the profile does not carry the batches PostgreSQL's writes come in: see
//! [`super::trip`]'s `miss`).
//!
//! The profile runs each stream at its recorded rate, a throttle that does not catch up: on a
//! busy machine a stream's workers can fall behind it (the log's, a write and an fdatasync at
//! a time, does under `bench/busy-suite.sh`), and the run then says so ("... was not kept").
//! A stream's rates (IOPS, durable bytes per second) may fall short of the recording only where
//! the profile run said that of the stream; what the profile asks of each stream, which the
//! load has no part in, must be the recorded rate within ±15 %.
//!
//! `bench/roundtrip.py` does the same for longer, for `pgbench -S` and TPC-B, and writes the
//! table to docs/PERFORMANCE.md.
//!
//! Skipped with a message where the test cannot run as root with loop devices, or where
//! PostgreSQL 15 or later is not installed; under CI it fails instead.

use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use super::rig::*;
use super::trip::*;
use super::MIB;
use crate::pg::{drop_from_page_cache, pg_bin_or_skip, Cluster};

/// Not pgloop's (54331), pgcost's (54329) nor bench/pg-capture.py's (54333).
const PORT: u16 = 54335;
/// ~160 MB of tables and indexes: ten times shared_buffers, so the backends keep reading.
const SCALE: &str = "10";
const CLIENTS: &str = "4";
const SECONDS: &str = "10";
/// pgloop's settings: small shared_buffers, WAL flushed by fdatasync, no checkpoint during
/// the run, wal_level minimal so that pgbench -i's COPY skips the WAL.
const CONF: &str = "shared_buffers = 16MB\nwal_sync_method = fdatasync\nautovacuum = off\n\
                    checkpoint_timeout = 1h\nmax_wal_size = 4GB\nwal_level = minimal\n\
                    max_wal_senders = 0\n";

#[test]
fn pgbench_round_trip_gives_back_each_stream_within_15_percent() {
    let _alone = alone();
    require!("losetup", "mkfs.ext4", "mount", "umount");
    let Some(bin) = pg_bin_or_skip("workload round-trip test") else {
        return;
    };
    let t0 = Instant::now();
    // under /var/tmp, which the server (run as `postgres`) may enter; declared before `rig`,
    // so that it is removed after the file system is unmounted
    let mnt_dir = tempfile::Builder::new()
        .prefix("iocap-roundtrip-")
        .tempdir_in("/var/tmp")
        .unwrap();
    set_mode(mnt_dir.path(), 0o755);
    let mut rig = Rig::new();
    let mnt = mnt_dir.path().join("mnt");
    rig.ext4("disk", 1024 * MIB, &mnt);
    let root = mnt.join("pg");
    std::fs::create_dir(&root).unwrap();
    // declared after `rig`: dropped (the server stopped) before the file system is unmounted
    let mut pg = Cluster::in_dir(bin, &root, PORT, CONF);
    pg.start();
    pg.run("pgbench", &["-i", "-q", "-s", SCALE]);

    // 1. The recording: TPC-B from a cold page cache, the database's requests only.
    pg.stop();
    let dropped = drop_from_page_cache(&pg.data());
    assert!(dropped > 100, "{dropped} files dropped from the page cache");
    pg.start();
    let recorded_trace = rig.path("pgbench.iotrace");
    let data_dir = pg.data();
    let cap = start_capture(
        &rig,
        &mnt,
        &[data_dir.to_str().unwrap()],
        Some("postgres"),
        &recorded_trace,
    );
    let bench = pg.run(
        "pgbench",
        &["-n", "-c", CLIENTS, "-j", CLIENTS, "-T", SECONDS],
    );
    stop_capture(cap);
    let tps = bench
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|l| l.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no tps in pgbench's output:\n{bench}"));
    // the server stopped: nothing of its own (a checkpoint, the background writer) runs on
    // the device beside the profile
    pg.stop();

    let profile = rig.path("pgbench.toml");
    let recorded = characterise(&rig, &recorded_trace, Some(&profile));
    let toml = std::fs::read_to_string(&profile).unwrap();
    eprintln!(
        "pgbench TPC-B-like, scale {SCALE}, {CLIENTS} clients, {SECONDS} s: {tps:.0} tps; \
         the profile written from its capture:\n{toml}"
    );

    eprintln!(
        "the recording's streams:\n{}",
        Table::new(recorded.clone(), Value::Null).text()
    );
    // The recording is what the issue says a capture with --files shows: the data files' 8 KiB
    // random reads apart from the WAL, a sequential log of durable writes. Its failures are
    // gathered with the round trip's, so that one run shows them all.
    let mut problems = recording_problems(&recorded);

    // What the profile asks of each stream: the recorded rate.
    problems.extend(asked_problems(&recorded, &toml));

    // 2. The profile, on the same file system, recorded.
    let (replayed, run) = run_profile_json(&rig, &mnt, &profile);
    eprintln!("profile run: {}", summary(&run));
    let behind = roles_behind(&run);

    // 3. Stream by stream, the profile run against the recording.
    let table = Table::new(recorded, replayed);
    eprintln!("{}", table.text());
    eprintln!("the round trip took {:.0} s", t0.elapsed().as_secs_f64());
    let roles = table.common_roles();
    assert!(
        roles.iter().any(|r| r == "data") && roles.iter().any(|r| r == "log"),
        "the data and log streams are not in both traces:\n{}",
        table.text()
    );
    let (misses, short) = table.misses_unless_behind(&behind);
    for m in short {
        eprintln!("short of the recording, as the profile run said the stream fell behind: {m}");
    }
    problems.extend(misses.into_iter().map(|m| {
        format!(
            "the profile run misses the recording by more than {:.0} %: {m}",
            TOLERANCE * 100.0
        )
    }));
    assert!(
        problems.is_empty(),
        "{}\n{}",
        problems.join("\n"),
        table.text()
    );
}

/// What is wrong with the recording's streams, in words: the data stream must be mostly 8 KiB
/// reads, the log stream sequential durable writes of 8 to 64 KiB.
fn recording_problems(recorded: &Value) -> Vec<String> {
    let data = stream(recorded, "data").unwrap_or_else(|| panic!("no data stream: {recorded:#}"));
    let log = stream(recorded, "log").unwrap_or_else(|| panic!("no log stream: {recorded:#}"));
    let mut p = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            p.push(format!("recorded: {what}"));
        }
    };
    let read_pct = f(data, "read_pct");
    check(
        read_pct >= 50.0,
        format!("the data stream is {read_pct:.1} % reads, not mostly reads"),
    );
    let size = u64_at(data, "/size_mode_bytes");
    check(
        size == 8192,
        format!("the data stream's commonest size is {size} B, not 8 KiB"),
    );
    // a backend reads one page at a time; the kernel's read-ahead makes some 16-40 KiB reads
    // (pgloop: about 15 %)
    let read_8k = size_pct(data, "read", 8192);
    check(
        read_8k >= 70.0,
        format!("{read_8k:.1} % of the data stream's reads are of 8 KiB, not 70 % or more"),
    );
    let log_reads = f(log, "read_pct");
    check(
        log_reads < 1.0,
        format!("the log stream is {log_reads:.1} % reads"),
    );
    let flushes = u64_at(log, "/flushes");
    check(flushes > 0, "the log stream has no flush".into());
    // each WAL write is followed by its fdatasync's flush: nearly all of its bytes durable
    let written = u64_at(log, "/write_bytes") as f64 / f(log, "busy_s");
    let durable = f(log, "durable_bytes_per_s");
    check(
        durable >= 0.9 * written,
        format!(
            "the log stream made {durable:.0} B/s durable of the {written:.0} B/s it wrote \
             (90 % or more expected)"
        ),
    );
    // each WAL write starts in the page the previous one ended in (it rewrites it whole), so
    // "within 1 MiB of where the previous ended" counts as sequential here, as the profile does
    let seq = f(log, "sequential_pct") + f(log, "near_pct");
    check(
        seq >= 90.0,
        format!("the log stream is {seq:.1} % sequential or near it, not 90 % or more"),
    );
    let size = u64_at(log, "/size_mode_bytes");
    check(
        (8192..=65536).contains(&size),
        format!("the log stream's commonest write is {size} B, not 8-64 KiB"),
    );
    p
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

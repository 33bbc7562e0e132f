//! PostgreSQL in the loop (issue 25, point 3): a cluster of the test's own on an ext4 file
//! system on a loop device of its own, so that the device sees only PostgreSQL's I/O; pgbench
//! `-S` (lookups by primary key) and the default TPC-B-like mix, each captured with `iocap
//! capture`, and the capture checked against PostgreSQL's own counters over the same seconds:
//! the pages it read, its WAL syncs and its WAL bytes. `bench/pg-capture.py` does the same for
//! longer and checks the built-in `postgres` profile against the capture.
//!
//! Skipped with a message where the test cannot run as root with loop devices, or where
//! PostgreSQL 15 or later is not installed; under CI it fails instead.

use std::path::Path;
use std::process::{Command as Std, Stdio};
use std::time::Duration;

use super::rig::*;
use super::MIB;
use crate::pg::{drop_from_page_cache, pg_bin_or_skip, Cluster};

const PORT: u16 = 54331;
const PAGE_BYTES: u64 = 8192;
const SEGMENT_BYTES: u64 = 16 * MIB;
/// ~320 MB of tables and indexes: 20 times shared_buffers, so lookups keep missing it.
const SCALE: &str = "20";
const CLIENTS: &str = "4";
const SECONDS: &str = "10";
/// Small shared_buffers; WAL flushed by fdatasync (pg_stat_wal counts its calls); no
/// checkpoint during a run (WAL segments are neither recycled nor removed, so pg_wal's files
/// at the end hold every WAL byte of the run); wal_level minimal, so that pgbench -i's COPY
/// skips the WAL and takes seconds.
const CONF: &str = "shared_buffers = 16MB\nwal_sync_method = fdatasync\nautovacuum = off\n\
                    checkpoint_timeout = 1h\nmax_wal_size = 4GB\nwal_level = minimal\n\
                    max_wal_senders = 0\n";

#[test]
fn pgbench_captured_on_its_own_loop_device_agrees_with_postgres_counters() {
    let _alone = alone();
    require!("losetup", "mkfs.ext4", "mount", "umount", "filefrag");
    let Some(bin) = pg_bin_or_skip("PostgreSQL-in-the-loop test") else {
        return;
    };
    // the server runs as `postgres`, which must reach the mount point: under /var/tmp, not in
    // the build's scratch directory, whose parents it may not enter; declared before `rig`, so
    // that it is removed after the file system is unmounted
    let mnt_dir = tempfile::Builder::new()
        .prefix("iocap-pgloop-")
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

    let ro = round(&rig, &mnt, &mut pg, "select-only", &["-S"]);
    ro.print("pgbench -S");
    let rw = round(&rig, &mnt, &mut pg, "tpcb", &[]);
    rw.print("pgbench TPC-B-like");

    // Lookups: the tables are 20 times shared_buffers, so PostgreSQL keeps reading pages.
    assert!(ro.pg.blks_read >= 5000, "pgbench -S read only {ro:?}");
    // Each backend reads one 8 KiB page at a time (pread); the kernel's read-ahead turns some
    // of them into 16-40 KiB requests (its large folios), about 15 % on the machine this was
    // written on. Fewer than 70 % single pages would mean sizes recorded wrongly.
    assert!(
        ro.read_8k * 10 >= ro.reads * 7,
        "{} of {} captured reads are of 8 KiB: {ro:?}",
        ro.read_8k,
        ro.reads
    );
    for r in [&ro, &rw] {
        // Every page PostgreSQL misses in shared_buffers is a pread; the page cache, emptied
        // of the database's files before the run and never short of memory here, serves it or
        // reads it from the device once and keeps it. So the device reads what the page cache
        // gained, within 5 % (plus 4 MiB of the file system's own metadata, which is not in any
        // file's pages). Pages that TPC-B appends to its history table enter the cache without
        // a read: there the gain is an upper bound only.
        let slack = r.cache_gain_bytes / 20 + 4 * MIB;
        assert!(
            r.read_bytes <= r.cache_gain_bytes + slack,
            "captured {} B read, but the page cache gained only {} B: {r:?}",
            r.read_bytes,
            r.cache_gain_bytes
        );
        // ... and all of it comes from pages PostgreSQL read: blks_read × 8 KiB, which also
        // counts the page cache's hits, is far above it once the cache is warm; twice it would
        // mean reads counted twice or reads that are not PostgreSQL's.
        assert!(
            r.read_bytes <= 2 * r.pg.blks_read * PAGE_BYTES + 4 * MIB,
            "captured {} B read for {} pages read by PostgreSQL: {r:?}",
            r.read_bytes,
            r.pg.blks_read
        );
        // WAL syncs: with fdatasync each is one flush at the device (ext4 sends a cache flush,
        // or commits its journal with a preflush). Besides them: the fsync of each new WAL
        // segment, and the journal's commits every 5 s; fewer than 97 % would mean flushes
        // lost (the block layer may merge two that are pending at once, rarely).
        let (sync, fl) = (r.pg.wal_sync, r.flushes);
        assert!(
            fl * 100 >= sync * 97 && fl <= sync + sync * 3 / 100 + 2 * r.new_segments + 10,
            "{fl} flushes captured for {sync} WAL syncs: {r:?}"
        );
    }
    assert!(rw.pg.wal_sync >= 300, "TPC-B synced its WAL only {rw:?}");
    // Without writes, nothing enters the page cache but what the device read: the read bytes
    // are at least 95 % of the gain (the capture starts before the gain is first measured).
    assert!(
        ro.read_bytes * 100 >= ro.cache_gain_bytes * 95,
        "pgbench -S: the device read {} B, the page cache gained {} B: {ro:?}",
        ro.read_bytes,
        ro.cache_gain_bytes
    );
    // WAL bytes: every byte the LSN advanced by is written once, and every new segment is
    // first filled with zeros (wal_init_zero), 16 MiB. Each write call also rewrites the
    // partial WAL page it starts in (8 KiB) and the page cache writes whole 4 KiB pages: at
    // most 12 KiB more per write.
    let least = rw.pg.lsn_bytes + rw.new_segments * SEGMENT_BYTES;
    let most = least + rw.pg.wal_write * 12 * 1024 + MIB;
    assert!(
        rw.wal_bytes * 100 >= least * 98 && rw.wal_bytes <= most,
        "{} B written to pg_wal's sectors; expected {least}..{most} B: {rw:?}",
        rw.wal_bytes
    );
}

/// What PostgreSQL counted over a run (deltas).
#[derive(Debug, Default)]
struct Counted {
    blks_read: u64,
    wal_sync: u64,
    wal_write: u64,
    lsn_bytes: u64,
}

/// One pgbench run: PostgreSQL's counters and the capture's figures over the same seconds.
#[derive(Debug, Default)]
struct Round {
    pg: Counted,
    tps: f64,
    reads: u64,
    read_8k: u64,
    read_bytes: u64,
    flushes: u64,
    wal_writes: u64,
    wal_bytes: u64,
    other_writes: u64,
    /// bytes of the database's files that entered the page cache during the run
    cache_gain_bytes: u64,
    /// WAL segment files created during the run
    new_segments: u64,
}

impl Round {
    fn print(&self, what: &str) {
        let p = &self.pg;
        eprintln!(
            "{what}, {CLIENTS} clients, {SECONDS} s, {:.0} tps:\n\
             \x20 reads: PostgreSQL {} pages ({} MiB); captured {} requests ({} of 8 KiB), \
             {} MiB = {:.3} of blks_read x 8 KiB; the page cache gained {} MiB\n\
             \x20 WAL syncs {}, captured flushes {}; new WAL segments {}\n\
             \x20 WAL: LSN +{} B, {} write calls; captured {} writes, {} B to pg_wal's \
             sectors; {} other writes",
            self.tps,
            p.blks_read,
            p.blks_read * PAGE_BYTES / MIB,
            self.reads,
            self.read_8k,
            self.read_bytes / MIB,
            self.read_bytes as f64 / (p.blks_read.max(1) * PAGE_BYTES) as f64,
            self.cache_gain_bytes / MIB,
            p.wal_sync,
            self.flushes,
            self.new_segments,
            p.lsn_bytes,
            p.wal_write,
            self.wal_writes,
            self.wal_bytes,
            self.other_writes,
        );
    }
}

/// Restarts the server with the database's files out of the page cache, captures the device
/// while pgbench runs, and reads PostgreSQL's counters around pgbench.
fn round(rig: &Rig, mnt: &Path, pg: &mut Cluster, name: &str, args: &[&str]) -> Round {
    pg.stop();
    let dropped = drop_from_page_cache(&pg.data());
    assert!(dropped > 100, "{dropped} files dropped from the page cache");
    pg.start();
    let mut client = pg.connect();
    let trace = rig.path(&format!("{name}.iotrace"));
    let cap = Std::new(assert_cmd::cargo::cargo_bin("iocap"))
        .args([
            "capture",
            mnt.to_str().unwrap(),
            "--no-save",
            "--format",
            "json",
        ])
        .arg("-o")
        .arg(&trace)
        .env("XDG_DATA_HOME", crate::data_home())
        .env_remove("IOCAP_DB")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iocap capture starts");
    std::thread::sleep(Duration::from_millis(1500)); // attached
    let segments0 = wal_segments(pg);
    let cached0 = cached_bytes(&pg.data());
    let c0 = counters(&mut client);
    let out = pg.run(
        "pgbench",
        &[&["-n", "-c", CLIENTS, "-j", CLIENTS, "-T", SECONDS], args].concat(),
    );
    // the backends report their statistics as they exit, the walwriter within a second
    std::thread::sleep(Duration::from_millis(1500));
    let c1 = counters(&mut client);
    let cached1 = cached_bytes(&pg.data());
    let extents = wal_extents(pg);
    let segments1 = wal_segments(pg);
    // SAFETY: kill(2) on the child we started, with a valid signal.
    unsafe { libc::kill(cap.id() as i32, libc::SIGINT) };
    let done = cap.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(0), "{}", shown(&done));
    let mut r = captured(rig, &trace, &extents);
    r.pg = Counted {
        blks_read: c1[0] - c0[0],
        wal_sync: c1[1] - c0[1],
        wal_write: c1[2] - c0[2],
        lsn_bytes: c1[3] - c0[3],
    };
    r.tps = out
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no tps in pgbench's output:\n{out}"));
    r.cache_gain_bytes = cached1.saturating_sub(cached0);
    r.new_segments = segments1.saturating_sub(segments0);
    r
}

/// blks_read (all databases), wal_sync, wal_write, and the WAL's position in bytes.
fn counters(c: &mut postgres::Client) -> [u64; 4] {
    let row = c
        .query_one(
            "SELECT (SELECT sum(blks_read) FROM pg_stat_database)::int8, wal_sync, wal_write, \
             (pg_current_wal_lsn() - '0/0'::pg_lsn)::int8 FROM pg_stat_wal",
            &[],
        )
        .unwrap();
    [0, 1, 2, 3].map(|i| row.get::<_, i64>(i) as u64)
}

/// The capture's requests, from its CSV export: reads, flushes, and the writes that landed in
/// `wal` (sector ranges [start, end)) or elsewhere.
fn captured(rig: &Rig, trace: &Path, wal: &[(u64, u64)]) -> Round {
    let csv = trace.with_extension("csv");
    let out = iocap(
        rig.dir.path(),
        &format!("convert --to csv -o {}", csv.display()),
        trace.to_str().unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut r = Round::default();
    for line in text.lines().skip(1) {
        // issue_ns,complete_ns,latency_ns,dev,sector,offset_bytes,bytes,op,flags,pid,comm
        let f: Vec<&str> = line.splitn(11, ',').collect();
        let (sector, bytes): (u64, u64) = (f[4].parse().unwrap(), f[6].parse().unwrap());
        match f[7] {
            "read" => {
                r.reads += 1;
                r.read_bytes += bytes;
                r.read_8k += u64::from(bytes == PAGE_BYTES);
            }
            "flush" => r.flushes += 1,
            "write" if wal.iter().any(|&(a, b)| (a..b).contains(&sector)) => {
                r.wal_writes += 1;
                r.wal_bytes += bytes;
            }
            "write" => r.other_writes += 1,
            _ => {}
        }
    }
    r
}

/// The WAL segment files in pg_wal.
fn wal_segments(pg: &Cluster) -> u64 {
    std::fs::read_dir(pg.data().join("pg_wal"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().len() == 24)
        .count() as u64
}

/// The sector ranges [start, end) of pg_wal's segment files on the device, from filefrag
/// (FIEMAP; `-b512` gives them in 512-byte sectors, the file system being the whole device).
fn wal_extents(pg: &Cluster) -> Vec<(u64, u64)> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(pg.data().join("pg_wal")).unwrap() {
        let path = e.unwrap().path();
        if path.file_name().unwrap().len() != 24 {
            continue;
        }
        let out = must("filefrag", &["-v", "-b512", path.to_str().unwrap()]);
        // " 0:        0..    4095:      20482..     24577:   4096:   ..."
        for line in out.lines() {
            let f: Vec<&str> = line.split(':').map(str::trim).collect();
            let range = |s: &str| -> Option<(u64, u64)> {
                let (a, b) = s.split_once("..")?;
                Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
            };
            if let (Some(_), Some((a, b))) = (
                f.get(1).and_then(|s| range(s)),
                f.get(2).and_then(|s| range(s)),
            ) {
                all.push((a, b + 1));
            }
        }
    }
    assert!(
        !all.is_empty(),
        "filefrag found no extent of pg_wal's files"
    );
    all
}

/// Bytes of the files under `dir` that are in the page cache, the WAL's left out (written,
/// not read).
fn cached_bytes(dir: &Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.ends_with("pg_wal") {
            continue;
        }
        if path.is_dir() {
            n += cached_bytes(&path);
        } else if path.is_file() && path.metadata().unwrap().len() > 0 {
            let (page, resident) = resident_pages(&path);
            n += page * resident.len() as u64;
        }
    }
    n
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

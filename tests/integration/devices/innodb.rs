//! InnoDB in the loop (issue 34): a MariaDB server of the test's own with its data directory
//! on an ext4 file system of its own on a loop device, so that the device sees only the
//! server's I/O (and the file system's); sysbench `oltp_read_only`, then `oltp_read_write`,
//! each from a cold buffer pool, under `iocap capture MNT --files DATADIR`. Each capture is
//! checked against the loop device's own counters (/sys/block/NAME/stat, as /proc/diskstats)
//! and against InnoDB's (`SHOW GLOBAL STATUS` before and after), and the streams a user reads
//! are checked: the redo log (`ib_logfile0`) a stream of sequential durable writes, the data
//! files a stream of 16 KiB page reads. A table of both sides is printed.
//!
//! Then the round trip of issue 33 for `oltp_read_write` (issue 34, item 5), the server
//! stopped: its capture made a profile, the profile run on the same file system under a capture
//! of its own, and the streams compared as in [`super::roundtrip`], each figure within 15 %
//! ([`super::trip`]).
//!
//! The whole device is recorded, not `--comm mariadbd`: every thread of the server is called
//! `mariadbd` to the kernel, but the writes io_uring hands to its workers are issued by them
//! (`iou-wrk-TID`: a doublewrite batch among them), and ext4's journal commits that InnoDB's
//! fsyncs cause are jbd2's. Nothing else uses the device.
//!
//! Where each request fell is read independently of iocap's file map: the extents of the
//! database's files by filefrag (FIEMAP), the doublewrite buffer by its place in the system
//! tablespace (MariaDB keeps it in ibdata1's pages 64 to 191; it has no file of its own).
//!
//! Skipped with a message where the test cannot run as root with loop devices, or where
//! MariaDB or sysbench is not installed; under CI it fails instead.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use super::rig::*;
use super::trip::{
    asked_problems, characterise, f, roles_behind, run_profile_json, size_pct, start_capture,
    summary, Table, TOLERANCE,
};
use super::MIB;
use crate::mariadb::{tools_or_skip, Server};

const PAGE: u64 = 16384;
/// sysbench's tables: 2 x 100,000 rows, 60 MB of tables and indexes, four times the buffer
/// pool, so that the reads keep reaching the device; prepared in about 5 s.
const TABLES: &str = "--tables=2";
const ROWS: &str = "--table-size=100000";
const THREADS: &str = "--threads=4";
const SECONDS: &str = "--time=10";
/// The settings the bounds below assume, the defaults of MariaDB 10.11 where they are named
/// (a page cleaner that writes at most innodb_io_capacity pages a second when idle; O_DIRECT
/// data and redo files; a log flush at every commit; the doublewrite buffer on), a small
/// buffer pool, and no buffer pool dump or load, so that each round starts cold.
const OPTIONS: &[&str] = &[
    "--innodb-buffer-pool-size=16M",
    "--innodb-buffer-pool-load-at-startup=OFF",
    "--innodb-buffer-pool-dump-at-shutdown=OFF",
    "--innodb-flush-method=O_DIRECT",
    "--innodb-flush-log-at-trx-commit=1",
    "--innodb-doublewrite=ON",
    "--innodb-io-capacity=200",
    "--innodb-log-file-size=96M",
];
/// The doublewrite buffer: pages 64 to 191 of the system tablespace, in bytes of ibdata1.
const DBLWR: (u64, u64) = (64 * PAGE, 192 * PAGE);
/// The head of ib_logfile0 (MariaDB 10.8's format): the file header and the two checkpoint
/// blocks, at 4 KiB and 8 KiB; the log's records are written after it.
const LOG_HEADER: u64 = 12 * 1024;

#[test]
fn sysbench_captured_on_its_own_loop_device_agrees_with_innodb_counters() {
    let _alone = alone();
    require!("losetup", "mkfs.ext4", "mount", "umount", "filefrag");
    let Some(tools) = tools_or_skip("InnoDB-in-the-loop test") else {
        return;
    };
    let t0 = Instant::now();
    // socket, pid file and error log: a short path (a socket's is at most 107 bytes), removed
    // after the server is stopped (declared before it)
    let run_dir = tempfile::Builder::new()
        .prefix("iocap-mariadb-")
        .tempdir()
        .unwrap();
    let mut rig = Rig::new();
    let mnt = rig.path("mnt");
    let dev = rig.ext4("disk", 1024 * MIB, &mnt);
    // declared after `rig`: dropped (the server stopped) before the file system is unmounted
    let mut db = Server::install(&tools, &mnt.join("mysql"), run_dir.path(), OPTIONS);
    db.start();
    db.query("CREATE DATABASE sbtest");
    db.sysbench("oltp_read_write", &[TABLES, ROWS, THREADS], "prepare");
    let version = db.query("SELECT VERSION()").trim().to_string();
    let set_up = t0.elapsed();

    let ro = round(&rig, &dev, &mnt, &mut db, "oltp_read_only");
    let rw = round(&rig, &dev, &mnt, &mut db, "oltp_read_write");
    db.stop();
    let (trip, behind, asked) = round_trip(&rig, &mnt, "oltp_read_write");
    eprintln!(
        "MariaDB {version}, sysbench {TABLES} {ROWS} {THREADS} {SECONDS}, \
         innodb_buffer_pool_size 16M, ext4 on {dev}; set up in {:.0} s",
        set_up.as_secs_f64()
    );
    let mut problems = asked;
    for r in [&ro, &rw] {
        let checks = r.checks();
        eprintln!("{}", r.table(&checks));
        problems.extend(
            checks
                .iter()
                .filter(|c| !c.ok)
                .map(|c| format!("{}: {} {}", r.name, c.figure, c.why())),
        );
    }

    // What a user reads in the streams. The data files: InnoDB reads one 16 KiB page at a
    // time (O_DIRECT: no page cache, no kernel read-ahead), a whole extent only when its
    // linear read-ahead is triggered, which lookups do not do.
    let data = stream(&ro.workload, "data");
    let reads_16k = size_pct(data, "read", PAGE);
    let mut check = |ok: bool, what: String| {
        if !ok {
            problems.push(what);
        }
    };
    check(
        f(data, "read_pct") >= 99.0,
        format!(
            "oltp_read_only: the data stream is {:.1} % reads",
            f(data, "read_pct")
        ),
    );
    check(
        u64_at(data, "/size_mode_bytes") == PAGE && reads_16k >= 95.0,
        format!(
            "oltp_read_only: the data stream's commonest size is {} B and {reads_16k:.1} % of \
             its reads are of 16 KiB (95 % or more expected)",
            u64_at(data, "/size_mode_bytes")
        ),
    );
    // The redo log: writes only, each starting 0.5 to 4 KiB before the previous one ended (it
    // writes the last blocks again: "near", within 1 MiB, not "sequential"),
    // except the checkpoint blocks at the file's head (one about every ten writes here, each
    // a jump there and back), and each made durable by the fdatasync of a commit.
    let log = stream(&rw.workload, "log");
    let seq = f(log, "sequential_pct") + f(log, "near_pct");
    check(
        f(log, "read_pct") < 1.0 && u64_at(log, "/writes") > 100,
        format!(
            "oltp_read_write: the log stream has {} writes and is {:.1} % reads",
            u64_at(log, "/writes"),
            f(log, "read_pct")
        ),
    );
    check(
        seq >= 70.0,
        format!(
            "oltp_read_write: the log stream is {seq:.1} % sequential or near it (70 % or \
             more expected)"
        ),
    );
    let written = u64_at(log, "/write_bytes") as f64 / f(log, "busy_s");
    let durable = f(log, "durable_bytes_per_s");
    check(
        u64_at(log, "/flushes") > 0 && durable >= 0.9 * written,
        format!(
            "oltp_read_write: the log stream has {} flushes and made {durable:.0} B/s durable \
             of the {written:.0} B/s it wrote (90 % or more expected)",
            u64_at(log, "/flushes")
        ),
    );
    let size = u64_at(log, "/size_mode_bytes");
    check(
        size % 512 == 0 && (512..=64 * 1024).contains(&size),
        format!(
            "oltp_read_write: the log stream's commonest write is {size} B, not 512 B to \
             64 KiB in 512 B blocks"
        ),
    );
    for r in [&ro, &rw] {
        eprintln!("{}: {}", r.name, streams_text(&r.workload));
    }
    eprintln!("{}", trip.text());
    // a rate the profile run fell short of is set aside only where the run said the stream
    // did not keep it (a busy host); the rate the profile asked of each stream is checked
    // against the recording above, whatever the load
    let (misses, short) = trip.misses_unless_behind(&behind);
    for m in short {
        eprintln!("short of the recording, as the profile run said the stream fell behind: {m}");
    }
    problems.extend(misses.into_iter().map(|m| {
        format!(
            "oltp_read_write's profile run misses the recording by more than {:.0} %: {m}",
            TOLERANCE * 100.0
        )
    }));
    eprintln!(
        "the InnoDB-in-the-loop test took {:.0} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The round trip of issue 33 for the sysbench run `test` (issue 34, item 5), the server
/// stopped: its capture turned into a profile, the profile run on the same file system under a
/// capture of its own, and both traces' streams side by side; with the roles whose tests the
/// profile run said fell behind their rate, and where the profile asks a stream for a rate
/// other than the recorded one.
fn round_trip(rig: &Rig, mnt: &Path, test: &str) -> (Table, Vec<String>, Vec<String>) {
    let profile = rig.path(&format!("{test}.toml"));
    let recorded = characterise(rig, &rig.path(&format!("{test}.iotrace")), Some(&profile));
    let toml = std::fs::read_to_string(&profile).unwrap();
    eprintln!("the profile written from {test}'s capture:\n{toml}");
    let asked = asked_problems(&recorded, &toml);
    let (replayed, run) = run_profile_json(rig, mnt, &profile);
    eprintln!("{test}'s profile run: {}", summary(&run));
    let behind = roles_behind(&run);
    (Table::new(recorded, replayed), behind, asked)
}

/// One sysbench run: the capture's requests, the device's counters and InnoDB's over the same
/// seconds.
struct Round {
    name: &'static str,
    tps: f64,
    /// requests the capture says it lost (`lost_ring_full` + `lost_other`)
    lost: u64,
    /// completions the capture left out as no request (said on its stderr)
    zero_byte: u64,
    cap: Counts,
    disk: [u64; 5],
    /// The same from before the capture started to after it stopped.
    disk_outer: [u64; 5],
    inno: HashMap<String, u64>,
    workload: Value,
}

/// The capture's requests, by where they fell.
#[derive(Debug, Default)]
struct Counts {
    reads: u64,
    read_bytes: u64,
    writes: u64,
    write_bytes: u64,
    flushes: u64,
    /// reads of InnoDB's tablespaces (ibdata1, the .ibd files, ibtmp1, undo)
    inno_reads: u64,
    inno_read_bytes: u64,
    /// writes of InnoDB's tablespaces outside the doublewrite buffer: page writes
    page_writes: u64,
    page_write_bytes: u64,
    /// writes of the doublewrite buffer (ibdata1's pages 64-191): requests, and the write
    /// calls they came from (see [`Calls`])
    dblwr_writes: u64,
    dblwr_calls: Calls,
    dblwr_bytes: u64,
    /// writes of ib_logfile0 after its head (requests and calls), and of its head (checkpoints)
    log_writes: u64,
    log_calls: Calls,
    log_bytes: u64,
    checkpoint_writes: u64,
    /// writes of ext4's journal (by jbd2)
    journal_writes: u64,
}

/// The write calls a run of requests came from. One call can reach the device as several
/// requests, each beginning where the one before it ended and issued while that one is still
/// in flight: the block layer splits a doublewrite batch at the device's largest request, and
/// ext4 splits a redo log write where it crosses from the file's written blocks into those it
/// still holds as unwritten (fallocated), one bio an extent. Whether those bios merge again
/// into one request depends on timing: beside other work, about half of the log's calls
/// reached the loop device as two or three requests (5072 requests for 2563
/// Innodb_log_writes in one CI run), on a quiet machine almost none.
#[derive(Debug, Default)]
struct Calls {
    count: u64,
    /// the last request's end (sector) and completion (ns)
    last: Option<(u64, u64)>,
}

impl Calls {
    fn add(&mut self, sector: u64, bytes: u64, issue_ns: u64, complete_ns: u64) {
        let continues = self
            .last
            .is_some_and(|(end, done)| end == sector && issue_ns < done);
        self.count += u64::from(!continues);
        self.last = Some((sector + bytes / 512, complete_ns));
    }
}

/// Where a sector of the device lies.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Tablespace,
    Doublewrite,
    Log,
    LogHeader,
    OtherFile,
}

/// Restarts the server (a cold buffer pool), captures the device while sysbench runs `test`,
/// and reads the device's and InnoDB's counters around sysbench.
fn round(rig: &Rig, dev: &str, mnt: &Path, db: &mut Server, test: &'static str) -> Round {
    db.stop();
    db.start();
    let trace = rig.path(&format!("{test}.iotrace"));
    let before = diskstats(dev);
    let cap = start_capture(rig, mnt, &[db.datadir().to_str().unwrap()], None, &trace);
    let d0 = diskstats(dev);
    let s0 = db.status();
    let out = db.sysbench(test, &[TABLES, ROWS, THREADS, SECONDS], "run");
    let s1 = db.status();
    // read before the capture is stopped: once stopped, it describes the trace for a second
    // or two, while the server goes on (purging the old row versions: reads and writes)
    let d1 = diskstats(dev);
    // SAFETY: kill(2) on the child we started, with a valid signal.
    unsafe { libc::kill(cap.id() as i32, libc::SIGINT) };
    let done = cap.wait_with_output().unwrap();
    let after = diskstats(dev);
    assert_eq!(done.status.code(), Some(0), "{}", shown(&done));
    let workload = json(&done)["workload"].clone();
    let tps = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("transactions:"))
        .and_then(|l| l.split('(').nth(1)?.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no transactions per second in sysbench's output:\n{out}"));
    let places = places(db.datadir());
    Round {
        name: test,
        tps,
        lost: u64_at(&workload, "/lost_ring_full") + u64_at(&workload, "/lost_other"),
        zero_byte: zero_byte_completions(&stderr(&done)),
        cap: counts(rig, &trace, &places),
        disk: std::array::from_fn(|i| d1[i] - d0[i]),
        disk_outer: std::array::from_fn(|i| after[i] - before[i]),
        inno: s1
            .iter()
            .filter(|(k, _)| k.starts_with("Innodb_"))
            .map(|(k, v)| (k.clone(), v.saturating_sub(*s0.get(k).unwrap_or(&0))))
            .collect(),
        workload,
    }
}

/// Reads, sectors read, writes, sectors written and flushes completed by `dev`, from
/// /sys/block/NAME/stat (the fields of /proc/diskstats).
fn diskstats(dev: &str) -> [u64; 5] {
    let name = Path::new(dev).file_name().unwrap().to_string_lossy();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let f: Vec<u64> = stat
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(
        f.len() >= 17,
        "no flush counts in /sys/block/{name}/stat: {stat}"
    );
    [f[0], f[2], f[4], f[6], f[15]]
}

/// The number in the capture's "N zero-byte completions left out" line, or 0.
fn zero_byte_completions(err: &str) -> u64 {
    err.lines()
        .find_map(|l| {
            let n = l
                .trim()
                .strip_suffix("zero-byte completions left out (not requests): the flush")?;
            n.trim().replace(',', "").parse().ok()
        })
        .unwrap_or(0)
}

/// The device's sectors that the database's files hold, `(start, end, place)` sorted, from
/// filefrag (FIEMAP; `-b512` gives 512-byte sectors, the file system being the whole device).
fn places(datadir: &Path) -> Vec<(u64, u64, Place)> {
    let mut all = Vec::new();
    let mut dirs = vec![datadir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path: PathBuf = e.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let tablespace = name.ends_with(".ibd")
                || name.starts_with("ibdata")
                || name.starts_with("ibtmp")
                || name.starts_with("undo");
            for (logical, physical, len) in extents(&path) {
                // split each extent where the file's own regions begin and end (in sectors)
                let cuts: &[(u64, Place)] = match name.as_str() {
                    "ib_logfile0" => &[(0, Place::LogHeader), (LOG_HEADER / 512, Place::Log)],
                    "ibdata1" => &[
                        (0, Place::Tablespace),
                        (DBLWR.0 / 512, Place::Doublewrite),
                        (DBLWR.1 / 512, Place::Tablespace),
                    ],
                    _ if tablespace => &[(0, Place::Tablespace)],
                    _ => &[(0, Place::OtherFile)],
                };
                for (i, &(from, place)) in cuts.iter().enumerate() {
                    let to = cuts.get(i + 1).map_or(u64::MAX, |c| c.0);
                    let (a, b) = (logical.max(from), (logical + len).min(to));
                    if a < b {
                        all.push((physical + a - logical, physical + b - logical, place));
                    }
                }
            }
        }
    }
    all.sort_by_key(|p| p.0);
    all
}

/// A file's extents, `(logical, physical, length)` in 512-byte sectors.
fn extents(path: &Path) -> Vec<(u64, u64, u64)> {
    let out = must("filefrag", &["-v", "-b512", path.to_str().unwrap()]);
    // " 0:        0..    4095:      20482..     24577:   4096:   ..."
    out.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(':').map(str::trim).collect();
            let range = |s: &str| -> Option<(u64, u64)> {
                let (a, b) = s.split_once("..")?;
                Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
            };
            let (l0, l1) = range(f.get(1)?)?;
            let (p0, _) = range(f.get(2)?)?;
            Some((l0, p0, l1 + 1 - l0))
        })
        .collect()
}

/// The capture's requests from its CSV export, counted by where they fell.
fn counts(rig: &Rig, trace: &Path, places: &[(u64, u64, Place)]) -> Counts {
    let csv = trace.with_extension("csv");
    let out = iocap(
        rig.dir.path(),
        &format!("convert --to csv -o {}", csv.display()),
        trace.to_str().unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let place_of = |sector: u64| {
        let i = places.partition_point(|p| p.0 <= sector);
        (i > 0 && sector < places[i - 1].1).then(|| places[i - 1].2)
    };
    let mut c = Counts::default();
    for line in std::fs::read_to_string(&csv).unwrap().lines().skip(1) {
        // issue_ns,complete_ns,latency_ns,dev,sector,offset_bytes,bytes,op,flags,pid,comm
        let f: Vec<&str> = line.splitn(11, ',').collect();
        let (sector, bytes): (u64, u64) = (f[4].parse().unwrap(), f[6].parse().unwrap());
        let place = place_of(sector);
        match f[7] {
            "read" => {
                c.reads += 1;
                c.read_bytes += bytes;
                if place == Some(Place::Tablespace) || place == Some(Place::Doublewrite) {
                    c.inno_reads += 1;
                    c.inno_read_bytes += bytes;
                }
            }
            "write" => {
                c.writes += 1;
                c.write_bytes += bytes;
                // a write still in flight when the capture stopped has no completion: it
                // stays open to the end, so a write that follows it on the disk continues it
                let issued = f[0].parse().unwrap();
                let done = f[1].parse().unwrap_or(u64::MAX);
                let (n, b) = match place {
                    Some(Place::Tablespace) => (&mut c.page_writes, &mut c.page_write_bytes),
                    Some(Place::Doublewrite) => {
                        c.dblwr_calls.add(sector, bytes, issued, done);
                        (&mut c.dblwr_writes, &mut c.dblwr_bytes)
                    }
                    Some(Place::Log) => {
                        c.log_calls.add(sector, bytes, issued, done);
                        (&mut c.log_writes, &mut c.log_bytes)
                    }
                    Some(Place::LogHeader) => {
                        c.checkpoint_writes += 1;
                        continue;
                    }
                    _ => {
                        c.journal_writes += u64::from(f[10].starts_with("jbd2"));
                        continue;
                    }
                };
                *n += 1;
                *b += bytes;
            }
            "flush" => c.flushes += 1,
            _ => {}
        }
    }
    c
}

/// One figure of the capture held against a counter: `ok` when `lo <= capture <= hi`.
struct Check {
    figure: &'static str,
    capture: u64,
    counter: String,
    counted: u64,
    lo: u64,
    hi: u64,
    ok: bool,
}

impl Check {
    fn new(
        figure: &'static str,
        capture: u64,
        counter: &str,
        counted: u64,
        lo: f64,
        hi: f64,
    ) -> Check {
        let (lo, hi) = (lo.max(0.0).floor() as u64, hi.ceil() as u64);
        Check {
            figure,
            capture,
            counter: counter.to_string(),
            counted,
            lo,
            hi,
            ok: (lo..=hi).contains(&capture),
        }
    }

    fn why(&self) -> String {
        format!(
            "captured {}, {} {}: outside {}..={}",
            self.capture, self.counter, self.counted, self.lo, self.hi
        )
    }
}

impl Round {
    fn inno(&self, key: &str) -> u64 {
        *self.inno.get(key).unwrap_or(&0)
    }

    /// Every figure of the capture against the device's counters and InnoDB's, with its bound.
    fn checks(&self) -> Vec<Check> {
        let (c, d, o) = (&self.cap, &self.disk, &self.disk_outer);
        let lost = self.lost as f64;
        let mut v = Vec::new();
        // Against the device: the same requests, counted at their completion by the block
        // layer, read while the capture ran (inner) and before it started and after it
        // stopped (outer). The capture holds at least the inner interval's requests, less
        // those it says it lost (on a loop device the kernel skips a program run when the disk
        // under the backing file completes its own request in the same interrupt; about 0.4 %
        // here), and at most the outer's: the server's background threads go on between
        // (purging, reading and writing: busy round 4 of issue 36 captured 32,957 reads
        // against the inner 32,598). Within 1 %, with a floor of 20 requests or 1 MiB.
        let near = |x: u64, y: u64, floor: f64| (x as f64 * 0.99 - floor, y as f64 * 1.01 + floor);
        for (figure, capture, counted, outer, floor) in [
            ("reads", c.reads, d[0], o[0], 20.0),
            (
                "bytes read",
                c.read_bytes,
                d[1] * 512,
                o[1] * 512,
                MIB as f64,
            ),
            (
                "bytes written",
                c.write_bytes,
                d[3] * 512,
                o[3] * 512,
                MIB as f64,
            ),
            ("flushes", c.flushes, d[4], o[4], 20.0),
        ] {
            let (lo, hi) = near(counted, outer, floor);
            v.push(Check::new(figure, capture, "diskstats", counted, lo, hi));
        }
        // Write requests: the device also counts as a write each fsync's empty preflush
        // write, which the flush machinery ends without sending it to the driver; the capture
        // leaves it out as a zero-byte completion, not a request. Among the zero-byte
        // completions are also the second ends of ext4's journal commit blocks (a write with
        // preflush and FUA, ended once more after its flushes), which the device counts once,
        // with their data: up to one a journal write (measured: 0.98 to 1.03 of them).
        let (lo, hi) = near(d[2], o[2], 20.0);
        v.push(Check::new(
            "writes + zero-byte",
            c.writes + self.zero_byte,
            "diskstats",
            d[2],
            lo,
            hi + c.journal_writes as f64,
        ));
        // Against InnoDB. Its data files and redo log are opened O_DIRECT: every call is a
        // request of the device (no page cache between, no kernel read-ahead, no write-back),
        // so InnoDB's counts and the capture's agree within 1 %, less what the capture lost,
        // and more what the server did between the capture's start and the first SHOW GLOBAL
        // STATUS and between the last and the capture's end: at most a page cleaner's batch
        // (innodb_io_capacity, 200 pages a second, when idle; 256 pages here) and its
        // doublewrite and fsyncs.
        let slack_pages = 256.0;
        let page = PAGE as f64;
        // Reads: in bytes, since two adjacent pages read at once (read-ahead, a scan's next
        // page) may reach the device as one request; as requests, at most 3 % fewer.
        let (rb, rn) = (
            self.inno("Innodb_data_read"),
            self.inno("Innodb_data_reads"),
        );
        v.push(Check::new(
            "InnoDB bytes read",
            c.inno_read_bytes,
            "Innodb_data_read",
            rb,
            rb as f64 * 0.99 - lost * page - slack_pages * page,
            rb as f64 * 1.01 + slack_pages * page,
        ));
        v.push(Check::new(
            "InnoDB reads",
            c.inno_reads,
            "Innodb_data_reads",
            rn,
            rn as f64 * 0.97 - lost - slack_pages,
            rn as f64 * 1.01 + slack_pages,
        ));
        // Writes: Innodb_data_writes counts each page written in place and each doublewrite
        // batch (one call of up to 128 pages, 2 MiB, which the block layer splits into
        // requests of the device's largest size: 512 KiB here), so the page writes are
        // Innodb_data_writes less Innodb_dblwr_writes, each one 16 KiB request.
        let pages = self
            .inno("Innodb_data_writes")
            .saturating_sub(self.inno("Innodb_dblwr_writes"));
        v.push(Check::new(
            "page writes",
            c.page_writes,
            "Innodb_data_writes - Innodb_dblwr_writes",
            pages,
            pages as f64 * 0.99 - lost - slack_pages,
            pages as f64 * 1.01 + slack_pages,
        ));
        let written = self.inno("Innodb_data_written");
        v.push(Check::new(
            "bytes to tablespaces",
            c.page_write_bytes + c.dblwr_bytes,
            "Innodb_data_written",
            written,
            written as f64 * 0.99 - (lost + 2.0 * slack_pages) * page,
            written as f64 * 1.01 + 2.0 * slack_pages * page,
        ));
        // The doublewrite buffer: every page the page cleaner writes in place it first writes
        // there, in ibdata1's pages 64-191, so its bytes are Innodb_dblwr_pages_written pages;
        // each batch is at least one request.
        let dp = self.inno("Innodb_dblwr_pages_written");
        v.push(Check::new(
            "doublewrite bytes",
            c.dblwr_bytes,
            "Innodb_dblwr_pages_written x 16 KiB",
            dp * PAGE,
            (dp as f64 * 0.99 - lost - slack_pages) * page,
            (dp as f64 * 1.01 + slack_pages) * page,
        ));
        let dw = self.inno("Innodb_dblwr_writes");
        v.push(Check::new(
            "doublewrite requests",
            c.dblwr_writes,
            "Innodb_dblwr_writes",
            dw,
            dw as f64 * 0.99 - lost,
            f64::MAX,
        ));
        v.push(Check::new(
            "doublewrite calls",
            c.dblwr_calls.count,
            "Innodb_dblwr_writes",
            dw,
            dw as f64 * 0.99 - lost,
            dw as f64 * 1.01 + 2.0,
        ));
        // The redo log: one write call is one request or a few back to back (see `Calls`;
        // the checkpoints, written to the file's head, are not counted by Innodb_log_writes
        // and are left out here); each write begins 0.5 to 4 KiB before the previous one
        // ended (measured), writing its last blocks again, and pads its end to 512 B, so the
        // bytes are Innodb_os_log_written plus up to 4.5 KiB a write.
        let lw = self.inno("Innodb_log_writes");
        v.push(Check::new(
            "log requests",
            c.log_writes,
            "Innodb_log_writes",
            lw,
            lw as f64 * 0.99 - lost - 20.0,
            f64::MAX,
        ));
        v.push(Check::new(
            "log write calls",
            c.log_calls.count,
            "Innodb_log_writes",
            lw,
            lw as f64 * 0.99 - lost - 20.0,
            lw as f64 * 1.01 + 20.0,
        ));
        let lb = self.inno("Innodb_os_log_written");
        v.push(Check::new(
            "log bytes",
            c.log_bytes,
            "Innodb_os_log_written",
            lb,
            lb as f64 * 0.99 - lost * 4608.0,
            lb as f64 * 1.01 + (lw as f64 + 20.0) * 4608.0,
        ));
        // Flushes: every fsync InnoDB counts (Innodb_data_fsyncs: the data files' and, since
        // MariaDB 10.8, the redo log's fdatasyncs) is a flush of the device: a bare one, or,
        // where ext4 must commit its journal (a file's new size, an extent first written),
        // the flushes around the journal's commit block (the loop device has no FUA, so a
        // flush before it and one after; the journal's own commits every 5 s have both). So
        // at least the fsyncs (less 3 %: two fsyncs at once may share one flush) and at most
        // the fsyncs plus two per journal commit, each of which writes at least one block of
        // the journal (measured: 0.8 to 1 flush more than the fsyncs per journal write).
        let fs = self.inno("Innodb_data_fsyncs");
        v.push(Check::new(
            "flushes",
            c.flushes,
            "Innodb_data_fsyncs",
            fs,
            fs as f64 * 0.97 - lost - 10.0,
            fs as f64 * 1.01 + 2.0 * c.journal_writes as f64 + 20.0,
        ));
        // MySQL and MariaDB before 10.8 count the log's fsyncs apart: they are flushes too.
        if let Some(&lf) = self.inno.get("Innodb_os_log_fsyncs") {
            v.push(Check::new(
                "log flushes",
                c.flushes,
                "Innodb_os_log_fsyncs",
                lf,
                lf as f64 * 0.97 - lost - 10.0,
                f64::MAX,
            ));
        }
        v
    }

    /// Both sides, figure by figure.
    fn table(&self, checks: &[Check]) -> String {
        let mut t = format!(
            "{}, {:.0} tps: {} requests lost by the capture, {} zero-byte completions left out; \
             {} checkpoint writes to ib_logfile0's head, {} journal writes\n\
             {:<22} {:>12} {:>12}  {:<38} {:>7}  {}\n",
            self.name,
            self.tps,
            self.lost,
            self.zero_byte,
            self.cap.checkpoint_writes,
            self.cap.journal_writes,
            "figure",
            "capture",
            "counted",
            "by",
            "ratio",
            "bound"
        );
        for c in checks {
            let ratio = if c.counted > 0 {
                format!("{:.4}", c.capture as f64 / c.counted as f64)
            } else {
                "-".into()
            };
            let hi = if c.hi == u64::MAX {
                "..".to_string()
            } else {
                format!("..={}", c.hi)
            };
            t += &format!(
                "{:<22} {:>12} {:>12}  {:<38} {ratio:>7}  {}{hi}{}\n",
                c.figure,
                c.capture,
                c.counted,
                c.counter,
                c.lo,
                if c.ok { "" } else { "  OUT" }
            );
        }
        if !self.inno.contains_key("Innodb_os_log_fsyncs") {
            t += "Innodb_os_log_fsyncs: not counted by this server (MariaDB 10.8 and later count \
                  the redo log's fsyncs in Innodb_data_fsyncs)\n";
        }
        t
    }
}

/// The stream of `role` in a workload.
fn stream<'a>(w: &'a Value, role: &str) -> &'a Value {
    w["streams"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["role"].as_str() == Some(role))
        .unwrap_or_else(|| panic!("no {role} stream: {:#}", w["streams"]))
}

/// The streams, a line each.
fn streams_text(w: &Value) -> String {
    w["streams"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            format!(
                "\n  {:<10} {:>6} reads {:>6} writes {:>5} flushes; {:>7.0} IOPS over {:.1} busy \
                 s, depth {:.2}, {:.0} % reads, commonest {} B, {:.0} % sequential, {:.0} % \
                 near, {:.0} flushes/s, {:.0} durable B/s",
                s["role"].as_str().unwrap_or("?"),
                s["reads"].as_u64().unwrap_or(0),
                s["writes"].as_u64().unwrap_or(0),
                s["flushes"].as_u64().unwrap_or(0),
                s["iops"].as_f64().unwrap_or(0.0),
                s["busy_s"].as_f64().unwrap_or(0.0),
                s["depth_mean"].as_f64().unwrap_or(0.0),
                s["read_pct"].as_f64().unwrap_or(0.0),
                s["size_mode_bytes"].as_u64().unwrap_or(0),
                s["sequential_pct"].as_f64().unwrap_or(0.0),
                s["near_pct"].as_f64().unwrap_or(0.0),
                s["flushes_per_s"].as_f64().unwrap_or(0.0),
                s["durable_bytes_per_s"].as_f64().unwrap_or(0.0),
            )
        })
        .collect()
}

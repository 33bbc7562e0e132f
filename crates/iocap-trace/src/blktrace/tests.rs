//! blktrace files built byte by byte from the layout in the module doc (blktrace cannot run
//! here: its ioctl is refused), read back as records.

use std::path::{Path, PathBuf};

use super::*;
use crate::record::{IoFlags, Op};

const TC_READ: u64 = 1 << 0;
const TC_QUEUE: u64 = 1 << 4;
const TC_REQUEUE: u64 = 1 << 5;
const TC_ISSUE: u64 = 1 << 6;
const TC_COMPLETE: u64 = 1 << 7;
const TC_FS: u64 = 1 << 8;
const TA_QUEUE: u64 = 1;
const TA_BACKMERGE: u64 = 2;
/// 8:0, as the kernel's dev_t.
const SDA: u32 = 8 << 20;

/// One per-CPU file being built.
struct Fixture {
    big_endian: bool,
    version: u8,
    bytes: Vec<u8>,
    seq: u32,
}

impl Fixture {
    fn new(big_endian: bool, version: u8) -> Fixture {
        Fixture {
            big_endian,
            version,
            bytes: Vec::new(),
            seq: 0,
        }
    }

    fn put(&mut self, v: u64, len: usize) {
        let b = v.to_be_bytes();
        let mut field = b[8 - len..].to_vec();
        if !self.big_endian {
            field.reverse();
        }
        self.bytes.extend_from_slice(&field);
    }

    #[allow(clippy::too_many_arguments)]
    fn event(&mut self, t: u64, sector: u64, bytes: u32, action: u64, pid: u32, pdu: &[u8]) {
        self.seq += 1;
        self.put(u64::from(MAGIC | u32::from(self.version)), 4);
        self.put(u64::from(self.seq), 4);
        self.put(t, 8);
        self.put(sector, 8);
        self.put(u64::from(bytes), 4);
        if self.version == 8 {
            self.put(u64::from(pid), 4);
            self.put(action, 8);
        } else {
            self.put(action, 4);
            self.put(u64::from(pid), 4);
        }
        self.put(u64::from(SDA), 4);
        self.put(0, 4); // cpu
        self.put(0, 2); // error
        self.put(pdu.len() as u64, 2);
        if self.version == 8 {
            self.bytes.extend_from_slice(&[0; 12]);
        }
        self.bytes.extend_from_slice(pdu);
    }

    fn issue(&mut self, t: u64, sector: u64, bytes: u32, cats: u64, pid: u32) -> &mut Self {
        let action = TA_ISSUE | (TC_ISSUE | TC_FS | cats) << 16;
        self.event(t, sector, bytes, action, pid, &[]);
        self
    }

    fn complete(&mut self, t: u64, sector: u64, bytes: u32, cats: u64) -> &mut Self {
        let action = TA_COMPLETE | (TC_COMPLETE | TC_FS | cats) << 16;
        self.event(t, sector, bytes, action, 0, &[]);
        self
    }

    fn complete_with_error(&mut self, t: u64, sector: u64, bytes: u32, errno: i16) -> &mut Self {
        self.complete(t, sector, bytes, TC_READ);
        let at = self.bytes.len() - 4;
        let e = if self.big_endian {
            errno.to_be_bytes()
        } else {
            errno.to_le_bytes()
        };
        self.bytes[at..at + 2].copy_from_slice(&e);
        self
    }

    fn queue(&mut self, t: u64, sector: u64, bytes: u32, merge: bool) -> &mut Self {
        let act = if merge { TA_BACKMERGE } else { TA_QUEUE };
        self.event(t, sector, bytes, act | (TC_QUEUE | TC_WRITE) << 16, 1, &[]);
        self
    }

    fn requeue(&mut self, t: u64, sector: u64, bytes: u32) -> &mut Self {
        let action = TA_REQUEUE | (TC_REQUEUE | TC_READ) << 16;
        self.event(t, sector, bytes, action, 0, &[]);
        self
    }

    /// `BLK_TN_PROCESS`: the pid's name, 16 bytes, after a cgroup id when `cgroup`.
    fn process(&mut self, t: u64, pid: u32, name: &str, cgroup: bool) -> &mut Self {
        let mut pdu = Vec::new();
        if cgroup {
            pdu.extend_from_slice(&42u64.to_le_bytes());
        }
        pdu.extend_from_slice(&IoRecord::comm_from(name));
        let cg = if cgroup { TA_CGROUP } else { 0 };
        self.event(t, 0, 0, TN_PROCESS | cg | TC_NOTIFY << 16, pid, &pdu);
        self
    }

    /// `BLK_TN_TIMESTAMP`: the wall clock (seconds, ns) as two u32.
    fn wall_clock(&mut self, t: u64, secs: u32, nanos: u32) -> &mut Self {
        let mut pdu = Vec::new();
        for w in [secs, nanos] {
            let b = if self.big_endian {
                w.to_be_bytes()
            } else {
                w.to_le_bytes()
            };
            pdu.extend_from_slice(&b);
        }
        self.event(t, 0, 0, TN_TIMESTAMP | TC_NOTIFY << 16, 0, &pdu);
        self
    }

    fn write(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, &self.bytes).unwrap();
        path
    }
}

fn read(paths: &[PathBuf]) -> (Vec<IoRecord>, Option<String>) {
    let mut recs = Vec::new();
    let mut err = None;
    for r in BlktraceReader::open(paths).unwrap() {
        match r {
            Ok(r) => recs.push(r),
            Err(e) => err = Some(e.to_string()),
        }
    }
    (recs, err)
}

/// Two CPUs: a write whose bios were merged (Q, M) then issued as one request on CPU 0 and
/// completed on CPU 1; a read and a flush issued on CPU 1.
fn two_cpus(big_endian: bool, version: u8) -> (Fixture, Fixture) {
    let mut cpu0 = Fixture::new(big_endian, version);
    cpu0.wall_clock(1000, 1_795_644_372, 500_000_000)
        .process(1000, 100, "postgres", false)
        .queue(1100, 100, 4096, false)
        .queue(1200, 108, 4096, true)
        .issue(1500, 100, 8192, TC_WRITE | TC_SYNC, 100)
        .complete(3000, 0, 0, TC_FLUSH);
    let mut cpu1 = Fixture::new(big_endian, version);
    cpu1.process(1300, 200, "kworker/0:1H", true)
        .issue(1600, 5000, 4096, TC_READ | TC_AHEAD, 200)
        .issue(1700, 0, 0, TC_FLUSH, 200)
        .complete(2000, 5000, 4096, TC_READ)
        .complete(2500, 100, 8192, TC_WRITE | TC_SYNC);
    (cpu0, cpu1)
}

#[test]
fn per_cpu_files_merge_in_time_order_after_merges() {
    let dir = tempfile::tempdir().unwrap();
    let (cpu0, cpu1) = two_cpus(false, 7);
    let paths = [
        cpu0.write(dir.path(), "sda.blktrace.0"),
        cpu1.write(dir.path(), "sda.blktrace.1"),
    ];
    let reader = BlktraceReader::open(&paths).unwrap();
    let meta = reader.meta().clone();
    assert_eq!(meta.started_at, "2026-11-25T22:06:12Z");
    assert_eq!(meta.target, "sda");
    assert_eq!(meta.devices[0].dev.to_string(), "8:0");
    let (recs, err) = read(&paths);
    assert_eq!(err, None);
    let got: Vec<_> = recs
        .iter()
        .map(|r| {
            (
                r.issue_ns,
                r.complete_ns,
                r.sector,
                r.bytes,
                r.op,
                r.comm_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (500, Some(1500), 100, 8192, Op::Write, "postgres".into()),
            (600, Some(1000), 5000, 4096, Op::Read, "kworker/0:1H".into()),
            (700, Some(2000), 0, 0, Op::Flush, "kworker/0:1H".into()),
        ]
    );
    assert_eq!(recs[0].flags, IoFlags(IoFlags::SYNC));
    assert_eq!(recs[1].flags, IoFlags(IoFlags::AHEAD));
    assert_eq!((recs[0].pid, recs[0].dev.major), (100, 8));
}

#[test]
fn big_endian_and_version_8_files_read_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = Vec::new();
    for (i, (be, v)) in [(false, 7), (true, 7), (false, 8), (true, 8)]
        .into_iter()
        .enumerate()
    {
        let (cpu0, cpu1) = two_cpus(be, v);
        let paths = [
            cpu0.write(dir.path(), &format!("d{i}.blktrace.0")),
            cpu1.write(dir.path(), &format!("d{i}.blktrace.1")),
        ];
        let (recs, err) = read(&paths);
        assert_eq!(err, None);
        assert_eq!(recs.len(), 3);
        all.push(recs);
    }
    assert!(all.iter().all(|r| *r == all[0]));
}

#[test]
fn flushes_pair_in_order_and_fua_discard_errors_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = Fixture::new(false, 7);
    f.issue(0, 0, 0, TC_FLUSH, 1)
        .issue(10, 0, 0, TC_FLUSH, 1)
        .issue(20, 64, 4096, TC_WRITE | TC_FUA | TC_SYNC, 1)
        .issue(30, 128, 4096, TC_WRITE | TC_FLUSH, 1)
        .issue(40, 256, 1 << 20, TC_WRITE | TC_DISCARD, 1)
        .issue(50, 999, 4096, TC_READ, 1)
        .issue(60, 512, 4096, TC_READ | TC_META, 1)
        .complete(100, 0, 0, TC_FLUSH)
        .complete(110, 64, 4096, TC_WRITE | TC_FUA | TC_SYNC)
        .complete(120, 0, 0, TC_FLUSH)
        .complete(130, 128, 4096, TC_WRITE | TC_FLUSH)
        .complete(140, 256, 1 << 20, TC_WRITE | TC_DISCARD)
        .complete_with_error(150, 512, 4096, -5)
        .complete(160, 7777, 4096, TC_READ);
    let (recs, err) = read(&[f.write(dir.path(), "sda.blktrace.0")]);
    assert_eq!(err, None);
    let got: Vec<_> = recs
        .iter()
        .map(|r| (r.op, r.flags.0, r.complete_ns))
        .collect();
    assert_eq!(
        got,
        [
            (Op::Flush, 0, Some(100)),
            (Op::Flush, 0, Some(120)),
            (Op::Write, IoFlags::FUA | IoFlags::SYNC, Some(110)),
            (Op::Write, IoFlags::PREFLUSH, Some(130)),
            (Op::Discard, 0, Some(140)),
            (Op::Read, 0, None), // never completed within the trace
            (Op::Read, IoFlags::META, Some(150)),
        ]
    );
    assert_eq!(recs[6].error, -5);
}

#[test]
fn a_requeued_request_keeps_its_last_issue() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = Fixture::new(false, 7);
    f.issue(0, 8, 4096, TC_READ, 1)
        .requeue(5, 8, 4096)
        .issue(20, 8, 4096, TC_READ, 1)
        .complete(50, 8, 4096, TC_READ);
    let (recs, _) = read(&[f.write(dir.path(), "sda.blktrace.0")]);
    assert_eq!(recs.len(), 1);
    assert_eq!((recs[0].issue_ns, recs[0].complete_ns), (20, Some(50)));
}

#[test]
fn a_truncated_last_event_names_its_offset_and_keeps_the_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = Fixture::new(false, 7);
    for i in 0..3 {
        f.issue(i * 100, i * 8, 4096, TC_READ, 1);
        f.complete(i * 100 + 50, i * 8, 4096, TC_READ);
    }
    let mut other = Fixture::new(false, 7);
    other
        .issue(1000, 4096, 512, TC_WRITE, 2)
        .complete(1100, 4096, 512, TC_WRITE);
    f.issue(400, 64, 4096, TC_READ, 1);
    f.bytes.truncate(6 * 48 + 20);
    let paths = [
        f.write(dir.path(), "sda.blktrace.0"),
        other.write(dir.path(), "sda.blktrace.1"),
    ];
    let (recs, err) = read(&paths);
    // the other CPU's file is read to its end; the error comes last
    assert_eq!(recs.len(), 4);
    assert_eq!(recs[3].issue_ns, 1000);
    let e = err.unwrap();
    assert!(
        e.ends_with(
            "sda.blktrace.0: event at byte 288 is truncated (expected 48 bytes, 20 left); \
             the 4 records before it are read"
        ),
        "{e}"
    );
    // a payload cut short, and a file of something else
    let mut g = Fixture::new(true, 7);
    g.process(0, 7, "postgres", false);
    g.bytes.truncate(48 + 9);
    let (_, err) = read(&[g.write(dir.path(), "sdb.blktrace.0")]);
    assert!(err
        .unwrap()
        .contains("event at byte 0 is truncated (expected 64 bytes, 57 left)"));
    let mut h = Fixture::new(false, 7);
    h.issue(0, 8, 4096, TC_READ, 1);
    h.bytes
        .extend_from_slice(b"garbage, not an event......................................");
    let (recs, err) = read(&[h.write(dir.path(), "sdc.blktrace.0")]);
    assert_eq!(recs.len(), 1);
    assert!(err
        .unwrap()
        .contains(r#"event at byte 48 is corrupt (it starts with "garb""#));
}

#[test]
fn a_base_name_opens_every_cpus_file_as_blkparse_does() {
    let dir = tempfile::tempdir().unwrap();
    let (cpu0, cpu1) = two_cpus(false, 7);
    cpu0.write(dir.path(), "sda.blktrace.0");
    cpu1.write(dir.path(), "sda.blktrace.1");
    Fixture::new(false, 7).write(dir.path(), "sda.blktrace.2"); // an idle CPU: empty
    std::fs::write(dir.path().join("sda.blktrace.x"), b"not a cpu").unwrap();
    for base in ["sda", "sda.blktrace."] {
        let mut t = crate::open_trace(&[dir.path().join(base)]).unwrap();
        assert_eq!(t.format(), TraceFormat::Blktrace);
        assert_eq!(t.by_ref().map(Result::unwrap).count(), 3);
    }
    // one CPU's file named alone stands for all of them, not for a third of the requests
    let mut t = crate::open_trace(&[dir.path().join("sda.blktrace.1")]).unwrap();
    assert_eq!(t.by_ref().map(Result::unwrap).count(), 3);
    let files = per_cpu_files(&dir.path().join("sda")).unwrap();
    assert_eq!(files.len(), 3);
    let t = crate::open_trace(&files[..2]).unwrap();
    assert_eq!(t.count(), 3);
    // what a command reading them must not write over: every file it reads, by any naming
    for named in [
        &["sda"][..],
        &["sda.blktrace.1"],
        &["sda.blktrace.0", "sda.blktrace.2"],
    ] {
        let paths: Vec<PathBuf> = named.iter().map(|n| dir.path().join(n)).collect();
        let read = crate::trace_files(&paths).unwrap();
        let want = if named.len() == 2 {
            paths
        } else {
            files.clone()
        };
        assert_eq!(read, want, "{named:?}");
    }
}

#[test]
fn an_issue_open_past_the_window_is_let_out_without_completion() {
    let mut p = pair::Pairer::new(0);
    p.window = 2;
    let ev = |t: u64, sector: u64, action: u64| event::RawEvent {
        time_ns: t,
        sector,
        bytes: 4096,
        action: action | (TC_READ | TC_ISSUE | TC_COMPLETE) << 16,
        pid: 1,
        device: SDA,
        error: 0,
    };
    p.feed(&ev(0, 8, TA_ISSUE), &[]);
    for i in 1..=3 {
        p.feed(&ev(i, 100 + i * 8, TA_ISSUE), &[]);
        p.feed(&ev(i, 100 + i * 8, TA_COMPLETE), &[]);
    }
    let first = p.pop(false).unwrap();
    assert_eq!((first.sector, first.complete_ns), (8, None));
    // its completion, now late, matches nothing
    p.feed(&ev(9, 8, TA_COMPLETE), &[]);
    assert_eq!(p.unmatched, 1);
    assert_eq!(std::iter::from_fn(|| p.pop(false)).count(), 3);
}

//! The trace file on constructed records: round trips at the extremes, truncation at every
//! byte, damage, an existing file, and the size of a realistic stream.

use std::path::Path;

use super::*;
use crate::error::TraceError;
use crate::meta::{source, LostCounts, TraceMeta};
use crate::record::{DevId, IoFlags, IoRecord, Op};

pub(crate) fn rec(issue_ns: u64, sector: u64, bytes: u32, op: Op) -> IoRecord {
    IoRecord {
        issue_ns,
        complete_ns: Some(issue_ns.wrapping_add(80_000)),
        dev: DevId {
            major: 259,
            minor: 0,
        },
        sector,
        bytes,
        op,
        flags: IoFlags(0),
        error: 0,
        pid: 4242,
        comm: IoRecord::comm_from("postgres"),
    }
}

fn meta() -> TraceMeta {
    TraceMeta {
        source: source::CAPTURE.into(),
        started_at: "2026-11-26T10:00:00Z".into(),
        host: "db1".into(),
        target: "/dev/nvme0n1".into(),
        ..TraceMeta::default()
    }
}

/// Records that stress every field: extremes, out-of-order times, changing names and devices.
fn awkward() -> Vec<IoRecord> {
    let mut v = vec![
        rec(0, 0, 4096, Op::Read),
        rec(1000, 1 << 48, 8192, Op::Write),
        rec(900, (1 << 48) + 16, 0, Op::Flush),
        rec(u64::MAX - 5, u64::MAX, u32::MAX, Op::Discard),
        rec(5, 7, 1, Op::Other),
        rec(6, 8, 512, Op::WriteZeroes),
    ];
    v[0].complete_ns = None;
    v[1].flags = IoFlags(IoFlags::FUA | IoFlags::PREFLUSH | IoFlags::SYNC);
    v[1].comm = IoRecord::comm_from("kworker/u8:2");
    v[2].complete_ns = Some(u64::MAX);
    v[2].error = -5;
    v[3].complete_ns = Some(0);
    v[3].pid = u32::MAX;
    v[3].error = i32::MIN;
    v[3].comm = [0xff; 16];
    v[4].dev = DevId {
        major: u32::MAX,
        minor: 0xfffff,
    };
    v[4].comm = [0; 16];
    v[5].flags = IoFlags(0xff);
    v[5].comm = *b"a\0b\0\0\0\0\0\0\0\0\0\0\0\0\0";
    v
}

fn write(path: &Path, chunks: &[&[IoRecord]], finish: bool) {
    let mut w = TraceWriter::create_new(path, &meta()).unwrap();
    for (i, c) in chunks.iter().enumerate() {
        for r in *c {
            w.push(r).unwrap();
        }
        w.set_lost(i as u64 + 1, 2 * i as u64);
        w.flush_chunk().unwrap();
    }
    if finish {
        w.set_duration_ns(5_000_000_000);
        let s = w.finish().unwrap();
        assert_eq!(s.chunks, chunks.len() as u64);
        assert_eq!(s.file_bytes, std::fs::metadata(path).unwrap().len());
    } else {
        std::mem::forget(w); // as if killed: no trailer, nothing more written
    }
}

fn read_all(path: &Path) -> (Vec<IoRecord>, Option<TraceError>) {
    let mut recs = Vec::new();
    let mut err = None;
    for r in TraceReader::open(path).unwrap() {
        match r {
            Ok(r) => recs.push(r),
            Err(e) => {
                assert!(err.is_none(), "a second error after {err:?}");
                err = Some(e);
            }
        }
    }
    (recs, err)
}

#[test]
fn extreme_records_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.iocap");
    let recs = awkward();
    write(&path, &[&recs[..3], &recs[3..]], true);
    let mut r = TraceReader::open(&path).unwrap();
    assert_eq!(r.meta().host, "db1");
    assert!(!r.complete());
    let back: Vec<IoRecord> = r.by_ref().map(Result::unwrap).collect();
    assert_eq!(back, recs);
    assert!(r.complete());
    assert_eq!(
        r.lost(),
        LostCounts {
            ring_full: 2,
            other: 2
        }
    );
    assert_eq!(r.meta().duration_s, Some(5.0));
}

#[test]
fn a_killed_capture_reads_every_whole_chunk_and_says_it_is_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.iocap");
    let recs = awkward();
    write(&path, &[&recs[..2], &recs[2..]], false);
    let mut r = TraceReader::open(&path).unwrap();
    assert_eq!(r.by_ref().map(Result::unwrap).count(), recs.len());
    assert!(!r.complete());
    assert_eq!(
        r.lost(),
        LostCounts {
            ring_full: 2,
            other: 2
        }
    );
}

#[test]
fn truncation_at_every_byte_keeps_the_whole_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.iocap");
    let recs = awkward();
    write(&full, &[&recs[..2], &recs[2..3], &recs[3..]], true);
    let bytes = std::fs::read(&full).unwrap();
    // where each chunk ends, and how many records the file holds up to there
    let mut ends = Vec::new();
    let mut at = 20 + u32_at(&bytes, 12) as usize;
    let header_end = at;
    let mut held = 0;
    while at < bytes.len() {
        held += u32_at(&bytes, at + 4) as usize;
        at += CHUNK_HEADER_LEN + u32_at(&bytes, at + 12) as usize;
        ends.push((at, held));
    }
    let cut = dir.path().join("cut.iocap");
    for len in 0..bytes.len() {
        std::fs::write(&cut, &bytes[..len]).unwrap();
        let reader = match TraceReader::open(&cut) {
            Ok(r) => r,
            Err(e) => {
                assert!(
                    len < header_end,
                    "the whole header at {len} bytes is refused"
                );
                let e = e.to_string();
                let want = match len {
                    0 => "starts with \"\"",
                    _ => "header at byte 0 is truncated",
                };
                assert!(e.contains(want), "{e}");
                continue;
            }
        };
        assert!(len >= header_end);
        let whole = ends.iter().rfind(|(e, _)| *e <= len);
        let (whole_end, kept) = whole.copied().unwrap_or((header_end, 0));
        let mut n = 0;
        let mut error = None;
        for r in reader {
            match r {
                Ok(r) => {
                    assert_eq!(r, recs[n]);
                    n += 1;
                }
                Err(e) => error = Some(e.to_string()),
            }
        }
        assert_eq!(n, kept, "records read from the first {len} bytes");
        if len == whole_end {
            assert_eq!(error, None);
        } else {
            let e = error.unwrap_or_else(|| panic!("no error at {len} bytes"));
            assert!(
                e.contains(&format!("chunk at byte {whole_end} is truncated")),
                "{e}"
            );
        }
    }
}

#[test]
fn a_damaged_chunk_is_named_by_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.iocap");
    let recs: Vec<IoRecord> = (0..100)
        .map(|i| rec(i * 1000, i * 16, 8192, Op::Read))
        .collect();
    write(&path, &[&recs[..60], &recs[60..]], true);
    let mut bytes = std::fs::read(&path).unwrap();
    let first = 20 + u32_at(&bytes, 12) as usize;
    let second = first + CHUNK_HEADER_LEN + u32_at(&bytes, first + 12) as usize;
    bytes[second + CHUNK_HEADER_LEN + 3] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let (back, err) = read_all(&path);
    assert_eq!(back, recs[..60]);
    let e = err.unwrap().to_string();
    assert!(
        e.contains(&format!("chunk at byte {second} is corrupt")),
        "{e}"
    );
    assert!(e.contains("CRC32C"), "{e}");
    assert!(e.ends_with("the 60 records before it are read"), "{e}");

    // a damaged header field reads as damage too, not as a truncation
    bytes[second + CHUNK_HEADER_LEN + 3] ^= 0x40;
    bytes[second + 13] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let e = read_all(&path).1.unwrap().to_string();
    assert!(e.contains("is corrupt (its header's CRC32C"), "{e}");
}

#[test]
fn an_existing_file_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.iocap");
    std::fs::write(&path, b"mine").unwrap();
    let e = TraceWriter::create_new(&path, &meta()).err().unwrap();
    assert!(matches!(e, TraceError::Exists { .. }), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), b"mine");
}

#[test]
fn another_format_and_a_newer_version_are_refused_with_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.txt");
    std::fs::write(&path, b"hello\x01").unwrap();
    let e = TraceReader::open(&path).err().unwrap().to_string();
    assert!(e.contains(r#"starts with "hello\x01""#), "{e}");
    assert!(e.contains("blktrace") && e.contains("fio"), "{e}");
    let mut bytes = Vec::from(*MAGIC);
    bytes.extend_from_slice(&3u16.to_le_bytes());
    bytes.extend_from_slice(&[0; 6]);
    std::fs::write(&path, &bytes).unwrap();
    let e = TraceReader::open(&path).err().unwrap().to_string();
    assert!(e.contains("newer iocap (trace format version 3"), "{e}");
    assert!(read_maps(&path).is_err());
}

/// A full chunk is written by `push` itself, and the next one starts afresh.
#[test]
fn chunks_fill_at_their_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.iocap");
    let n = MAX_CHUNK_RECORDS as u64 + 10;
    let mut w = TraceWriter::create_new(&path, &meta()).unwrap();
    for i in 0..n {
        w.push(&rec(
            i * 10_000,
            (i * 7919 % 1_000_000) * 16,
            8192,
            Op::Read,
        ))
        .unwrap();
    }
    let s = w.finish().unwrap();
    assert_eq!((s.records, s.chunks), (n, 2));
    let back = TraceReader::open(&path).unwrap();
    let mut count = 0;
    for (i, r) in back.enumerate() {
        assert_eq!(r.unwrap().issue_ns, i as u64 * 10_000);
        count += 1;
    }
    assert_eq!(count, n as usize);
}

/// 8 KiB random reads by one process over 64 GiB at queue depth 4, with ns times and a latency
/// tail (examples/trace_bench.rs measures more streams, and the speed).
#[test]
fn a_random_read_stream_takes_under_eight_bytes_a_record() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rand = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut slots = [0u64; 4];
    let n = 200_000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.iocap");
    let mut w = TraceWriter::create_new(&path, &meta()).unwrap();
    let mut second = 1_000_000_000;
    for _ in 0..n {
        let i = (0..4).min_by_key(|&i| slots[i]).unwrap();
        let issue = slots[i] + rand() % 2000;
        let u = (rand() >> 11) as f64 / (1u64 << 53) as f64;
        let lat = match rand() % 100 {
            0 => 1_000_000 + rand() % 4_000_000,
            _ => 60_000 + (-(1.0 - u).ln() * 25_000.0) as u64,
        };
        slots[i] = issue + lat;
        let mut r = rec(issue, rand() % (1 << 23) * 16, 8192, Op::Read);
        r.complete_ns = Some(issue + lat);
        if issue >= second {
            w.flush_chunk().unwrap();
            second += 1_000_000_000;
        }
        w.push(&r).unwrap();
    }
    let s = w.finish().unwrap();
    let per_record = s.file_bytes as f64 / n as f64;
    assert!(per_record < 8.0, "{per_record:.2} bytes a record");
    assert_eq!(TraceReader::open(&path).unwrap().count(), n);
}

/// A file the version-1 writer (main 22eb9b3) wrote: three 8 KiB reads in two chunks, lost
/// counts 1 and 2, a 5 s trailer.
const VERSION_1_FILE: &[&str] = &[
    "494f43415054524301000000690000007b22736f75726365223a2263617074757265222c22737461727465645f617422",
    "3a22222c22686f7374223a22646231222c2264657669636573223a5b5d2c22746172676574223a22222c2266696c7465",
    "7273223a5b5d2c226475726174696f6e5f73223a6e756c6c7d2395880b4943484b020000003300000030000000000000",
    "0000000000010000000000000002000000000000001eb3b14a96bf0699f00f018010018302000108706f737467726573",
    "0000008080010000000703803e0d0033e20900010070a44200000000004943484b010000003100000031000000d00700",
    "000000000001000000000000000200000000000000bd4d2ce988447164f009018010018302000108706f737467726573",
    "0000008080010001006040000080e2090a00b000000000a442000000000049454e440000000018000000180000000000",
    "00000000000001000000000000000200000000000000e6d514d207cd337100f2052a0100000003000000000000000200",
    "000000000000",
];

#[test]
fn a_version_1_file_still_reads() {
    let hex: String = VERSION_1_FILE.concat();
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.iotrace");
    std::fs::write(&path, &bytes).unwrap();
    let (back, err) = read_all(&path);
    assert!(err.is_none(), "{err:?}");
    let want: Vec<IoRecord> = (0..3)
        .map(|i| rec(i * 1000, i * 16, 8192, Op::Read))
        .collect();
    assert_eq!(back, want);
    let mut r = TraceReader::open(&path).unwrap();
    assert_eq!(r.by_ref().count(), 3);
    assert!(r.complete());
    assert_eq!(r.meta().host, "db1");
    assert_eq!(r.meta().duration_s, Some(5.0));
    assert_eq!(
        r.lost(),
        LostCounts {
            ring_full: 1,
            other: 2
        }
    );
    assert!(read_maps(&path).unwrap().is_empty());
}

/// Records 0..n, 1 ms apart, as a capture would give them.
fn stream(n: u64) -> Vec<IoRecord> {
    (0..n)
        .map(|i| rec(i * 1_000_000, (i * 7919 % 4096) * 16, 8192, Op::Read))
        .collect()
}

/// The file as a capture writes it: each "second" the records released are pushed and
/// flushed, a map is written every other second, then the window (the next records, `held`
/// of them times 1/2, 1 or 3/2 by turns) is written; seconds of `per_second` records while
/// two seconds' worth are left. Then [`End`].
fn capture_like(
    path: &Path,
    recs: &[IoRecord],
    per_second: usize,
    held: usize,
    end: End,
) -> Vec<Vec<u8>> {
    let mut w = TraceWriter::create_new(path, &meta()).unwrap();
    let mut maps = Vec::new();
    let mut released = 0;
    let mut second = 0;
    while released + 2 * per_second <= recs.len() {
        for r in &recs[released..released + per_second] {
            w.push(r).unwrap();
        }
        released += per_second;
        w.set_lost(second, 0);
        w.flush_chunk().unwrap();
        if second % 2 == 0 {
            let map = format!("map {second}: {}", "x".repeat(second as usize * 37));
            w.write_map(map.as_bytes()).unwrap();
            maps.push(map.into_bytes());
        }
        // a window that grows, then shrinks: the pads in between are skipped
        let n = held * (1 + (second as usize % 3)) / 2;
        let window = &recs[released..(released + n).min(recs.len())];
        w.write_window(window).unwrap();
        second += 1;
    }
    match end {
        End::Finish => {
            for r in &recs[released..] {
                w.push(r).unwrap();
            }
            let s = w.finish().unwrap();
            assert_eq!(s.records, recs.len() as u64);
            assert_eq!(s.file_bytes, std::fs::metadata(path).unwrap().len());
        }
        End::Kill => std::mem::forget(w),
        End::ShrinkThenKill(n) => {
            w.write_window(&recs[released..released + n]).unwrap();
            std::mem::forget(w);
        }
    }
    maps
}

/// How [`capture_like`] ends.
#[derive(Clone, Copy)]
enum End {
    /// The rest pushed, the trailer written.
    Finish,
    /// Abandoned as if killed with -9.
    Kill,
    /// A window of this many records written alone, then killed.
    ShrinkThenKill(usize),
}

#[test]
fn maps_round_trip_between_the_record_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.iocap");
    let recs = stream(1000);
    let maps = capture_like(&path, &recs, 100, 30, End::Finish);
    assert_eq!(maps.len(), 5);
    let (back, err) = read_all(&path);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(back, recs, "maps and windows are not records");
    assert_eq!(read_maps(&path).unwrap(), maps);
    // a map before any record, an empty one, and maps only
    let p2 = dir.path().join("maps.iocap");
    let mut w = TraceWriter::create_new(&p2, &meta()).unwrap();
    w.write_map(b"first").unwrap();
    w.write_map(b"").unwrap();
    w.push(&recs[0]).unwrap();
    w.write_map(&[0xff; 3]).unwrap();
    let s = w.finish().unwrap();
    assert_eq!((s.records, s.chunks), (1, 1));
    assert_eq!(
        read_maps(&p2).unwrap(),
        [b"first".to_vec(), vec![], vec![0xff; 3]]
    );
    assert_eq!(read_all(&p2).0, recs[..1]);
    // too large a map is refused, naming what was written
    let p3 = dir.path().join("big.iocap");
    let mut w = TraceWriter::create_new(&p3, &meta()).unwrap();
    let e = w
        .write_map(&vec![0; MAX_MAP_LEN + 1])
        .unwrap_err()
        .to_string();
    assert!(e.contains("writing a map"), "{e}");
}

#[test]
fn a_killed_writer_keeps_its_window_and_a_finished_file_has_no_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let recs = stream(1000);
    // finished: every record once, and no window left in the file
    let done = dir.path().join("done.iocap");
    capture_like(&done, &recs, 100, 60, End::Finish);
    let bytes = std::fs::read(&done).unwrap();
    assert!(!bytes.windows(4).any(|m| m == b"IWIN" || m == b"IPAD"));
    let (back, err) = read_all(&done);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(back, recs);
    // killed after the ninth second's window: 900 records released, 90 held
    let killed = dir.path().join("killed.iocap");
    capture_like(&killed, &recs, 100, 60, End::Kill);
    let bytes = std::fs::read(&killed).unwrap();
    let count = |m: &[u8]| bytes.windows(4).filter(|w| *w == m).count();
    assert_eq!((count(b"IWIN"), count(b"IEND")), (1, 0));
    let mut r = TraceReader::open(&killed).unwrap();
    let back: Vec<IoRecord> = r.by_ref().map(Result::unwrap).collect();
    assert!(!r.complete());
    assert_eq!(back, recs[..990], "the released records, then the window");
    assert_eq!(r.lost().ring_full, 8, "the last records chunk's counts");
    // a window that reaches past what the chunks hold, then a writer dropped with records held
    let dropped = dir.path().join("dropped.iocap");
    let mut w = TraceWriter::create_new(&dropped, &meta()).unwrap();
    for r in &recs[..10] {
        w.push(r).unwrap();
    }
    w.write_window(&recs[10..50]).unwrap();
    for r in &recs[10..20] {
        w.push(r).unwrap();
    }
    drop(w);
    let (back, err) = read_all(&dropped);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(
        back,
        recs[..50],
        "the drop's chunk, then the window after it"
    );
    // a window written over by an empty one: nothing more comes out
    let emptied = dir.path().join("emptied.iocap");
    let mut w = TraceWriter::create_new(&emptied, &meta()).unwrap();
    w.push(&recs[0]).unwrap();
    w.write_window(&recs[1..40]).unwrap();
    w.write_window(&[]).unwrap();
    std::mem::forget(w);
    assert_eq!(read_all(&emptied).0, recs[..1]);
}

#[test]
fn a_window_holds_its_first_records_up_to_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.iocap");
    let n = MAX_WINDOW_RECORDS as u64 + 100;
    let recs = stream(n);
    let mut w = TraceWriter::create_new(&path, &meta()).unwrap();
    w.write_window(&recs).unwrap();
    std::mem::forget(w);
    let back = read_all(&path).0;
    assert_eq!(back.len(), MAX_WINDOW_RECORDS);
    assert!(back[..] == recs[..MAX_WINDOW_RECORDS]);
}

/// A killed capture's file cut at every byte: what comes out is always the records in order
/// from the first, each once (the window's records never repeat a chunk's), and the maps read
/// are the ones written, from the first.
#[test]
fn a_killed_capture_cut_anywhere_reads_a_prefix_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.iocap");
    let recs = stream(60);
    let maps = capture_like(&full, &recs, 10, 8, End::ShrinkThenKill(2));
    let bytes = std::fs::read(&full).unwrap();
    // the last window (2 records) is shorter than the one before it (8): a pad follows
    assert!(bytes.windows(4).any(|m| m == b"IPAD"));
    let cut = dir.path().join("cut.iocap");
    let mut longest = 0;
    for len in 0..=bytes.len() {
        std::fs::write(&cut, &bytes[..len]).unwrap();
        let Ok(reader) = TraceReader::open(&cut) else {
            assert!(read_maps(&cut).is_err());
            continue;
        };
        let mut n = 0;
        for r in reader {
            let Ok(r) = r else { continue };
            assert_eq!(r, recs[n], "record {n} from the first {len} bytes");
            n += 1;
        }
        longest = longest.max(n);
        let got = read_maps(&cut).unwrap();
        assert_eq!(got, maps[..got.len()], "maps from the first {len} bytes");
    }
    assert_eq!(
        longest, 52,
        "the whole file: 50 records released, 2 in the window"
    );
}

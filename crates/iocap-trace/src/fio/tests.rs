//! fio's iolog on constructed text (the real fio's own files: tests/fio.rs).

use super::*;

fn import(text: &str) -> (FioIologReader, Vec<IoRecord>, Option<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.iolog");
    std::fs::write(&path, text).unwrap();
    let mut reader = FioIologReader::open(&path).unwrap();
    let mut recs = Vec::new();
    let mut err = None;
    for r in reader.by_ref() {
        match r {
            Ok(r) => recs.push(r),
            Err(e) => err = Some(e.to_string()),
        }
    }
    (reader, recs, err)
}

fn brief(recs: &[IoRecord]) -> Vec<(u64, u32, Op, u64, u32)> {
    recs.iter()
        .map(|r| (r.issue_ns, r.dev.minor, r.op, r.sector * 512, r.bytes))
        .collect()
}

#[test]
fn version_3_reads_timestamps_in_microseconds() {
    let (reader, recs, err) = import(
        "fio version 3 iolog\n\
         18 /data/a add\n\
         19 /data/b add\n\
         134 /data/a open\n\
         138 /data/a read 61440 4096\n\
         603 /data/b write 491520 8192\n\
         884 /data/a sync 892928 0\n\
         900 /data/a datasync\n\
         950 /data/b trim 1048576 65536\n\
         960 /data/b wait 100 0\n\
         \n\
         1765 /data/a close\n",
    );
    assert_eq!(err, None);
    assert_eq!(reader.format(), TraceFormat::FioIologV3);
    let names: Vec<_> = reader
        .meta()
        .devices
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(names, ["/data/a", "/data/b"]);
    assert_eq!(reader.meta().source, "fio-iolog-v3");
    assert_eq!(
        brief(&recs),
        [
            (138_000, 0, Op::Read, 61440, 4096),
            (603_000, 1, Op::Write, 491_520, 8192),
            (884_000, 0, Op::Flush, 0, 0),
            (900_000, 0, Op::Flush, 0, 0),
            (950_000, 1, Op::Discard, 1_048_576, 65536),
        ]
    );
    assert!(recs.iter().all(|r| r.complete_ns.is_none() && r.pid == 0));
}

#[test]
fn version_2_waits_move_the_clock_as_fio_replays_them() {
    let (reader, recs, err) = import(
        "fio version 2 iolog\n\
         /data/a add\n\
         /data/a open\n\
         /data/a read 0 4096\n\
         /data/a wait 250 0\n\
         /data/a write 8192 4096\n\
         /data/a wait 100 0\n\
         /data/a read 4096 512\n\
         /data/c read 0 512\n\
         /data/a close\n",
    );
    assert_eq!(err, None);
    assert_eq!(reader.format(), TraceFormat::FioIologV2);
    assert_eq!(
        brief(&recs),
        [
            (0, 0, Op::Read, 0, 4096),
            (250_000_000, 0, Op::Write, 8192, 4096),
            (250_000_000, 0, Op::Read, 4096, 512), // 100 ms after the start is past
            (250_000_000, 1, Op::Read, 0, 512),    // a file never added is taken
        ]
    );
    assert_eq!(reader.meta().devices[1].name, "/data/c");
}

#[test]
fn bad_lines_are_named_by_number() {
    let head = "fio version 3 iolog\n1 /d add\n2 /d read 0 4096\n";
    for (line, why) in [
        (
            "3 /d read 4096",
            "expected `TIME FILE ACTION [OFFSET LENGTH]`",
        ),
        (
            "3 /d read 100 4096",
            "the offset 100 is not a multiple of 512 bytes",
        ),
        ("3 /d scribble 0 4096", "unknown action `scribble`"),
        (
            "x /d read 0 4096",
            "the timestamp (µs) `x` is not a whole number",
        ),
        ("3 /d read 0 -1", "the length `-1` is not a whole number"),
        (
            "3 /d write 0 5000000000",
            "the length 5000000000 is over 4 GiB",
        ),
        ("3 /d read", "`read` needs an offset and a length"),
    ] {
        let (_, recs, err) = import(&format!("{head}{line}\n4 /d read 0 4096\n"));
        assert_eq!(recs.len(), 1, "{line}");
        let err = err.unwrap();
        assert!(err.contains(&format!("job.iolog: line 4: {why}")), "{err}");
        assert!(err.ends_with("the one record before it is read"), "{err}");
    }
    let (_, recs, err) = import(&format!("{head}3 /d read 0 \u{0}\n"));
    assert_eq!(recs.len(), 1);
    assert!(err
        .unwrap()
        .contains("line 4: the length `\\x00` is not a whole number"));
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("binary");
    std::fs::write(
        &binary,
        b"fio version 3 iolog\n1 /d add\n2 /d read 0 \xff\n",
    )
    .unwrap();
    let e = FioIologReader::open(&binary).err().unwrap().to_string();
    assert!(e.contains("binary: line 3: it is not text (UTF-8)"), "{e}");
    let path = dir.path().join("v1");
    std::fs::write(&path, "0,0,4096\n").unwrap();
    let e = FioIologReader::open(&path).err().unwrap().to_string();
    assert!(e.contains("line 1: not fio's iolog"), "{e}");
}

fn rec(issue_ns: u64, op: Op, sector: u64, bytes: u32) -> IoRecord {
    IoRecord {
        issue_ns,
        complete_ns: Some(issue_ns + 50_000),
        dev: DevId::default(),
        sector,
        bytes,
        op,
        flags: IoFlags(0),
        error: 0,
        pid: 1,
        comm: [0; COMM_LEN],
    }
}

#[test]
fn export_writes_version_3_and_reads_back() {
    let recs = [
        rec(1_500, Op::Read, 8, 4096),
        rec(2_999_999, Op::Write, 1 << 30, 8192),
        rec(3_000_000, Op::Flush, 0, 0),
        rec(4_000_000, Op::Discard, 64, 1 << 20),
        rec(4_500_000, Op::WriteZeroes, 128, 4096),
        rec(5_000_000, Op::Other, 0, 0),
    ];
    let mut out = Vec::new();
    let s = export_fio_iolog(recs.iter().map(|r| Ok(*r)), &mut out, "/tmp/f").unwrap();
    assert_eq!((s.records, s.skipped), (5, 1));
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        "fio version 3 iolog\n0 /tmp/f add\n0 /tmp/f open\n\
         1 /tmp/f read 4096 4096\n\
         2999 /tmp/f write 549755813888 8192\n\
         3000 /tmp/f sync 0 0\n\
         4000 /tmp/f trim 32768 1048576\n\
         4500 /tmp/f write 65536 4096\n\
         4500 /tmp/f close\n"
    );
    let (_, back, err) = import(&text);
    assert_eq!(err, None);
    let ops: Vec<_> = back.iter().map(|r| (r.op, r.sector, r.bytes)).collect();
    assert_eq!(
        ops,
        [
            (Op::Read, 8, 4096),
            (Op::Write, 1 << 30, 8192),
            (Op::Flush, 0, 0),
            (Op::Discard, 64, 1 << 20),
            (Op::Write, 128, 4096),
        ]
    );
    let e = export_fio_iolog(std::iter::empty(), Vec::new(), "a b")
        .err()
        .unwrap();
    assert!(e.to_string().contains("without blanks"), "{e}");
}

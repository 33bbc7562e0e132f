//! Constructed traces, and the figures a user reads from their description.

use iocap_trace::{DevId, IoFlags, IoRecord, Op};

use super::{Characteriser, TraceFacts};

fn rec(issue_ns: u64, lat_ns: u64, sector: u64, bytes: u32, op: Op) -> IoRecord {
    IoRecord {
        issue_ns,
        complete_ns: Some(issue_ns + lat_ns),
        dev: DevId { major: 7, minor: 0 },
        sector,
        bytes,
        op,
        flags: IoFlags(0),
        error: 0,
        pid: 10,
        comm: IoRecord::comm_from("postgres"),
    }
}

/// A closed loop at queue depth `qd` of 8K random reads, 100 µs each, for `secs` seconds.
fn random_reads(qd: u64, secs: u64) -> Vec<IoRecord> {
    let mut v = vec![];
    let mut x = 12345u64;
    for slot in 0..qd {
        let mut t = slot * 1000;
        while t < secs * 1_000_000_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            v.push(rec(t, 100_000, (x >> 20) % 1_000_000 * 16, 8192, Op::Read));
            t += 100_000;
        }
    }
    v.sort_by_key(|r| r.issue_ns);
    v
}

fn describe(recs: &[IoRecord]) -> iocap_model::workload::Workload {
    let mut c = Characteriser::new();
    for r in recs {
        c.push(r);
    }
    c.finish(TraceFacts {
        complete: true,
        ..TraceFacts::default()
    })
}

#[test]
fn random_8k_reads_at_qd4_read_as_such() {
    let w = describe(&random_reads(4, 3));
    assert_eq!(w.mix.len(), 1);
    assert_eq!((w.mix[0].op, w.mix[0].count_pct), (Op::Read, 100.0));
    assert_eq!((w.sizes[0].size_bytes, w.sizes[0].pct), (8192, 100.0));
    assert!(w.randomness.sequential_pct < 1.0, "{:?}", w.randomness);
    assert!(w.randomness.far_pct > 95.0, "{:?}", w.randomness);
    let qd = w.queue_depth.unwrap();
    assert_eq!(qd.typical, 4, "{qd:?}");
    assert!((qd.mean - 4.0).abs() < 0.1, "{qd:?}");
    assert_eq!(qd.max, 4);
    assert!(
        (w.rate.iops_mean - 40_000.0).abs() < 400.0,
        "{}",
        w.rate.iops_mean
    );
    assert_eq!(w.rate.per_second.len(), 3);
    let all = w
        .latency
        .iter()
        .find(|l| l.op == Op::Read && l.size_class == "all")
        .unwrap();
    assert!((all.latency.p99_us - 100.0).abs() < 1.0, "{all:?}");
    assert_eq!(w.processes[0].comm, "postgres");
    assert_eq!(w.processes[0].read_pct, 100.0);
}

#[test]
fn a_sequential_writer_is_sequential() {
    let recs: Vec<IoRecord> = (0..1000)
        .map(|i| rec(i * 1_000_000, 500_000, i * 128, 65536, Op::Write))
        .collect();
    let w = describe(&recs);
    assert!(w.randomness.sequential_pct > 99.8, "{:?}", w.randomness);
    assert_eq!(w.working_set.distinct_bytes, 1000 * 65536);
    assert_eq!(w.working_set.written_bytes, 1000 * 65536);
    assert_eq!(w.queue_depth.unwrap().typical, 1);
}

#[test]
fn checkpoint_bursts_of_10_s_every_30_s_are_found() {
    let mut recs = vec![];
    for s in 0..90u64 {
        let rate = if s % 30 < 10 { 1000 } else { 50 };
        for k in 0..rate {
            let t = s * 1_000_000_000 + k * (1_000_000_000 / rate);
            recs.push(rec(t, 50_000, (s * 1000 + k) * 16, 8192, Op::Write));
        }
    }
    let w = describe(&recs);
    let b = &w.rate.bursts;
    assert_eq!(b.on_periods, 3, "{b:?}");
    assert_eq!(b.on_s_median, 10.0, "{b:?}");
    assert_eq!(b.off_s_median, 20.0, "{b:?}");
    assert!((w.rate.peak_to_mean - 1000.0 / w.rate.iops_mean).abs() < 0.01);
}

#[test]
fn a_log_write_then_its_flush_is_durable_at_the_flushes_completion() {
    let mut recs = vec![];
    for i in 0..100u64 {
        let t = i * 10_000_000;
        recs.push(rec(t, 200_000, i * 16, 8192, Op::Write));
        let mut f = rec(t + 300_000, 700_000, 0, 0, Op::Flush);
        f.sector = 0;
        recs.push(f);
    }
    let w = describe(&recs);
    let d = &w.durability;
    assert_eq!((d.flushes, d.durable_writes), (100, 100));
    let l = d.durable_latency.as_ref().unwrap();
    assert!(
        (l.p50_us - 1000.0).abs() < 2.0,
        "issue to the flush's completion: {l:?}"
    );
    assert!((d.flush_per_s - 100.0 / w.duration_s).abs() < 0.01);
}

#[test]
fn processes_are_counted_by_name() {
    let mut recs = random_reads(1, 1);
    let n = recs.len();
    for r in recs.iter_mut().step_by(4) {
        r.comm = IoRecord::comm_from("kworker/u8:2");
        r.op = Op::Write;
    }
    let w = describe(&recs);
    let pg = w.processes.iter().find(|p| p.comm == "postgres").unwrap();
    let kw = w
        .processes
        .iter()
        .find(|p| p.comm == "kworker/u8:2")
        .unwrap();
    assert_eq!(pg.count + kw.count, n as u64);
    assert_eq!(kw.read_pct, 0.0);
    assert_eq!(w.processes[0].comm, "postgres", "busiest first");
}

#[test]
fn a_region_read_over_and_over_is_its_size() {
    let recs: Vec<IoRecord> = (0..10_000u64)
        .map(|i| rec(i * 100_000, 50_000, (i % 256) * 8, 4096, Op::Read))
        .collect();
    let w = describe(&recs);
    assert_eq!(w.working_set.distinct_bytes, 256 * 4096);
    assert!(!w.working_set.capped);
}

#[test]
fn a_trace_without_completions_has_no_queue_depth_or_latency() {
    let mut recs = random_reads(2, 1);
    for r in &mut recs {
        r.complete_ns = None;
    }
    let w = describe(&recs);
    assert!(!w.has_completions);
    assert!(w.queue_depth.is_none() && w.latency.is_empty());
    assert!(w.rate.iops_mean > 0.0);
}

#[test]
fn the_working_set_is_placed_against_the_caches_found() {
    use iocap_model::cachescan::{CacheLevel, CacheScan};
    let level = |fits: u64| CacheLevel {
        fits_bytes: fits,
        exceeds_bytes: fits * 2,
        estimated_bytes: fits,
        hit_lat_us: 50.0,
        miss_lat_us: 500.0,
        hit_iops_qd32: 1e5,
        miss_iops_qd32: 1e4,
    };
    let scan = CacheScan {
        target: "/data".into(),
        block_bytes: 4096,
        steps: vec![],
        levels: vec![level(256 << 20), level(8 << 30)],
        tried_up_to_bytes: 64 << 30,
        stop_reason: String::new(),
        read_after_write: None,
        rechecks: Vec::new(),
        notes: vec![],
    };
    assert_eq!(
        super::fits_in_cache(100 << 20, &scan).unwrap(),
        "cache level 1 (holds at least 256 MiB)"
    );
    assert!(super::fits_in_cache(1 << 30, &scan)
        .unwrap()
        .starts_with("cache level 2"));
    assert_eq!(super::fits_in_cache(100 << 30, &scan), None);
}

/// The WAL at [0, 16 MiB) and a table at [1 GiB, 2 GiB) of device 7:0.
fn pg_map() -> iocap_trace::FileMap {
    let f = |path: &str, start: u64, len: u64| iocap_trace::filemap::MappedFile {
        path: path.into(),
        dev: DevId { major: 7, minor: 0 },
        role: None,
        extents: vec![[start, len]],
    };
    iocap_trace::FileMap {
        files: vec![
            f("/pg/pg_wal/000000010000000000000001", 0, 16 << 20),
            f("/pg/base/5/16397", 1 << 30, 1 << 30),
        ],
        ..Default::default()
    }
}

/// pgbench-like: 8K random table reads at qd 4 for 2 s (100 µs each), and group commits from
/// four backends taking turns, 100 a second for 2 s: 8K, 16K or 24K appended to the WAL, then
/// that backend's flush. The capture lasted 4 s.
fn pgbench_like() -> Vec<IoRecord> {
    let mut v: Vec<IoRecord> = random_reads(4, 2)
        .into_iter()
        .map(|mut r| {
            r.sector = (1 << 21) + r.sector % (1 << 21);
            r
        })
        .collect();
    let mut end = 0u64;
    for i in 0..200u64 {
        let t = i * 10_000_000 + 5_000;
        let bytes = 8192 * (1 + i % 3) as u32;
        let mut w = rec(t, 50_000, end / 512, bytes, Op::Write);
        w.pid = 100 + (i % 4) as u32;
        end += u64::from(bytes);
        let mut f = rec(t + 60_000, 200_000, 0, 0, Op::Flush);
        f.pid = w.pid;
        v.push(w);
        v.push(f);
    }
    v.sort_by_key(|r| r.issue_ns);
    v
}

fn describe_with(
    recs: &[IoRecord],
    map: Option<&iocap_trace::FileMap>,
) -> iocap_model::workload::Workload {
    let mut c = match map {
        Some(m) => Characteriser::with_files(m),
        None => Characteriser::new(),
    };
    for r in recs {
        c.push(r);
    }
    c.finish(TraceFacts {
        complete: true,
        duration_s: Some(4.0),
        file_map_read_by: map.map(|_| "capture".into()),
        ..TraceFacts::default()
    })
}

#[test]
fn with_a_file_map_the_wal_is_a_sequential_durable_log_apart_from_the_table_reads() {
    use iocap_model::workload::StreamRole;
    let w = describe_with(&pgbench_like(), Some(&pg_map()));
    let roles: Vec<StreamRole> = w.streams.iter().map(|s| s.role).collect();
    assert_eq!(
        roles,
        vec![StreamRole::Data, StreamRole::Log],
        "{:#?}",
        w.streams
    );
    let info = w.file_map.as_ref().unwrap();
    assert_eq!((info.files, info.mapped_pct), (2, 100.0));
    let data = &w.streams[0];
    assert_eq!((data.read_pct, data.size_mode_bytes), (100.0, 8192));
    assert!(data.sequential_pct < 5.0, "{data:?}");
    // busy for its own 2 s of the 4 s capture: 40,000 reads a second at depth 4
    assert!((data.busy_s - 2.0).abs() < 0.05, "{}", data.busy_s);
    assert!((data.iops / 40_000.0 - 1.0).abs() < 0.03, "{}", data.iops);
    let depth = data.depth_mean.unwrap();
    assert!((depth / 4.0 - 1.0).abs() < 0.03, "{depth}");
    assert_eq!(data.depth_max, 4);
    // four slots issuing every 100 µs, 1 µs apart: gaps of 1 µs and 97 µs, far from even
    assert!(data.arrival_cv.unwrap() > 0.9, "{:?}", data.arrival_cv);
    // the WAL's group commits every 10 ms, each a write then its flush: evenly spaced writes
    assert!(
        w.streams[1].arrival_cv.unwrap() < 0.1,
        "{:?}",
        w.streams[1].arrival_cv
    );
    let log = &w.streams[1];
    assert_eq!((log.read_pct, log.writes, log.flushes), (0.0, 200, 200));
    assert!(log.sequential_pct > 99.0, "four writers, one file: {log:?}");
    assert_eq!(log.writes_per_flush, 1.0);
    assert!(
        (log.flushes_per_s / 100.0 - 1.0).abs() < 0.03,
        "{}",
        log.flushes_per_s
    );
    // 16 KiB a group on average, 100 groups a second
    let want = 16384.0 * 100.0;
    assert!(
        (log.durable_bytes_per_s / want - 1.0).abs() < 0.03,
        "{}",
        log.durable_bytes_per_s
    );
    assert!(
        log.sizes.iter().any(|s| s.size_bytes == 24576),
        "{:?}",
        log.sizes
    );
}

#[test]
fn without_a_file_map_the_workload_says_so_and_the_wal_reads_as_random() {
    let w = describe_with(&pgbench_like(), None);
    assert!(w.file_map.is_none());
    assert!(w.file_map_note.as_deref().unwrap().contains("no file map"));
    assert_eq!(w.streams.len(), 1, "{:#?}", w.streams);
    assert_eq!(w.streams[0].role, iocap_model::workload::StreamRole::Other);
    // per process, the four backends' appends are far from each one's previous
    let mapped = describe_with(&pgbench_like(), Some(&pg_map()));
    assert!(w.randomness.sequential_pct < mapped.randomness.sequential_pct);
}

#[test]
fn write_back_and_the_journal_are_streams_of_their_own() {
    use iocap_model::workload::StreamRole;
    let mut flusher = rec(1_000, 100_000, (1 << 21) + 8, 65536, Op::Write);
    flusher.comm = IoRecord::comm_from("kworker/u4:2");
    let mut journal = rec(2_000, 100_000, 4_000_000, 4096, Op::Write);
    journal.comm = IoRecord::comm_from("jbd2/loop0-8");
    let mut meta = rec(3_000, 100_000, 5_000_000, 4096, Op::Read);
    meta.flags = IoFlags(IoFlags::META);
    let outside = rec(4_000, 100_000, 6_000_000, 4096, Op::Read);
    let w = describe_with(&[flusher, journal, meta, outside], Some(&pg_map()));
    let role = |r: StreamRole| {
        w.streams
            .iter()
            .find(|s| s.role == r)
            .map(|s| s.reads + s.writes)
    };
    assert_eq!(role(StreamRole::Writeback), Some(1));
    assert_eq!(role(StreamRole::Fs), Some(2));
    assert_eq!(
        role(StreamRole::Other),
        Some(1),
        "outside every mapped file"
    );
    assert_eq!(role(StreamRole::Data), None);
}

#[test]
fn a_kernel_sent_flush_belongs_to_the_write_that_completed_just_before_it() {
    use iocap_model::workload::StreamRole;
    let kblockd = |mut r: IoRecord| {
        r.comm = IoRecord::comm_from("kworker/0:1H");
        r
    };
    let mut recs = vec![];
    for i in 0..100u64 {
        let t = i * 1_000_000;
        // the WAL write, done 100 µs later; a table write issued 50 µs after it, still in
        // flight when the flush goes out at 150 µs; the flush (sent by kblockd)
        recs.push(rec(t, 100_000, i * 16, 8192, Op::Write));
        recs.push(rec(
            t + 50_000,
            500_000,
            (1 << 21) + i * 64,
            8192,
            Op::Write,
        ));
        recs.push(kblockd(rec(t + 150_000, 50_000, 0, 0, Op::Flush)));
    }
    let w = describe_with(&recs, Some(&pg_map()));
    let flushes = |r: StreamRole| {
        w.streams
            .iter()
            .find(|s| s.role == r)
            .map_or(0, |s| s.flushes)
    };
    assert_eq!(flushes(StreamRole::Log), 100, "{:#?}", w.streams);
    assert_eq!(flushes(StreamRole::Data), 0);
}

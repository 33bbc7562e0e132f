use super::*;
use iocap_model::request::Op;
use iocap_model::workload::{Bursts, SizeCount};
use iocap_model::RwMode;

fn size(op: Op, size_bytes: u64, count: u64) -> SizeCount {
    SizeCount {
        op,
        size_bytes,
        count,
        pct: 0.0,
    }
}

/// pgbench as a capture with a file map describes it: 8 KiB random reads of the tables at
/// depth 8 while busy, and the WAL's group commits, each write followed by its flush.
fn pgbench() -> Workload {
    Workload {
        files: vec!["pg.iotrace".into()],
        records: 80_000,
        duration_s: 30.0,
        streams: vec![
            Stream {
                role: StreamRole::Data,
                reads: 66_000,
                writes: 600,
                busy_s: 15.0,
                iops: 4442.0,
                read_pct: 99.1,
                depth_max: 8,
                depth_mean: Some(6.2),
                size_mode_bytes: 8192,
                sizes: vec![size(Op::Read, 8192, 66_000), size(Op::Write, 8192, 600)],
                sequential_pct: 3.0,
                near_pct: 2.0,
                arrival_cv: Some(1.1),
                ..Stream::default()
            },
            Stream {
                role: StreamRole::Log,
                writes: 9_000,
                flushes: 4_500,
                busy_s: 15.0,
                iops: 600.0,
                read_pct: 0.0,
                depth_max: 3,
                size_mode_bytes: 8192,
                sizes: vec![
                    size(Op::Write, 8192, 5_000),
                    size(Op::Write, 16384, 2_500),
                    size(Op::Write, 57344, 1_500),
                ],
                write_bytes: 8192 * 5_000 + 16384 * 2_500 + 57344 * 1_500,
                sequential_pct: 99.0,
                writes_per_flush: 2.0,
                ..Stream::default()
            },
            Stream {
                role: StreamRole::Fs,
                writes: 3,
                busy_s: 3.0,
                iops: 1.0,
                ..Stream::default()
            },
        ],
        ..Workload::default()
    }
}

#[test]
fn each_stream_becomes_a_workload_at_its_own_rate_depth_sizes_and_flushes() {
    let text = crate::profile_from_workload(&pgbench(), "pg-round");
    let p = crate::parse_profile(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(p.workloads.len(), 2, "the 3 fs writes are noise: {text}");
    let data = p.workload("stream-data").unwrap();
    assert_eq!(data.role, iocap_model::Role::Data);
    assert_eq!(data.spec.rw, RwMode::RandRw, "{text}");
    assert_eq!(data.spec.write_pct, 1);
    assert_eq!(
        (data.spec.qd, data.spec.bs_bytes),
        (13, 8192),
        "twice the mean depth 6.2"
    );
    assert_eq!(data.spec.rate_iops, Some(4442.0));
    assert_eq!(data.spec.fsync_every, 0);
    assert!(
        data.spec.burst.is_none(),
        "busy half the time in one run: {text}"
    );
    let log = p.workload("stream-log").unwrap();
    assert_eq!(log.role, iocap_model::Role::Log);
    assert_eq!(log.spec.rw, RwMode::Write, "sequential: {text}");
    assert_eq!((log.spec.qd, log.spec.fsync_every), (1, 2));
    assert!(log.spec.datasync, "a recorded flush is fdatasync's: {text}");
    assert_eq!(log.spec.engine, iocap_model::EngineChoice::Auto, "{text}");
    assert_eq!(
        log.spec.rate_iops,
        Some(900.0),
        "writes and flushes are paced: {text}"
    );
    assert!(
        text.contains("bs_split = \"8K:5556,16K:2778,56K:1667\""),
        "the recorded write sizes: {text}"
    );
    assert_eq!(log.concurrent_with.as_deref(), Some("stream-data"));
    assert_eq!(
        log.spec.rate_process,
        iocap_model::RateProcess::Linear,
        "no gaps known"
    );
    assert_eq!(p.suite().tests.len(), 1, "the streams run together");
    assert_eq!(p.suite().tests[0].workloads.len(), 2);
}

#[test]
fn the_sizes_beyond_those_kept_keep_their_bytes_as_one_size_of_their_mean() {
    let mut w = pgbench();
    let log = &mut w.streams[1];
    // 9,000 writes of five sizes, then 90 WAL segment fills of 256 KiB, 3 of 1 MiB
    log.sizes = [8, 16, 24, 32, 40, 256]
        .iter()
        .zip([4000, 2500, 1500, 600, 400, 90])
        .map(|(&k, n)| size(Op::Write, k << 10, n))
        .collect();
    log.writes = 9_093;
    log.write_bytes = log
        .sizes
        .iter()
        .map(|s| s.size_bytes * s.count)
        .sum::<u64>()
        + 3 * (1 << 20);
    let text = crate::profile_from_workload(&w, "wal");
    // the five commonest, then the 93 others at their mean: (90 x 256K + 3 x 1M) / 93 =
    // 287,509 B, 281K to the nearest 512 B
    assert!(
        text.contains("bs_split = \"8K:4399,16K:2749,24K:1650,32K:660,40K:440,281K:102\""),
        "{text}"
    );
    let p = crate::parse_profile(&text).unwrap();
    let spec = &p.workload("stream-log").unwrap().spec;
    let total: u64 = spec.bs_split.iter().map(|b| u64::from(b.weight)).sum();
    let mean: f64 = spec
        .bs_split
        .iter()
        .map(|b| b.bs_bytes as f64 * f64::from(b.weight))
        .sum::<f64>()
        / total as f64;
    let recorded = log_bytes(&w) as f64 / 9_093.0;
    assert!(
        (mean / recorded - 1.0).abs() < 0.01,
        "{mean} against {recorded}"
    );
}

fn log_bytes(w: &Workload) -> u64 {
    w.streams[1].write_bytes
}

#[test]
fn a_stream_busy_in_periods_keeps_its_cycle() {
    let mut w = pgbench();
    w.streams[0].busy_s = 9.0;
    w.streams[0].bursts = Bursts {
        on_periods: 3,
        on_s_median: 3.0,
        off_s_median: 7.0,
        ..Bursts::default()
    };
    let text = crate::profile_from_workload(&w, "cycle");
    let p = crate::parse_profile(&text).unwrap();
    let b = p.workload("stream-data").unwrap().spec.burst.unwrap();
    assert_eq!((b.on_s, b.off_s), (3.0, 7.0));
}

#[test]
fn a_workload_without_streams_keeps_the_one_mix() {
    let mut w = pgbench();
    w.streams.clear();
    let text = crate::profile_from_workload(&w, "old");
    assert!(text.contains("captured-mix"), "{text}");
}

#[test]
fn a_stream_of_reads_and_writes_runs_them_apart_each_with_its_own_sizes() {
    let mut w = pgbench();
    let data = &mut w.streams[0];
    (data.reads, data.writes, data.read_pct) = (6_500, 3_500, 65.0);
    data.sizes = vec![
        size(Op::Read, 8192, 6_000),
        size(Op::Read, 32768, 500),
        size(Op::Write, 8192, 3_000),
        size(Op::Write, 65536, 500),
    ];
    data.read_bytes = 8192 * 6_000 + 32768 * 500;
    data.write_bytes = 8192 * 3_000 + 65536 * 500;
    (data.iops, data.flushes, data.writes_per_flush) = (1000.0, 50, 70.0);
    let text = crate::profile_from_workload(&w, "split");
    let p = crate::parse_profile(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(p.workload("stream-data").is_none(), "{text}");
    let r = &p.workload("stream-data-read").unwrap().spec;
    let wr = &p.workload("stream-data-write").unwrap();
    assert_eq!(
        (r.rw, r.rate_iops, r.fsync_every),
        (RwMode::RandRead, Some(650.0), 0)
    );
    assert!(text.contains("bs_split = \"8K:9231,32K:769\""), "{text}");
    assert_eq!(wr.spec.rw, RwMode::RandWrite);
    assert_eq!(wr.spec.fsync_every, 70);
    assert_eq!(
        wr.spec.rate_iops,
        Some(355.0),
        "350 writes and one sync in 70: {text}"
    );
    assert!(text.contains("bs_split = \"8K:8571,64K:1429\""), "{text}");
    assert_eq!(wr.concurrent_with.as_deref(), Some("stream-data-read"));
    assert_eq!(p.suite().tests.len(), 1);
    assert_eq!(p.suite().tests[0].workloads.len(), 3, "with the log");
}

use super::*;
use iocap_model::workload::{Bursts, SizeCount};
use iocap_model::RwMode;

fn size(op: &str, size_bytes: u64, count: u64) -> SizeCount {
    SizeCount {
        op: op.into(),
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
                sizes: vec![size("read", 8192, 66_000), size("write", 8192, 600)],
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
                    size("write", 8192, 5_000),
                    size("write", 16384, 2_500),
                    size("write", 57344, 1_500),
                ],
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
        text.contains("bs_split = \"8K:56,16K:28,56K:17\""),
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

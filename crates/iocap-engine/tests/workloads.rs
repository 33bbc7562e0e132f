//! Block-size mixes, bursts and workloads run together, on real temporary files: sizes are
//! drawn by weight and counted exactly, a sequential log-like stream of mixed sizes writes
//! contiguously, bursts leave the device idle in between, and a group of workloads shares one
//! timeline while each reports on its own.

use std::collections::BTreeMap;

use iocap_engine::WRITE_STAMP_MAGIC;
use iocap_engine::{
    prepare_targets, run_group, run_test, NoFillProgress, PreparedTarget, Quiet, RunError,
    TargetError, TestOutcome,
};
use iocap_model::{parse_bs_split, Burst, EngineChoice, JobSpec, RwMode, TargetSpec};

mod common;
use common::{ASYNC, ENGINES, NEVER};

fn spec(path: &std::path::Path, rw: RwMode, engine: EngineChoice) -> JobSpec {
    let write_pct = if matches!(rw, RwMode::Write | RwMode::RandWrite) {
        100
    } else {
        0
    };
    JobSpec {
        name: path.file_stem().unwrap().to_string_lossy().into_owned(),
        targets: vec![TargetSpec::new(path.display().to_string())],
        rw,
        write_pct,
        bs_bytes: 8192,
        qd: 4,
        threads: 1,
        size_bytes: 8 << 20,
        duration_s: 0.5,
        warmup_s: 0.0,
        cooldown_s: 0.0,
        align_bytes: 4096,
        engine,
        ..JobSpec::default()
    }
}

fn with_mix(mut s: JobSpec, mix: &str) -> JobSpec {
    s.bs_split = parse_bs_split(mix).unwrap();
    s.bs_bytes = s.bs_split.iter().map(|b| b.bs_bytes).max().unwrap();
    s
}

fn prepare(spec: &JobSpec) -> Vec<PreparedTarget> {
    prepare_targets(spec, &mut NoFillProgress, &NEVER).unwrap()
}

fn run(spec: &JobSpec) -> TestOutcome {
    run_test(spec, &prepare(spec), &NEVER, &mut Quiet).unwrap()
}

#[test]
fn block_size_mix_draws_sizes_by_weight_and_counts_bytes_exactly() {
    for engine in ENGINES {
        for direct in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let mut s = with_mix(
                spec(&dir.path().join("m.dat"), RwMode::RandRead, engine),
                "8K:70,64K:30",
            );
            s.direct = direct;
            s.threads = 2;
            let r = run(&s).result;
            let what = format!("{engine:?} direct={direct}");
            assert!(r.error.is_none(), "{what}: {:?}", r.error);
            let ios = r.total.ios;
            // every I/O is 8 KiB or 64 KiB: the bytes pin down how many were 64 KiB, exactly
            let extra = r.total.bytes - ios * 8192;
            assert_eq!(
                extra % (65536 - 8192),
                0,
                "{what}: bytes are not a sum of sizes"
            );
            let big = extra / (65536 - 8192);
            assert!(big <= ios, "{what}");
            let target_bytes: u64 = r.targets.iter().map(|t| t.total.bytes).sum();
            assert_eq!(target_bytes, r.total.bytes, "{what}");
            if direct {
                // O_DIRECT speed depends on the disk; the share is checked on the page cache
                assert!(ios > 0, "{what}");
                continue;
            }
            assert!(ios > 5000, "{what}: only {ios} I/Os");
            let share = big as f64 / ios as f64;
            assert!((share - 0.3).abs() < 0.03, "{what}: 64K share {share}");
            let mean = r.total.bytes as f64 / ios as f64;
            let want = s.mean_bs_bytes();
            assert!(
                (mean - want).abs() / want < 0.03,
                "{what}: mean {mean} vs {want}"
            );
        }
    }
}

/// One write as its stamps tell it: where it started and how long it was.
#[derive(Debug, Clone, Copy)]
struct Write {
    start: u64,
    len: u64,
    stamps: u64,
}

/// Every write whose stamps survive in `data`, by sequence number. Stamps are looked for at
/// every 512 B sector; each must sit where it was aimed.
fn writes(data: &[u8]) -> BTreeMap<u64, Write> {
    let word = |b: &[u8], i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
    let mut out: BTreeMap<u64, Write> = BTreeMap::new();
    for (i, b) in data.chunks(512).enumerate() {
        if b.len() < 32 || word(b, 0) != WRITE_STAMP_MAGIC {
            continue;
        }
        let pos = i as u64 * 512;
        assert_eq!(
            word(b, 1),
            pos,
            "a write aimed at {} landed at {pos}",
            word(b, 1)
        );
        let (seq, len) = (word(b, 2), word(b, 3));
        let w = out.entry(seq).or_insert(Write {
            start: pos,
            len,
            stamps: 0,
        });
        assert_eq!(w.len, len, "stamps of one write disagree on its length");
        w.start = w.start.min(pos);
        w.stamps += 1;
    }
    out
}

#[test]
fn sequential_write_mix_is_contiguous_and_in_range() {
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.dat");
        let mut s = with_mix(spec(&path, RwMode::Write, engine), "512:10,4K:40,60K:50");
        s.size_bytes = 32 << 20;
        s.align_bytes = 512;
        s.qd = if engine == EngineChoice::Psync { 1 } else { 4 };
        s.rate_iops = Some(1000.0);
        s.duration_s = 0.4;
        // O_DIRECT where the file system takes 512 B writes, else the page cache
        let targets = match prepare_targets(&s, &mut NoFillProgress, &NEVER) {
            Err(TargetError::Invalid(_)) => {
                s.direct = false;
                prepare(&s)
            }
            t => t.unwrap(),
        };
        let r = run_test(&s, &targets, &NEVER, &mut Quiet).unwrap().result;
        drop(targets);
        assert!(r.error.is_none(), "{engine:?}: {:?}", r.error);
        assert!(r.write.ios > 100, "{engine:?}: {} writes", r.write.ios);
        let data = std::fs::read(&path).unwrap();
        let ws = writes(&data);
        // in issue order, each write starts where the previous one ended, from the start
        let mut end = 0;
        let mut sizes = BTreeMap::new();
        for w in ws.values() {
            assert_eq!(w.start, end, "{engine:?}: a gap or overlap before {w:?}");
            // stamped at its start and at every 4 KiB boundary of the file inside it
            let expect = 1 + (w.start + w.len - 1) / 4096 - w.start / 4096;
            assert_eq!(w.stamps, expect, "{engine:?}: {w:?}");
            end = w.start + w.len;
            *sizes.entry(w.len).or_insert(0u64) += 1;
        }
        assert!(end <= 32 << 20);
        assert!(ws.len() as u64 >= r.write.ios, "{engine:?}: writes lost");
        // the I/Os still in flight when the window closed are written but not counted
        let written: u64 = end;
        assert!(
            written >= r.write.bytes && written <= r.write.bytes + 4 * 61440,
            "{engine:?}: {written} B written, {} B counted",
            r.write.bytes
        );
        assert_eq!(
            sizes.keys().copied().collect::<Vec<_>>(),
            [512, 4096, 61440],
            "{engine:?}: {sizes:?}"
        );
    }
}

/// The starts of every write whose stamps survive in the file at `path`.
fn write_starts(path: &std::path::Path) -> Vec<u64> {
    let mut starts: Vec<u64> = writes(&std::fs::read(path).unwrap())
        .values()
        .map(|w| w.start)
        .collect();
    starts.sort_unstable();
    starts
}

/// DiskSpd's streams, as its `-T64K -s8K -b4K -t2` and `-si8K -b4K -t2` lay them out: thread
/// k starts at k × 64 KiB and steps 8 KiB, so no write starts between the steps; with `-si`
/// the threads share one stream, so together they write each step once, in a row from 0.
#[test]
fn diskspd_streams_write_where_diskspd_would() {
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lanes.dat");
        let mut s = spec(&path, RwMode::Write, engine);
        (s.bs_bytes, s.align_bytes, s.threads, s.qd) = (4096, 4096, 2, 2);
        s.rate_iops = Some(400.0);
        s.duration_s = 0.3;
        s.streams = Some(iocap_model::SeqStreams {
            stride_bytes: 8192,
            thread_stride_bytes: 65536,
            shared: false,
        });
        let r = run(&s).result;
        assert!(r.error.is_none() && r.write.ios > 20, "{engine:?}: {r:?}");
        let starts = write_starts(&path);
        assert!(
            starts.iter().all(|o| o % 8192 == 0),
            "{engine:?}: {starts:?}"
        );
        assert!(
            starts.contains(&0) && starts.contains(&65536),
            "{engine:?}: each thread from its own start: {starts:?}"
        );
        std::fs::remove_file(&path).unwrap();
        s.streams = Some(iocap_model::SeqStreams {
            stride_bytes: 8192,
            thread_stride_bytes: 0,
            shared: true,
        });
        let r = run(&s).result;
        assert!(r.error.is_none(), "{engine:?}: {:?}", r.error);
        let starts = write_starts(&path);
        let in_a_row: Vec<u64> = (0..starts.len() as u64).map(|i| i * 8192).collect();
        assert_eq!(starts, in_a_row, "{engine:?}: one shared stream");
    }
}

/// A thread stride that puts a thread past the end of the range is refused, naming it.
#[test]
fn a_thread_starting_past_the_end_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.dat");
    let mut s = spec(&path, RwMode::Read, ASYNC);
    (s.threads, s.size_bytes) = (3, 1 << 20);
    s.streams = Some(iocap_model::SeqStreams {
        stride_bytes: 8192,
        thread_stride_bytes: 512 << 10,
        shared: false,
    });
    let targets = prepare(&s);
    match run_test(&s, &targets, &NEVER, &mut Quiet) {
        Err(RunError::Invalid(e)) => {
            assert!(e.contains("thread 2") && e.contains("its 1M range"), "{e}")
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("ran a thread past the end of its range"),
    }
}

#[test]
fn bursts_issue_about_their_on_share() {
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec(&dir.path().join("b.dat"), RwMode::RandRead, engine);
        // the page cache: a disk with burst credits would run faster after each idle part
        s.direct = false;
        s.burst = Some(Burst {
            on_s: 0.2,
            off_s: 0.3,
        });
        s.duration_s = 2.0;
        // judged on the run's own timeline, not against a second run's speed (a busy machine
        // moves that by more than the on share): of its 100 ms intervals, those of the on
        // parts (8 of 20; up to 12 where the on parts straddle the intervals' edges) have I/O
        s.interval_ms = Some(100);
        let bursty = run(&s).result;
        let series = &bursty.workers[0].intervals;
        let busy = series.iter().filter(|i| i.read.ios > 0).count();
        let share = busy as f64 / series.len() as f64;
        assert!(
            series.len() >= 19 && (0.3..=0.65).contains(&share),
            "{engine:?}: {busy} of {} intervals had I/O, about 8 expected",
            series.len()
        );
        s.interval_ms = None;
        // throttled, a burst pattern issues the rate during its on part only: 2000 IOPS for
        // 4 x 0.2 s of the 2 s
        s.direct = true;
        s.rate_iops = Some(2000.0);
        let r = run(&s).result;
        // never above; below only where the run says its workers fell behind the schedule (a
        // busy machine may not run them on time)
        let said = r.warnings.iter().any(|w| w.contains("was not kept"));
        assert!(
            r.total.ios <= 1800 && (r.total.ios >= 1400 || said),
            "{engine:?}: {} I/Os, 1600 expected: {:?}",
            r.total.ios,
            r.warnings
        );
    }
}

#[test]
fn bursts_leave_idle_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(
        &dir.path().join("b.dat"),
        RwMode::RandWrite,
        EngineChoice::Auto,
    );
    // on at 0-0.2 s and 1.5-1.7 s; the third second is idle, the next burst starts at 3 s
    s.burst = Some(Burst {
        on_s: 0.2,
        off_s: 1.3,
    });
    s.duration_s = 3.0;
    let r = run(&s).result;
    let ps = &r.per_second;
    assert_eq!(ps.len(), 3, "{ps:?}");
    assert!(ps[0].iops > 0.0 && ps[1].iops > 0.0, "{ps:?}");
    assert_eq!(ps[2].iops, 0.0, "{ps:?}");
    assert!(ps[2].lat_us_mean.is_none());
}

#[test]
fn workloads_run_together_on_one_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let oltp = spec(
        &dir.path().join("data.dat"),
        RwMode::RandRead,
        EngineChoice::Auto,
    );
    let mut log = spec(
        &dir.path().join("log.dat"),
        RwMode::Write,
        EngineChoice::Auto,
    );
    log.qd = 1;
    let (ta, tb) = (prepare(&oltp), prepare(&log));
    let out = run_group(&[(&oltp, &ta), (&log, &tb)], &NEVER, &mut Quiet).unwrap();
    assert_eq!(out.len(), 2);
    let (a, b) = (&out[0].result, &out[1].result);
    assert!(a.read.ios > 0 && a.write.ios == 0, "{:?}", a.total);
    assert!(b.write.ios > 0 && b.read.ios == 0, "{:?}", b.total);
    assert_eq!(a.duration_s, b.duration_s);
    assert!((a.duration_s - 0.5).abs() < 0.05);
    assert_eq!(a.per_second.len(), b.per_second.len());
    assert!(a.targets[0].path.ends_with("data.dat"));
    assert!(b.targets[0].path.ends_with("log.dat"));
    assert_eq!((a.name.as_str(), b.name.as_str()), ("data", "log"));
    assert_eq!(a.cpu, b.cpu, "the process CPU is shared");
    assert!(a.role.is_none() && a.group.is_none());

    // one timeline: windows must agree
    let mut other = log.clone();
    other.duration_s = 1.0;
    match run_group(&[(&oltp, &ta), (&other, &tb)], &NEVER, &mut Quiet) {
        Err(RunError::Invalid(why)) => assert!(why.contains("same warmup"), "{why}"),
        r => panic!("a group with different durations ran: {:?}", r.is_ok()),
    }
}

#[test]
fn a_fault_in_one_workload_stops_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = spec(
        &dir.path().join("a.dat"),
        RwMode::RandRead,
        EngineChoice::Auto,
    );
    a.duration_s = 2.0;
    let mut b = spec(
        &dir.path().join("b.dat"),
        RwMode::RandRead,
        EngineChoice::Auto,
    );
    b.duration_s = 2.0;
    let (ta, tb) = (prepare(&a), prepare(&b));
    // shrink b behind the engine's back: its reads past the end come back short
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("b.dat"))
        .unwrap()
        .set_len(64 << 10)
        .unwrap();
    let out = run_group(&[(&a, &ta), (&b, &tb)], &NEVER, &mut Quiet).unwrap();
    for o in &out {
        let r = &o.result;
        let e = r.error.as_ref().expect("the fault is reported");
        assert!(e.path.ends_with("b.dat"), "{e:?}");
        assert!(r.duration_s < 1.0, "{}: ran {} s", r.name, r.duration_s);
    }
    assert_eq!(out[0].result.duration_s, out[1].result.duration_s);
    assert!(
        out[0]
            .result
            .warnings
            .iter()
            .any(|w| w.contains("b, which ran at the same time")),
        "{:?}",
        out[0].result.warnings
    );
}

//! Constructed curves and workloads, and the headroom a user reads from them.

use iocap_model::fixture::{run as fixture_run, FixtureRun};
use iocap_model::workload::*;
use iocap_model::{CurvePoint, RunCommand, RunResult, Saturation};

use super::{place, HeadroomError};

/// A saturate run of 8K random reads: steps at qd 1, 2, 4, ... with these IOPS and p99s.
fn saturate_run(steps: &[(u32, f64, f64)], knee_qd: Option<u32>) -> RunResult {
    let mut run = fixture_run(&FixtureRun::default());
    run.command = Some(RunCommand::Saturate);
    let steps: Vec<CurvePoint> = steps
        .iter()
        .map(|&(qd, iops, p99)| CurvePoint {
            test_idx: 0,
            qd,
            load_pct: None,
            iops,
            mb_s: iops * 8192.0 / 1e6,
            lat_us_p50: Some(p99 / 3.0),
            lat_us_p99: Some(p99),
            per_second_iops: vec![],
        })
        .collect();
    let max_iops = steps.iter().map(|p| p.iops).fold(0.0, f64::max);
    run.saturation = Some(Saturation {
        max_mb_s: max_iops * 8192.0 / 1e6,
        max_iops,
        steps,
        throttled: vec![],
        knee_qd,
        stop_reason: "the next doubling would pass --max-qd 32.".into(),
        min_gain_pct: 5.0,
        lat_ceiling_us: None,
        latency_target_us: None,
        capacity_iops_at_target: None,
        capacity_qd_at_target: None,
        size_sweep: Vec::new(),
        limit: None,
        drops: Vec::new(),
        bucket: None,
    });
    run
}

/// Flattens at qd 16: 95,000 IOPS with p99 500 µs.
fn knee_at_16() -> RunResult {
    saturate_run(
        &[
            (1, 10_000.0, 150.0),
            (2, 20_000.0, 160.0),
            (4, 40_000.0, 200.0),
            (8, 80_000.0, 300.0),
            (16, 95_000.0, 500.0),
            (32, 96_000.0, 900.0),
            (64, 96_500.0, 1_800.0),
        ],
        Some(16),
    )
}

/// 100 seconds of `bytes`-sized random reads: 98 at 2,000 IOPS, one at 9,000, the busiest at
/// `peak` IOPS; `depth` the typical queue depth (none: a trace without completions).
fn workload(peak: f64, bytes: u64, depth: Option<u64>) -> Workload {
    let point = |iops: f64| RatePoint {
        iops,
        read_iops: iops,
        write_iops: 0.0,
        mb_s: iops * bytes as f64 / 1e6,
    };
    let mut per_second = vec![point(2_000.0); 98];
    per_second.extend([point(9_000.0), point(peak)]);
    Workload {
        records: 500_000,
        duration_s: 100.0,
        has_completions: depth.is_some(),
        mix: vec![OpShare {
            op: iocap_model::request::Op::Read,
            count: 500_000,
            bytes: 500_000 * bytes,
            count_pct: 100.0,
            bytes_pct: 100.0,
        }],
        sizes: vec![SizeCount {
            op: iocap_model::request::Op::Read,
            size_bytes: bytes,
            count: 500_000,
            pct: 100.0,
        }],
        queue_depth: depth.map(|d| QueueDepth {
            typical: d,
            ..Default::default()
        }),
        rate: Rate {
            bucket_s: 1.0,
            per_second,
            ..Default::default()
        },
        randomness: Randomness {
            far_pct: 100.0,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < b.abs() * 1e-3
}

#[test]
fn the_busiest_second_is_placed_under_the_knee() {
    let h = place(&workload(12_400.0, 8192, None), &knee_at_16()).unwrap();
    assert!(h.knee_reached && h.same_size);
    assert_eq!((h.knee_outstanding, h.knee_iops), (16, 95_000.0));
    assert_eq!(h.knee_lat_us_p99, Some(500.0));
    assert_eq!((h.busiest.iops, h.p99_second.iops), (12_400.0, 9_000.0));
    assert!(close(h.busiest.iops_headroom.unwrap(), 95_000.0 / 12_400.0));
    assert!(close(
        h.p99_second.iops_headroom.unwrap(),
        95_000.0 / 9_000.0
    ));
    // same size: MB/s runs out with IOPS; IOPS named first on the tie
    assert!(close(h.busiest.mb_s_headroom.unwrap(), 95_000.0 / 12_400.0));
    assert_eq!(h.limit, "iops");
    assert!(close(h.headroom, 7.661));
    // a measured MB/s is IOPS times the size only to within rounding: still a tie
    let mut run = knee_at_16();
    for p in &mut run.saturation.as_mut().unwrap().steps {
        p.mb_s *= 1.0 - 1e-12;
    }
    let h = place(&workload(12_400.0, 8192, None), &run).unwrap();
    assert_eq!(h.limit, "iops");
    assert!(h.at_depth.is_none(), "an iolog has no queue depth");
    assert!(h.notes.iter().any(|n| n.contains("no completion times")));
    assert_eq!(h.against_run_id, knee_at_16().run_id);
    assert_eq!((h.curve_rw.as_str(), h.curve_bs_bytes), ("randread", 8192));
}

#[test]
fn a_workload_at_low_depth_runs_out_of_latency_first() {
    // at qd 4 the curve gives 40,000 IOPS with p99 200 µs: 3.2x the busiest second, less than
    // the 7.7x to the knee
    let h = place(&workload(12_400.0, 8192, Some(4)), &knee_at_16()).unwrap();
    let a = h.at_depth.clone().unwrap();
    assert_eq!(
        (a.outstanding, a.iops, a.lat_us_p99),
        (4, 40_000.0, Some(200.0))
    );
    assert!(!a.outside_curve);
    assert_eq!(h.limit, "latency");
    assert!(close(h.headroom, 40_000.0 / 12_400.0));
}

#[test]
fn a_depth_between_steps_is_interpolated_on_log2_of_the_depth() {
    let h = place(&workload(12_400.0, 8192, Some(6)), &knee_at_16()).unwrap();
    let a = h.at_depth.unwrap();
    let t = 6f64.log2() - 2.0;
    assert!(close(a.iops, 40_000.0 + 40_000.0 * t), "{a:?}");
    assert!(close(a.lat_us_p99.unwrap(), 200.0 + 100.0 * t), "{a:?}");
}

#[test]
fn steps_count_every_thread_and_a_depth_below_the_first_is_said() {
    let mut run = knee_at_16();
    run.tests[0].spec.threads = 4;
    // qd 1 on 4 threads is 4 in flight: depth 4 is the first step, depth 1 a quarter of it
    let h = place(&workload(12_400.0, 8192, Some(4)), &run).unwrap();
    assert_eq!(h.knee_outstanding, 64);
    assert_eq!(h.at_depth.unwrap().iops, 10_000.0);
    let a = place(&workload(1_000.0, 8192, Some(1)), &run)
        .unwrap()
        .at_depth
        .unwrap();
    assert!(a.outside_curve);
    assert_eq!((a.iops, a.lat_us_p99), (2_500.0, Some(150.0)));
    // past the last step (256 in flight), the last step stands
    let a = place(&workload(1_000.0, 8192, Some(1000)), &run)
        .unwrap()
        .at_depth
        .unwrap();
    assert!(a.outside_curve);
    assert_eq!(a.iops, 96_500.0);
}

#[test]
fn a_curve_that_never_flattened_gives_at_least_its_highest_step() {
    let run = saturate_run(
        &[
            (1, 10_000.0, 150.0),
            (2, 19_000.0, 160.0),
            (4, 37_000.0, 170.0),
        ],
        None,
    );
    let h = place(&workload(9_250.0, 8192, None), &run).unwrap();
    assert!(!h.knee_reached);
    assert_eq!((h.knee_outstanding, h.knee_iops), (4, 37_000.0));
    assert!(close(h.headroom, 4.0));
    let note = h
        .notes
        .iter()
        .find(|n| n.contains("never flattened"))
        .unwrap();
    assert!(
        note.contains("--max-qd 32") && note.contains("lower bound"),
        "{note}"
    );
}

#[test]
fn a_workload_beyond_the_knee_has_headroom_under_one() {
    let h = place(&workload(190_000.0, 8192, Some(64)), &knee_at_16()).unwrap();
    assert_eq!(h.limit, "iops");
    assert!(close(h.headroom, 0.5));
    // it queued past the knee when recorded, and the view is told so
    assert!(
        h.notes.iter().any(|n| n.contains("past the knee's 16")),
        "{:?}",
        h.notes
    );
}

#[test]
fn larger_requests_than_the_curves_are_held_to_its_mb_s() {
    // 10,000 IOPS of 16K: 9.5x the knee's IOPS, but 163.8 MB/s against its 778.2: 4.75x, as
    // scaling the knee's IOPS by bytes would give
    let h = place(&workload(10_000.0, 16384, None), &knee_at_16()).unwrap();
    assert!(!h.same_size);
    assert_eq!(h.workload_bs_bytes, 16384);
    assert!(close(h.busiest.iops_headroom.unwrap(), 9.5));
    assert_eq!(h.limit, "mb_s");
    assert!(close(h.headroom, 4.75));
    assert!(h.notes.iter().any(|n| n.contains("8K requests")
        && n.contains("commonest are 16K")
        && n.contains("across sizes")));
    // smaller requests: no more IOPS than the curve's are assumed
    let h = place(&workload(10_000.0, 4096, None), &knee_at_16()).unwrap();
    assert_eq!(h.limit, "iops");
    assert!(close(h.headroom, 9.5));
}

#[test]
fn a_write_workload_on_a_read_curve_is_said() {
    let mut w = workload(12_400.0, 8192, None);
    w.mix[0].op = iocap_model::request::Op::Write;
    w.sizes[0].op = iocap_model::request::Op::Write;
    let h = place(&w, &knee_at_16()).unwrap();
    assert_eq!(h.workload_write_pct, 100.0);
    assert!(
        h.notes
            .iter()
            .any(|n| n.contains("wrote 0 % of its requests, the workload 100 %")),
        "{:?}",
        h.notes
    );
}

#[test]
fn a_run_without_a_curve_is_refused_naming_its_kind() {
    let mut run = fixture_run(&FixtureRun::default());
    run.command = Some(RunCommand::Run);
    let e = place(&workload(1_000.0, 8192, None), &run).unwrap_err();
    assert!(matches!(e, HeadroomError::NotACurve { .. }));
    let msg = e.to_string();
    assert!(
        msg.contains(&run.run_id)
            && msg.contains("a `run` run (tests at set queue depths)")
            && msg.contains("needs a `saturate` run"),
        "{msg}"
    );
    run.command = Some(RunCommand::Characterise);
    run.workload = Some(Workload::default());
    let msg = super::curve_of(&run).unwrap_err().to_string();
    assert!(
        msg.contains("`characterise` run (a recorded workload)"),
        "{msg}"
    );
}

#[test]
fn an_empty_curve_or_a_workload_without_data_is_an_error() {
    let empty = saturate_run(&[(1, 0.0, 150.0)], None);
    let e = place(&workload(1_000.0, 8192, None), &empty).unwrap_err();
    assert!(matches!(e, HeadroomError::EmptyCurve { .. }), "{e}");
    let mut flushes = workload(1_000.0, 8192, None);
    for p in &mut flushes.rate.per_second {
        p.read_iops = 0.0;
    }
    let e = place(&flushes, &knee_at_16()).unwrap_err();
    assert_eq!(e, HeadroomError::NoDataRequests);
}

#[test]
fn a_last_bucket_of_a_sliver_of_time_is_not_the_busiest() {
    // the trace ends 1 ms into its 101st second: one request there reads as 1,000 IOPS
    let mut w = workload(9_250.0, 8192, None);
    w.duration_s = 100.001;
    w.rate.per_second.push(RatePoint {
        iops: 1_000_000.0,
        read_iops: 1_000_000.0,
        write_iops: 0.0,
        mb_s: 8192.0,
    });
    let h = place(&w, &knee_at_16()).unwrap();
    assert_eq!(h.busiest.iops, 9_250.0);
    // a last bucket covering most of its width counts
    w.duration_s = 100.6;
    let h = place(&w, &knee_at_16()).unwrap();
    assert_eq!(h.busiest.iops, 1_000_000.0);
}

/// `w` with the device `depth` deep in its busiest second (the last bucket) and `typical`
/// deep most of the time, as a capture of PostgreSQL's `pgbench -S` recorded it.
fn with_depths(mut w: Workload, busiest: f64, typical: u64) -> Workload {
    let n = w.rate.per_second.len();
    let mut per_second_mean = vec![0.8; n];
    per_second_mean[n - 1] = busiest;
    w.has_completions = true;
    w.queue_depth = Some(QueueDepth {
        typical,
        per_second_mean,
        ..Default::default()
    });
    w
}

#[test]
fn latency_is_read_at_the_busiest_seconds_own_depth() {
    // the capture of issue 33: the device sat at depth 1 most of the time, but the busiest
    // second ran 5.4 deep. Read at 1 the curve gives 10,000 IOPS, 1.02x the busiest second's
    // 9,770 (which printed "1.0x"); at 5.4 it gives 57,300: 5.9x
    let w = with_depths(workload(9_770.0, 8192, Some(1)), 5.4, 1);
    let h = place(&w, &knee_at_16()).unwrap();
    let a = h.at_depth.clone().unwrap();
    assert_eq!(a.depth_source, "busiest_second");
    assert_eq!((a.depth, a.outstanding), (5.4, 5));
    let t = 5.4f64.log2() - 2.0;
    assert!(close(a.iops, 40_000.0 + 40_000.0 * t), "{a:?}");
    assert!(close(a.mb_s, a.iops * 8192.0 / 1e6), "{a:?}");
    assert!(close(a.lat_us_p99.unwrap(), 200.0 + 100.0 * t), "{a:?}");
    assert_eq!(h.limit, "latency");
    assert!(close(h.headroom, a.iops / 9_770.0));
    assert!(h.headroom > 5.8 && h.headroom < 5.9, "{}", h.headroom);
    assert_eq!(h.verdict, "fits");
    assert!(!h.lower_bound && h.partial_run.is_none());
}

#[test]
fn without_per_second_depths_the_typical_depth_stands_and_under_1_reads_at_1() {
    let h = place(&workload(12_400.0, 8192, Some(4)), &knee_at_16()).unwrap();
    let a = h.at_depth.unwrap();
    assert_eq!((a.depth_source.as_str(), a.depth), ("typical", 4.0));
    // a busiest second less than one deep on average is read at one request in flight
    let w = with_depths(workload(1_000.0, 8192, Some(1)), 0.4, 1);
    let a = place(&w, &knee_at_16()).unwrap().at_depth.unwrap();
    assert_eq!((a.depth, a.outstanding, a.iops), (1.0, 1, 10_000.0));
    assert!(!a.outside_curve);
}

/// A stream of the workload: `peak_iops` at `peak_depth`, of `size`-byte requests.
fn stream(role: StreamRole, peak_iops: f64, peak_depth: f64, size: u64) -> Stream {
    Stream {
        role,
        reads: 1_000,
        read_bytes: 1_000 * size,
        peak_iops,
        peak_depth,
        depth_mean: Some(peak_depth / 2.0),
        read_pct: 100.0,
        size_mode_bytes: size,
        ..Default::default()
    }
}

/// PostgreSQL's WAL as a capture with `--files` sees it: sequential 32K writes, each group
/// fdatasync'd, 3 deep in its busiest second.
fn wal() -> Stream {
    Stream {
        role: StreamRole::Log,
        writes: 2_000,
        write_bytes: 2_000 * 32_768,
        flushes: 1_900,
        flushes_per_s: 380.0,
        durable_bytes_per_s: 13e6,
        peak_iops: 800.0,
        peak_depth: 3.0,
        depth_mean: Some(1.2),
        read_pct: 0.0,
        size_mode_bytes: 32_768,
        sequential_pct: 99.0,
        ..Default::default()
    }
}

#[test]
fn each_stream_is_judged_alone_at_its_own_depth_and_the_log_at_1() {
    let mut w = with_depths(workload(12_400.0, 8192, Some(1)), 6.0, 1);
    w.streams = vec![stream(StreamRole::Data, 11_600.0, 6.0, 8192), wal()];
    let h = place(&w, &knee_at_16()).unwrap();
    assert_eq!(h.streams.len(), 2);
    let d = &h.streams[0];
    assert_eq!(d.role, StreamRole::Data);
    assert_eq!(
        (d.depth, d.depth_source.as_str()),
        (Some(6.0), "stream_peak")
    );
    let t = 6f64.log2() - 2.0;
    let at6 = 40_000.0 + 40_000.0 * t;
    assert!(close(d.curve_iops.unwrap(), at6), "{d:?}");
    assert!(
        close(d.curve_lat_us_p99.unwrap(), 200.0 + 100.0 * t),
        "{d:?}"
    );
    assert_eq!(d.iops, 11_600.0);
    assert!(close(d.iops_headroom.unwrap(), 95_000.0 / 11_600.0));
    assert_eq!(d.limit, "latency");
    assert!(close(d.headroom.unwrap(), at6 / 11_600.0), "{d:?}");
    assert_eq!(d.verdict, "fits");
    assert!(d.curve_matches && d.notes.is_empty(), "{:?}", d.notes);

    // the log recorded 3 deep, but is judged at 1: the curve's 10,000 IOPS of 8K there are
    // 81.9 MB/s, against its 800 writes of 32K (26.2 MB/s): 3.1x, the lesser
    let l = &h.streams[1];
    assert_eq!((l.depth, l.depth_source.as_str()), (Some(1.0), "log"));
    assert_eq!(
        (l.curve_iops, l.curve_lat_us_p99),
        (Some(10_000.0), Some(150.0))
    );
    assert!(close(l.mb_s, 800.0 * 32_768.0 / 1e6));
    assert!(close(l.depth_headroom.unwrap(), 81.92 / 26.2144), "{l:?}");
    assert_eq!((l.limit.as_str(), l.verdict.as_str()), ("latency", "fits"));
    // ...and a random-read curve cannot speak for sequential durable writes
    assert!(!l.curve_matches);
    assert_eq!(
        l.notes,
        [
            "the curve is random reads, the log stream sequential durable writes: the curve \
          cannot speak for it; `iocap fsync` measures a log's writes and flushes at queue \
          depth 1"
        ]
    );
    // the whole workload's verdict is the busiest second's, at its own depth
    assert_eq!(h.at_depth.unwrap().depth, 6.0);
}

#[test]
fn streams_without_depths_are_held_to_the_knee_and_sizes_are_said() {
    // an iolog: no completions, so a data stream has no depth; the log is still judged at 1
    let mut w = workload(12_400.0, 8192, None);
    let mut data = stream(StreamRole::Data, 9_500.0, 0.0, 16_384);
    data.depth_mean = None;
    w.streams = vec![data, wal()];
    let h = place(&w, &knee_at_16()).unwrap();
    let d = &h.streams[0];
    assert_eq!((d.depth, d.depth_source.as_str()), (None, ""));
    assert_eq!((d.curve_iops, d.depth_headroom), (None, None));
    // 9,500 of 16K: 10x the knee's IOPS, but 155.6 MB/s against its 778.2: 5x
    assert_eq!(d.limit, "mb_s");
    assert!(close(d.headroom.unwrap(), 5.0), "{d:?}");
    assert_eq!(
        d.notes,
        [
            "the data stream's commonest requests are 16K, the curve's 8K: IOPS held against \
          IOPS and MB/s against MB/s, the lesser standing"
        ]
    );
    assert_eq!(h.streams[1].depth, Some(1.0));
    // a stream with no reads or writes has no headroom, and says why
    let mut w = workload(12_400.0, 8192, None);
    w.streams = vec![stream(StreamRole::Fs, 0.0, 0.0, 4096)];
    let s = &place(&w, &knee_at_16()).unwrap().streams[0];
    assert_eq!((s.headroom, s.limit.as_str()), (None, ""));
    assert!(s.notes[0].contains("no reads or writes"), "{:?}", s.notes);
    // and a workload without streams has none
    let h = place(&workload(12_400.0, 8192, None), &knee_at_16()).unwrap();
    assert!(h.streams.is_empty());
}

/// `knee_at_16` as a run of one test per step, the step at `qd` cut by `how`.
fn cut_at(qd: u32, how: impl Fn(&mut iocap_model::TestResult)) -> RunResult {
    let mut run = knee_at_16();
    let sat = run.saturation.as_mut().unwrap();
    let one = run.tests[0].clone();
    run.tests.clear();
    for (i, p) in sat.steps.iter_mut().enumerate() {
        p.test_idx = i as u32;
        let mut t = one.clone();
        t.spec.qd = p.qd;
        if p.qd == qd {
            how(&mut t);
        }
        run.tests.push(t);
    }
    run
}

#[test]
fn a_run_interrupted_during_its_ramp_gives_at_least_and_says_why() {
    let run = cut_at(32, |t| t.interrupted = true);
    let run = RunResult {
        interrupted_by: Some("SIGINT".into()),
        ..run
    };
    let h = place(&workload(12_400.0, 8192, None), &run).unwrap();
    // the knee at 16 was judged over the cut step: not trusted; the highest whole step stands
    assert!(!h.knee_reached);
    assert_eq!((h.knee_outstanding, h.knee_iops), (64, 96_500.0));
    assert!(h.lower_bound);
    assert_eq!(h.verdict, "at_least");
    assert_eq!(
        h.partial_run.as_deref(),
        Some("interrupted by SIGINT (Ctrl-C) during its step at qd 32")
    );
    let note = h.notes.iter().find(|n| n.contains("cut short")).unwrap();
    assert!(
        note.contains(&run.run_id)
            && note.contains("(interrupted by SIGINT (Ctrl-C) during its step at qd 32)")
            && note.contains("lower bound"),
        "{note}"
    );
    assert!(!h.notes.iter().any(|n| n.contains("never flattened")));
}

#[test]
fn a_partial_curve_never_says_falls_behind() {
    let failed = cut_at(32, |t| {
        t.error = Some(iocap_model::IoFault {
            op: iocap_model::FaultOp::Read,
            path: "/mnt/f".into(),
            offset_bytes: 0,
            len_bytes: 8192,
            errno: 5,
            message: "Input/output error (os error 5)".into(),
        })
    });
    // 190,000 IOPS at the busiest second: under the curve's 96,500, but the curve is partial
    let h = place(&workload(190_000.0, 8192, Some(64)), &failed).unwrap();
    assert!(h.headroom < 1.0 && h.lower_bound);
    assert_eq!(h.verdict, "none");
    assert_eq!(
        h.partial_run.as_deref(),
        Some("its step at qd 32 stopped on an I/O error: read failed: Input/output error (os error 5)")
    );
    // the same load on the whole curve falls behind
    let h = place(&workload(190_000.0, 8192, Some(64)), &knee_at_16()).unwrap();
    assert_eq!((h.verdict.as_str(), h.lower_bound), ("falls_behind", false));
    // a curve that never flattened is a lower bound too: no verdict under 1
    let rising = saturate_run(&[(1, 10_000.0, 150.0), (2, 19_000.0, 160.0)], None);
    let h = place(&workload(38_000.0, 8192, None), &rising).unwrap();
    assert_eq!((h.verdict.as_str(), h.lower_bound), ("none", true));
    assert!(h.partial_run.is_none());
    // streams share the run's bound
    let mut w = workload(190_000.0, 8192, None);
    w.streams = vec![stream(StreamRole::Data, 190_000.0, 8.0, 8192)];
    let s = &place(&w, &failed).unwrap().streams[0];
    assert_eq!(s.verdict, "none");
}

#[test]
fn a_run_cut_short_after_its_ramp_keeps_its_knee_as_a_lower_bound() {
    // interrupted between tests, after the ramp: every step whole, the knee stands
    let mut run = cut_at(0, |_| {});
    run.interrupted_by = Some("SIGTERM".into());
    let h = place(&workload(12_400.0, 8192, None), &run).unwrap();
    assert!(h.knee_reached && h.lower_bound);
    assert_eq!(h.knee_iops, 95_000.0);
    assert_eq!(h.partial_run.as_deref(), Some("interrupted by SIGTERM"));
    assert_eq!(h.verdict, "at_least");
}

#[test]
fn a_run_cut_short_before_any_whole_step_is_refused_saying_why() {
    let mut run = cut_at(1, |t| t.interrupted = true);
    run.saturation.as_mut().unwrap().steps.truncate(1);
    run.interrupted_by = Some("SIGINT".into());
    let e = place(&workload(1_000.0, 8192, None), &run).unwrap_err();
    assert!(matches!(e, HeadroomError::CutShort { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("was cut short (interrupted by SIGINT (Ctrl-C) during its step at qd 1)")
            && msg.contains("before any step of its curve ran to its end"),
        "{msg}"
    );
}

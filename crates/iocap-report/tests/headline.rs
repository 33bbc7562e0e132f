//! `iocap history`'s headline: each kind of run by its own key figure, on constructed runs.

mod common;

use iocap_model::fixture::{self, FixtureRun};
use iocap_model::*;
use iocap_report::headline::headline;

fn plain() -> RunResult {
    fixture::run(&FixtureRun::default())
}

fn line(r: &RunResult) -> String {
    headline(r).to_string()
}

#[test]
fn a_plain_run_is_headlined_by_its_iops() {
    let r = plain();
    let h = headline(&r);
    assert_eq!(h.kind, "run");
    assert!(h.text.starts_with("40,000 IOPS, p99 "), "{h}");
    assert!(h.text.ends_with(&format!("({})", r.tests[0].name)), "{h}");
}

#[test]
fn a_preflight_is_headlined_by_its_capacity_not_the_qd1_test() {
    let mut r = plain();
    r.preflight = Some(common::preflight());
    // a preflight that sized its files by a scan is still a preflight
    r.cachescan = Some(scan(vec![]));
    assert_eq!(
        line(&r),
        "preflight: 42,000 8K random read IOPS at p99 <= 10 ms"
    );
    r.preflight.as_mut().unwrap().rows[0].value = None;
    assert_eq!(
        line(&r),
        "preflight: 8K random read IOPS at p99 <= 10 ms: not reached"
    );
}

#[test]
fn saturate_and_scaleup_runs() {
    let mut r = plain();
    r.saturation = Some(common::saturation(1.0, 1.0));
    let s = r.saturation.as_ref().unwrap();
    let want = format!(
        "saturate: max {} IOPS, knee at qd 16",
        iocap_report::fmt::count(s.max_iops)
    );
    assert_eq!(line(&r), want);
    r.saturation.as_mut().unwrap().knee_qd = None;
    assert!(line(&r).ends_with(", no knee"), "{}", line(&r));

    let mut r = plain();
    r.scaleup = Some(common::scaleup());
    assert_eq!(
        line(&r),
        "scaleup: 196,400 IOPS on 4 volumes together (88 % of linear)"
    );
}

#[test]
fn cost_and_fsync_runs() {
    let mut r = plain();
    r.cost = Some(CostReport {
        answers: vec![CostAnswer {
            kind: iocap_model::AnswerKind::IopsPerCore,
            engine: iocap_model::EngineChoice::IoUring,
            rw: iocap_model::IoDirection::Read,
            qd: 32,
            value: 310_000.0,
            ..CostAnswer::default()
        }],
        ..CostReport::default()
    });
    assert_eq!(
        line(&r),
        "cost: 310,000 IOPS per core (io_uring read qd 32)"
    );

    let point = |method: &str, ops: f64, available: bool| FsyncPoint {
        method: method.to_string().into(),
        size_bytes: 8192,
        ops_per_s: ops,
        available,
        ..FsyncPoint::default()
    };
    let mut r = plain();
    r.fsync = Some(FsyncReport {
        points: vec![
            point("fsync", 1_200.0, true),
            point("open_datasync", 4_800.0, true),
            point("fdatasync", 99_000.0, false),
        ],
        ..FsyncReport::default()
    });
    assert_eq!(line(&r), "fsync: best open_datasync 4,800 ops/s at 8K");
}

fn scan(levels: Vec<CacheLevel>) -> CacheScan {
    CacheScan {
        target: "/data".into(),
        block_bytes: 8192,
        steps: vec![],
        levels,
        tried_up_to_bytes: 8 << 30,
        stop_reason: String::new(),
        read_after_write: None,
        rechecks: Vec::new(),
        notes: vec![],
    }
}

fn level(mib: u64) -> CacheLevel {
    CacheLevel {
        fits_bytes: mib << 19,
        exceeds_bytes: mib << 20,
        estimated_bytes: mib << 20,
        hit_lat_us: 40.0,
        miss_lat_us: 900.0,
        hit_iops_qd32: 25_000.0,
        miss_iops_qd32: 1_111.0,
    }
}

#[test]
fn cachescan_and_verify_runs() {
    let mut r = plain();
    r.cachescan = Some(scan(vec![]));
    assert_eq!(line(&r), "cachescan: no cache up to 8G");
    r.cachescan = Some(scan(vec![level(64), level(2048)]));
    assert_eq!(line(&r), "cachescan: 2 cache levels, largest up to 2G");

    let mut r = plain();
    let mut v = Verify::default();
    v.counts.pages_checked = 131_072;
    v.passed = true;
    r.verify = Some(v.clone());
    assert_eq!(line(&r), "verify: PASS, 131,072 pages checked, 0 failures");
    v.passed = false;
    v.classes.misdirected = 3;
    r.verify = Some(v);
    assert_eq!(line(&r), "verify: FAIL, 131,072 pages checked, 3 failures");
}

#[test]
fn a_run_without_tests_does_not_panic() {
    let mut r = plain();
    r.tests.clear();
    r.command = Some(RunCommand::Suite);
    assert_eq!(line(&r), "suite: no tests");
}

/// A preflight stopped by Ctrl-C is saved with the tests it ran; the views say it is partial
/// (issue 14 item 5), a whole run says nothing.
#[test]
fn a_run_stopped_early_is_called_partial() {
    let mut r = iocap_model::fixture::run(&iocap_model::fixture::FixtureRun::default());
    r.command = Some(RunCommand::Preflight);
    assert_eq!(iocap_report::partial_note(&r), None);
    let mut cut = r.tests[0].clone();
    cut.interrupted = true;
    r.tests.push(cut);
    let note = iocap_report::partial_note(&r).expect("a note");
    assert!(
        note.contains("this preflight was stopped") && note.contains("after 1 complete test;"),
        "{note}"
    );
}

#[test]
fn a_run_is_of_the_kind_of_its_first_part_set() {
    let mut r = plain();
    assert_eq!(r.kind(), RunKind::Test);
    r.suite = Some(SuiteInfo {
        name: "oltp".into(),
        planned: 4,
    });
    assert_eq!(r.kind(), RunKind::Suite);
    r.verify = Some(Verify::default());
    assert_eq!(r.kind(), RunKind::Verify);
    r.scaleup = Some(common::scaleup());
    assert_eq!(r.kind(), RunKind::Scaleup);
    r.fsync = Some(FsyncReport::default());
    assert_eq!(r.kind(), RunKind::Fsync);
    r.cost = Some(CostReport::default());
    assert_eq!(r.kind(), RunKind::Cost);
    r.saturation = Some(common::saturation(1.0, 1.0));
    assert_eq!(r.kind(), RunKind::Saturation);
    r.cachescan = Some(scan(vec![]));
    assert_eq!(r.kind(), RunKind::Cachescan);
    // a preflight that sized its files by a scan, with the saturation it measured
    r.preflight = Some(common::preflight());
    assert_eq!(r.kind(), RunKind::Preflight);
}

#[test]
fn a_replay_is_headlined_by_its_iops_against_the_recording_and_its_verdict() {
    use iocap_model::replay::*;
    let mut r = plain();
    r.tests.clear();
    r.replay = Some(Replay {
        recorded: ReplaySide {
            iops: 12_400.0,
            ..ReplaySide::default()
        },
        replayed: ReplaySide {
            iops: 9_870.0,
            ..ReplaySide::default()
        },
        lag: Lag {
            p99_us: 4_200.0,
            ..Lag::default()
        },
        ..Replay::default()
    });
    assert_eq!(r.kind(), RunKind::Replay);
    assert_eq!(
        line(&r),
        "replay: 9,870 IOPS (12,400 recorded), fell behind (lag p99 4.20 ms)"
    );
}

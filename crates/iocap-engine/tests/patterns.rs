//! DiskSpd's patterns on real temporary files (issue 27): a base offset confines every write to
//! its region and leaves every other byte as it was, a random share and parallel I/O write where
//! DiskSpd would, think time pauses after a count of I/Os, and a queue depth per target runs.

use std::collections::BTreeMap;

use iocap_engine::WRITE_STAMP_MAGIC;
use iocap_engine::{prepare_targets, run_test, NoFillProgress, Quiet, TargetError, TestOutcome};
use iocap_model::{EngineChoice, JobSpec, RwMode, TargetSpec, ThinkTime};

mod common;
use common::{ASYNC, ENGINES, NEVER};

fn spec(path: &std::path::Path, rw: RwMode, engine: EngineChoice) -> JobSpec {
    JobSpec {
        name: "pattern".into(),
        targets: vec![TargetSpec::new(path.display().to_string())],
        write_pct: rw
            .write_pct(0)
            .max(if rw == RwMode::RandWrite || rw == RwMode::Write {
                100
            } else {
                0
            }),
        rw,
        bs_bytes: 4096,
        align_bytes: 4096,
        qd: 4,
        threads: 1,
        size_bytes: 4 << 20,
        duration_s: 0.3,
        warmup_s: 0.0,
        cooldown_s: 0.0,
        direct: false,
        engine,
        ..JobSpec::default()
    }
}

fn run(spec: &JobSpec) -> TestOutcome {
    let targets = prepare_targets(spec, &mut NoFillProgress, &NEVER).unwrap();
    run_test(spec, &targets, &NEVER, &mut Quiet).unwrap()
}

/// The start of every write whose stamp survives in `data`, with its sequence number.
fn write_starts(data: &[u8]) -> BTreeMap<u64, u64> {
    let word = |b: &[u8], i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
    let mut out = BTreeMap::new();
    for (i, b) in data.chunks(4096).enumerate() {
        if b.len() >= 32 && word(b, 0) == WRITE_STAMP_MAGIC {
            assert_eq!(word(b, 1), i as u64 * 4096, "a write landed off its aim");
            out.insert(i as u64 * 4096, word(b, 2));
        }
    }
    out
}

/// `-B1M -f2M`: random and sequential writes land only in `[1 MiB, 2 MiB)` of a 4 MiB file;
/// every byte before and after is what it was.
#[test]
fn a_base_offset_confines_writes_to_its_region() {
    for engine in ENGINES {
        for rw in [RwMode::RandWrite, RwMode::Write] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("region.dat");
            // iocap creates and fills the whole file first
            run(&spec(&path, RwMode::Read, engine));
            let before = std::fs::read(&path).unwrap();
            let mut s = spec(&path, rw, engine);
            s.base_bytes = 1 << 20;
            s.targets[0].size_bytes = Some(1 << 20);
            s.rate_iops = Some(2000.0);
            let r = run(&s).result;
            assert!(r.error.is_none() && r.write.ios > 50, "{engine:?}: {r:?}");
            let after = std::fs::read(&path).unwrap();
            assert_eq!(
                after.len(),
                before.len(),
                "{engine:?} {rw:?}: the file's size"
            );
            assert!(
                after[..1 << 20] == before[..1 << 20],
                "{engine:?} {rw:?}: before the base"
            );
            assert!(
                after[2 << 20..] == before[2 << 20..],
                "{engine:?} {rw:?}: past the end"
            );
            let starts = write_starts(&after);
            assert!(!starts.is_empty());
            assert!(
                starts.keys().all(|&o| ((1 << 20)..(2 << 20)).contains(&o)),
                "{engine:?} {rw:?}: {starts:?}"
            );
            if rw == RwMode::Write {
                assert!(
                    starts.contains_key(&(1 << 20)),
                    "the stream starts at the base"
                );
            }
        }
    }
}

/// A base offset on a new file: iocap creates it to base + size, so the whole region exists;
/// a file iocap did not create that cannot hold the region is refused, never shortened.
#[test]
fn a_base_offset_sizes_new_files_and_refuses_short_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.dat");
    let mut s = spec(&path, RwMode::RandRead, ASYNC);
    s.base_bytes = 3 << 20;
    s.targets[0].size_bytes = Some(2 << 20);
    let targets = prepare_targets(&s, &mut NoFillProgress, &NEVER).unwrap();
    assert_eq!(targets[0].range_bytes, 2 << 20);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 5 << 20);
    drop(targets);
    let theirs = dir.path().join("theirs.dat");
    let mut data = vec![0u8; 4 << 20];
    iocap_engine::fill_random(
        &mut data,
        &mut rand_xoshiro::rand_core::SeedableRng::seed_from_u64(7),
    );
    std::fs::write(&theirs, &data).unwrap();
    let mut s = spec(&theirs, RwMode::RandRead, ASYNC);
    s.base_bytes = 3 << 20;
    s.targets[0].size_bytes = Some(2 << 20);
    match prepare_targets(&s, &mut NoFillProgress, &NEVER) {
        Err(TargetError::Invalid(e)) => assert!(e.contains("does not hold"), "{e}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a short region was tested"),
    }
    // without a size, the region runs from the base to the end of the file
    s.targets[0].size_bytes = None;
    let targets = prepare_targets(&s, &mut NoFillProgress, &NEVER).unwrap();
    assert_eq!(targets[0].range_bytes, 1 << 20);
    drop(targets);
    s.base_bytes = 4 << 20;
    assert!(prepare_targets(&s, &mut NoFillProgress, &NEVER).is_err());
}

/// `-p -o4`: each of the four slots walks the stream on its own from 0 (wrapping at its end),
/// so an offset is written once by every slot that got that far, and the offsets written are
/// the farthest slot's walk. How far each slot gets in 0.1 s is the machine's business (on a
/// busy one psync's four threads, one per slot, drift apart), so the test reads the walks
/// from the file's stamps, not from an average count of writes per offset: every write is
/// stamped with its offset and its worker's sequence number, so a worker's walk from 0 leaves
/// stamps whose sequence number less their block index (modulo the stream's blocks) is one
/// value, its first write's. A throttle would let one slot run ahead alone, so the run is
/// free.
#[test]
fn parallel_io_writes_each_offset_once_per_slot() {
    const BLOCKS: u64 = (4 << 20) / 4096;
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("para.dat");
        let mut s = spec(&path, RwMode::Write, engine);
        s.parallel = true;
        s.duration_s = 0.1;
        s.streams = Some(iocap_model::SeqStreams {
            stride_bytes: 4096,
            thread_stride_bytes: 0,
            shared: false,
        });
        let r = run(&s).result;
        assert!(r.error.is_none() && r.write.ios > 40, "{engine:?}: {r:?}");
        let starts = write_starts(&std::fs::read(&path).unwrap());
        // the offsets written are a walk from 0: every block up to the farthest, none skipped
        let walked = starts.len() as u64;
        assert!(
            starts.keys().copied().eq((0..walked).map(|b| b * 4096)),
            "{engine:?}: the written offsets are not a walk from 0: {:?}",
            starts.keys().map(|o| o / 4096).collect::<Vec<_>>()
        );
        // each stamp's walker: its sequence number less its block index
        let walkers: std::collections::BTreeSet<u64> = starts
            .iter()
            .map(|(&o, &seq)| seq.wrapping_sub(o / 4096) % BLOCKS)
            .collect();
        let ran: Vec<u64> = r.workers.iter().map(|w| w.write.ios).collect();
        assert_eq!(ran.iter().sum::<u64>(), r.write.ios, "{engine:?}");
        if ran.len() == 4 {
            // psync: a worker (its own sequence numbers) per slot. Each walked from 0, one
            // write a block: at most four walkers in the stamps, where one stream shared by the
            // four (no -p) leaves a walker for every run of blocks one worker took in a row
            assert!(
                walkers.len() <= 4,
                "{engine:?}: {} walkers in the stamps, not one per slot at most",
                walkers.len()
            );
            // and the walks coincide: the blocks written are the farthest slot's walk (its
            // last write may have ended after the window, uncounted), not the slots' writes
            // laid end to end
            let far = *ran.iter().max().unwrap();
            assert!(
                (far.min(BLOCKS)..=(far + 1).min(BLOCKS)).contains(&walked),
                "{engine:?}: {walked} blocks written by slots that wrote {ran:?}"
            );
        } else {
            // one worker keeps the four slots (io_uring, IOCP), its sequence numbers running
            // over all of them: four walks interleaved leave many walkers in the stamps, where
            // one stream shared by the slots leaves one
            assert_eq!(ran.len(), 1, "{engine:?}");
            assert!(
                walkers.len() > 1,
                "{engine:?}: the stamps show one walk of the stream, not one per slot"
            );
        }
    }
}

/// `-rs50`: writes sit on the alignment's grid inside the range, about half following the
/// one before.
#[test]
fn a_random_share_writes_on_the_grid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.dat");
    let mut s = spec(&path, RwMode::RandWrite, ASYNC);
    s.random_pct = Some(50);
    s.rate_iops = Some(2000.0);
    let r = run(&s).result;
    assert!(r.error.is_none() && r.write.ios > 100, "{r:?}");
    let starts = write_starts(&std::fs::read(&path).unwrap());
    assert!(starts.keys().all(|o| o % 4096 == 0 && o + 4096 <= 4 << 20));
    // in issue order, a write follows the one before (4 KiB on) about half the time
    let mut by_seq: Vec<(u64, u64)> = starts.iter().map(|(&o, &q)| (q, o)).collect();
    by_seq.sort_unstable();
    let follows = by_seq
        .windows(2)
        .filter(|w| w[1].0 == w[0].0 + 1 && w[1].1 == w[0].1 + 4096)
        .count() as f64;
    let pairs = by_seq.windows(2).filter(|w| w[1].0 == w[0].0 + 1).count() as f64;
    assert!(
        pairs > 50.0 && (follows / pairs - 0.5).abs() < 0.2,
        "{follows}/{pairs}"
    );
}

/// `-i10 -j50`: 10 I/Os, then 50 ms of nothing; over 0.5 s about 100 I/Os where a free run
/// does thousands.
#[test]
fn think_time_limits_a_run_to_its_bursts() {
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("think.dat");
        let mut s = spec(&path, RwMode::RandRead, engine);
        s.duration_s = 0.5;
        s.think = Some(ThinkTime {
            ios: 10,
            think_ms: 50,
        });
        let r = run(&s).result;
        assert!(r.error.is_none(), "{engine:?}: {:?}", r.error);
        // at most 11 bursts (and the I/Os in flight when a pause starts)
        assert!(
            (20..=11 * 14).contains(&r.read.ios),
            "{engine:?}: {}",
            r.read.ios
        );
    }
}

/// A queue depth per target (DiskSpd's `-O` split over its targets) runs on both engines.
#[test]
fn a_queue_depth_per_target_runs() {
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec(&dir.path().join("a.dat"), RwMode::RandRead, engine);
        s.targets.push(TargetSpec::new(
            dir.path().join("b.dat").display().to_string(),
        ));
        s.target_qd = vec![3, 1];
        let r = run(&s).result;
        assert!(
            r.error.is_none() && r.read.ios > 0,
            "{engine:?}: {:?}",
            r.error
        );
    }
}

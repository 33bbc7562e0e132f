//! A test shorter than the burst it may have measured (issue 37 §3). A test can only show a
//! burst that ran out inside it (`crate::burst`); one that ended before the bucket ran out
//! shows one level, the burst's, and nothing in it says so. So a run is held against the
//! burst bucket that the newest stored `saturate --bucket` measured on its target: the same
//! host, and the same block device (a bucket belongs to the volume), or the same path as given
//! where the device cannot be told (FUSE, network file systems). The front end reads the store
//! and hands the stored run in; this module only judges.
//!
//! A test may have run inside the burst when, had the bucket been full when it started,
//! - its rate was above the stored baseline (by more than [`AT_BASELINE`]: a test at the
//!   baseline measured the baseline, whatever the bucket held), **and**
//! - its I/Os above the baseline over its warm-up and measured window did not exceed the
//!   credits: it was shorter than the burst at its own rate, credits ÷ (rate − baseline).
//!
//! One drain at one I/O size cannot tell whether the bucket counts I/Os (gp2's credits) or
//! bytes (a throughput bucket), so a test at another size is held against both, and flagged
//! when either says it was inside. A bucket drained by writes alone may be a write cache
//! filling, which reads do not spend: only a test's writes are held against it; one drained by
//! reads (or a mix) counts every I/O, as a cloud volume's credits do. Tests that ran at the
//! same time (a group) spend one bucket together. A test whose own drop was found
//! (`saturation.drops`) already says where its burst ran out, and is left to that line.

use iocap_model::{
    format_bytes, CountedIn, InsideBurst, OpStats, RunCommand, RunResult, StoredBucket,
    TargetResult, TestResult,
};

pub use crate::bucket::AT_BASELINE;
use crate::fmt::count;

/// Whether `run`'s command is one whose tests are held against a stored bucket: the measuring
/// commands whose figures are capacities (not a cache scan's levels, a cost's CPU, or a
/// suite, saved test by test as it goes), and not a `saturate --bucket`, which measured its
/// own and ran its steps with the bucket spent.
pub fn applies_to(run: &RunResult) -> bool {
    use RunCommand::*;
    let own = run.saturation.as_ref().is_some_and(|s| s.bucket.is_some());
    let command = matches!(
        run.command,
        Some(Run | Sqlio | Diskspd | Saturate | Scaleup | Preflight)
    );
    command && !own
}

/// Whether two targets are one volume as the store records them: the same block device where
/// both were told, else the same path as given.
pub fn same_target(a: &TargetResult, b: &TargetResult) -> bool {
    match (&a.device, &b.device) {
        (Some(x), Some(y)) => x == y,
        _ => a.path == b.path,
    }
}

/// The targets of the bucket `stored` measured: its drain's, the run's first test.
fn bucket_targets(stored: &RunResult) -> &[TargetResult] {
    stored.tests.first().map_or(&[], |t| t.targets.as_slice())
}

/// Whether `stored` is a run that measured a bucket on one of `run`'s targets, on its host:
/// the one that decides, newest first, whether `run` is warned. A bucket that found no burst
/// decides too (the newest measurement says there is none), unless its run was cut short (its
/// drain may have stopped before the drop); one that found its credits decides however the
/// steps after it ended.
pub fn decides(stored: &RunResult, run: &RunResult) -> bool {
    let bucket = stored.saturation.as_ref().and_then(|s| s.bucket.as_ref());
    bucket.is_some_and(|b| b.credit_ios.is_some() || stored.cut_short().is_none())
        && stored.host.hostname == run.host.hostname
        && bucket_targets(stored).iter().any(|b| {
            run.tests
                .iter()
                .flat_map(|t| &t.targets)
                .any(|t| same_target(b, t))
        })
}

/// The bucket `stored` measured, as a run is held against it (with no tests yet); `None`
/// without one, or when it found no burst (no drop, or a baseline of 0: a device that stopped).
pub fn stored(stored: &RunResult) -> Option<StoredBucket> {
    let b = stored.saturation.as_ref()?.bucket.as_ref()?;
    let drain = stored.tests.first()?;
    let (credit_ios, baseline_iops) = (b.credit_ios?, b.baseline_iops?);
    let ok = |v: f64| v.is_finite() && v > 0.0;
    if !(ok(credit_ios) && ok(baseline_iops) && b.bs_bytes > 0) {
        return None;
    }
    Some(StoredBucket {
        run_id: stored.run_id.clone(),
        started_at: stored.started_at.clone(),
        rw: drain.spec.rw,
        write_pct: drain.spec.write_pct,
        bs_bytes: b.bs_bytes,
        credit_ios,
        credit_bytes: credit_ios * b.bs_bytes as f64,
        peak_iops: b.peak_iops.unwrap_or(0.0),
        baseline_iops,
        burst_s: b.burst_s.unwrap_or(0.0),
        inside: vec![],
    })
}

/// Whether the bucket was drained by writes alone: a write cache, maybe, which reads do not
/// spend.
fn writes_only(b: &StoredBucket) -> bool {
    b.write_pct >= 100
}

/// What test `i` (with the tests of its group) did on the bucket's targets: the I/Os and bytes
/// the bucket counts, the measured window, and the seconds they ran with the warm-up.
fn spent(run: &RunResult, i: usize, b: &StoredBucket, on: &[TargetResult]) -> (f64, f64, f64, f64) {
    let t = &run.tests[i];
    let members: Vec<&TestResult> = match t.group {
        Some(g) => run.tests.iter().filter(|x| x.group == Some(g)).collect(),
        None => vec![t],
    };
    let (mut ios, mut bytes, mut window, mut ran) = (0.0, 0.0, 0.0_f64, 0.0_f64);
    for m in &members {
        for x in m
            .targets
            .iter()
            .filter(|x| on.iter().any(|o| same_target(o, x)))
        {
            let ops: &OpStats = if writes_only(b) { &x.write } else { &x.total };
            ios += ops.ios as f64;
            bytes += ops.bytes as f64;
        }
        window = window.max(m.duration_s);
        ran = ran.max(m.duration_s + m.spec.warmup_s.max(0.0));
    }
    (ios, bytes, window, ran)
}

/// Seconds as a sentence says them: one decimal below 10 s, whole seconds above.
fn secs(s: f64) -> String {
    if s < 10.0 {
        let t = format!("{s:.1}");
        t.strip_suffix(".0").map_or(t.clone(), str::to_string)
    } else {
        format!("{s:.0}")
    }
}

/// Test `i` held against the bucket, if it may have run inside the burst.
fn held(run: &RunResult, i: usize, b: &StoredBucket, on: &[TargetResult]) -> Option<InsideBurst> {
    let (ios, bytes, window, ran) = spent(run, i, b, on);
    if !(window > 0.0 && ios > 0.0) {
        return None;
    }
    let (iops, bytes_per_s) = (ios / window, bytes / window);
    let base_bytes = b.baseline_iops * b.bs_bytes as f64;
    // the seconds a full bucket lasts at `rate`, if the test ran above the baseline and ended
    // before that
    let lasts = |rate: f64, base: f64, credit: f64| {
        let above = rate - base;
        (rate > base * (1.0 + AT_BASELINE) && above * ran <= credit).then(|| credit / above)
    };
    let in_ios = lasts(iops, b.baseline_iops, b.credit_ios);
    let in_bytes = lasts(bytes_per_s, base_bytes, b.credit_bytes);
    let (counted_in, burst_at_rate_s) = match (in_ios, in_bytes) {
        (Some(s), Some(_)) => (CountedIn::IosAndBytes, s),
        (Some(s), None) => (CountedIn::Ios, s),
        (None, Some(s)) => (CountedIn::Bytes, s),
        (None, None) => return None,
    };
    let mut inside = InsideBurst {
        test_idx: i as u32,
        counted_in,
        iops,
        bytes_per_s,
        ran_s: ran,
        burst_at_rate_s,
        sentence: String::new(),
    };
    let warmed = ran > window;
    inside.sentence = sentence(&run.tests[i].name, &inside, b, warmed);
    Some(inside)
}

/// `randread 8K qd 4: 950 IOPS for 2 s, shorter than the 4.2 s a full bucket lasts at that
/// rate, so its figures may be the burst's: ...; plan on 200 IOPS` (`over 7 s with its
/// warm-up` where `warmed`).
pub fn sentence(test_name: &str, t: &InsideBurst, b: &StoredBucket, warmed: bool) -> String {
    let writes = if writes_only(b) { "write " } else { "" };
    let mb = |v: f64| format!("{:.1} MB/s", v / 1e6);
    let base_bytes = b.baseline_iops * b.bs_bytes as f64;
    let (rate, how, plan) = match t.counted_in {
        CountedIn::Bytes => (mb(t.bytes_per_s), " counted in bytes", mb(base_bytes)),
        CountedIn::Ios => (
            format!("{} {writes}IOPS", count(t.iops)),
            " counted in I/Os",
            format!("{} {writes}IOPS", count(b.baseline_iops)),
        ),
        CountedIn::IosAndBytes => (
            format!("{} {writes}IOPS", count(t.iops)),
            "",
            format!("{} {writes}IOPS", count(b.baseline_iops)),
        ),
    };
    let date = b.started_at.get(..10).unwrap_or(&b.started_at);
    let ran = if warmed {
        format!("over {} s with its warm-up", secs(t.ran_s))
    } else {
        format!("for {} s", secs(t.ran_s))
    };
    format!(
        "{test_name}: {rate} {ran}, shorter than the {} s a full bucket lasts at that \
         rate{how}, so its figures may be the burst's: run {} ({date}, {} {}) measured {} I/Os \
         of credits above a baseline of {} IOPS ({}); plan on {plan}",
        secs(t.burst_at_rate_s),
        b.run_id,
        b.rw.name(),
        format_bytes(b.bs_bytes),
        count(b.credit_ios),
        count(b.baseline_iops),
        mb(base_bytes),
    )
}

/// The tests of `run` that may have run inside the burst of the bucket `b`, measured on
/// `on`.
pub fn inside(run: &RunResult, b: &StoredBucket, on: &[TargetResult]) -> Vec<InsideBurst> {
    let dropped: Vec<u32> = run
        .saturation
        .as_ref()
        .map(|s| s.drops.iter().map(|d| d.test_idx).collect())
        .unwrap_or_default();
    (0..run.tests.len())
        .filter(|&i| run.tests[i].error.is_none() && !dropped.contains(&(i as u32)))
        .filter_map(|i| held(run, i, b, on))
        .collect()
}

/// Holds `run` against the bucket `stored` measured (a run for which [`decides`] holds): sets
/// `run.stored_bucket`, and adds each flagged test's sentence to its warnings (to preflight's
/// warnings for a preflight, whose view lists those). Nothing when the command is not one
/// this applies to ([`applies_to`]) or `stored` found no burst.
pub fn hold(run: &mut RunResult, stored_run: &RunResult) {
    let Some(mut b) = stored(stored_run).filter(|_| applies_to(run)) else {
        return;
    };
    b.inside = inside(run, &b, bucket_targets(stored_run));
    for t in &b.inside {
        let w = t.sentence.clone();
        match run.preflight.as_mut() {
            Some(p) => p.warnings.push(w),
            None => run.tests[t.test_idx as usize].warnings.push(w),
        }
    }
    run.stored_bucket = Some(b);
}

#[cfg(test)]
mod tests {
    use super::*;
    use iocap_model::fixture::{run as fixture, FixtureRun};
    use iocap_model::{BurstBucket, Preflight, RwMode, Saturation};

    const HOUR: u64 = 3600;

    /// A stored `saturate --bucket` on /data (device nvme0n1p2): 3,200 credits of 8K reads, a
    /// baseline of 200 IOPS and a peak of 1,000.
    fn stored_run() -> RunResult {
        let mut r = fixture(&FixtureRun {
            iops: 1000.0,
            duration_s: 5,
            ..FixtureRun::default()
        });
        r.command = Some(RunCommand::Saturate);
        r.saturation = Some(Saturation {
            bucket: Some(BurstBucket {
                bs_bytes: 8192,
                qd: 32,
                peak_iops: Some(1000.0),
                baseline_iops: Some(200.0),
                burst_s: Some(4.0),
                credit_ios: Some(3200.0),
                ..BurstBucket::default()
            }),
            ..Saturation::default()
        });
        r
    }

    /// A `run` an hour later of one test at `iops` for `secs` (no warm-up), of `bs` reads or
    /// writes.
    fn later(iops: f64, secs: u32, bs: u64, rw: RwMode) -> RunResult {
        let mut r = fixture(&FixtureRun {
            iops,
            duration_s: secs,
            bs_bytes: bs,
            rw,
            started_unix_s: FixtureRun::default().started_unix_s + HOUR,
            ..FixtureRun::default()
        });
        r.command = Some(RunCommand::Run);
        r.tests[0].spec.warmup_s = 0.0;
        r
    }

    fn held_against(mut r: RunResult, stored: &RunResult) -> RunResult {
        assert!(decides(stored, &r));
        hold(&mut r, stored);
        r
    }

    #[test]
    fn a_test_shorter_than_the_burst_at_its_rate_is_warned_with_the_baseline() {
        let r = held_against(later(950.0, 2, 8192, RwMode::RandRead), &stored_run());
        let b = r.stored_bucket.as_ref().unwrap();
        assert_eq!((b.credit_ios, b.baseline_iops), (3200.0, 200.0));
        assert_eq!(b.credit_bytes, 3200.0 * 8192.0);
        let t = &b.inside[0];
        assert_eq!((t.test_idx, t.counted_in), (0, CountedIn::IosAndBytes));
        // 3,200 credits over 750 IOPS above the baseline
        assert!((t.burst_at_rate_s - 3200.0 / 750.0).abs() < 0.01, "{t:?}");
        assert_eq!(t.ran_s, 2.0);
        let w = &r.tests[0].warnings;
        assert_eq!(w, &vec![t.sentence.clone()]);
        assert!(
            t.sentence.starts_with(
                "randread 8K: 950 IOPS for 2 s, shorter than the 4.3 s a full bucket lasts at \
                 that rate, so its figures may be the burst's: run "
            ),
            "{}",
            t.sentence
        );
        assert!(
            t.sentence.contains(
                "(2026-11-22, randread 8K) measured 3,200 I/Os of credits above a baseline of \
                 200 IOPS (1.6 MB/s); plan on 200 IOPS"
            ),
            "{}",
            t.sentence
        );
    }

    #[test]
    fn a_test_longer_than_the_burst_or_at_the_baseline_is_not_warned() {
        let stored = stored_run();
        // 7,500 I/Os above the baseline: the bucket ran out inside it
        let r = held_against(later(950.0, 10, 8192, RwMode::RandRead), &stored);
        assert!(r.stored_bucket.as_ref().unwrap().inside.is_empty());
        assert!(r.tests[0].warnings.is_empty());
        // at the baseline, whatever the bucket held
        let r = held_against(later(210.0, 2, 8192, RwMode::RandRead), &stored);
        assert!(r.stored_bucket.unwrap().inside.is_empty());
        // the warm-up spent credits too: 2 s measured after 3 s of warm-up is 3,750 above
        let mut w = later(950.0, 2, 8192, RwMode::RandRead);
        w.tests[0].spec.warmup_s = 3.0;
        let r = held_against(w, &stored);
        assert!(r.stored_bucket.unwrap().inside.is_empty());
    }

    #[test]
    fn another_size_is_held_against_the_credits_in_ios_and_in_bytes() {
        let stored = stored_run();
        // 64K at 300 IOPS for 2 s: 200 I/Os above the baseline, but 36 MB above its bytes
        let r = held_against(later(300.0, 2, 65536, RwMode::RandRead), &stored);
        let t = &r.stored_bucket.unwrap().inside[0];
        assert_eq!(t.counted_in, CountedIn::Ios);
        assert!(t.sentence.contains("counted in I/Os"), "{}", t.sentence);
        // 4K at 3,000 IOPS for 2 s: 5,600 I/Os above, but 21 MB of the 26 MB of credits
        let r = held_against(later(3000.0, 2, 4096, RwMode::RandRead), &stored);
        let t = &r.stored_bucket.unwrap().inside[0];
        assert_eq!(t.counted_in, CountedIn::Bytes);
        assert!(
            t.sentence.starts_with("randread 4K: 12.3 MB/s for 2 s")
                && t.sentence.contains("counted in bytes")
                && t.sentence.ends_with("plan on 1.6 MB/s"),
            "{}",
            t.sentence
        );
    }

    #[test]
    fn a_bucket_drained_by_writes_holds_only_writes() {
        let mut stored = stored_run();
        stored.tests[0].spec.rw = RwMode::RandWrite;
        stored.tests[0].spec.write_pct = 100;
        let read = held_against(later(950.0, 2, 8192, RwMode::RandRead), &stored);
        assert!(read.stored_bucket.unwrap().inside.is_empty());
        let mut write = later(950.0, 2, 8192, RwMode::RandWrite);
        let x = &mut write.tests[0].targets[0];
        x.write = x.total.clone();
        let write = held_against(write, &stored);
        let t = &write.stored_bucket.unwrap().inside[0];
        assert!(t.sentence.contains("950 write IOPS"), "{}", t.sentence);
        assert!(
            t.sentence.ends_with("plan on 200 write IOPS"),
            "{}",
            t.sentence
        );
    }

    #[test]
    fn the_target_is_matched_by_device_else_by_path_on_the_same_host() {
        let stored = stored_run();
        let mut r = later(950.0, 2, 8192, RwMode::RandRead);
        // another file on the same device: the same volume, the same bucket
        r.tests[0].targets[0].path = "/data/other.dat".into();
        assert!(decides(&stored, &r));
        r.tests[0].targets[0].device = Some("nvme1n1".into());
        assert!(!decides(&stored, &r), "another device");
        // no device told (FUSE): the same path as given
        let mut fuse = stored.clone();
        fuse.tests[0].targets[0].device = None;
        let mut r = later(950.0, 2, 8192, RwMode::RandRead);
        assert!(decides(&fuse, &r));
        r.tests[0].targets[0].path = "/mnt/other.dat".into();
        assert!(!decides(&fuse, &r));
        let mut elsewhere = later(950.0, 2, 8192, RwMode::RandRead);
        elsewhere.host.hostname = "db02".into();
        assert!(!decides(&stored, &elsewhere), "another host");
    }

    #[test]
    fn no_burst_a_cut_short_drain_or_a_run_s_own_bucket_warns_nothing() {
        let mut none = stored_run();
        let b = none.saturation.as_mut().unwrap().bucket.as_mut().unwrap();
        b.credit_ios = None;
        b.baseline_iops = None;
        let r = held_against(later(950.0, 2, 8192, RwMode::RandRead), &none);
        assert!(r.stored_bucket.is_none() && r.tests[0].warnings.is_empty());
        // a drain cut short before its drop is no measurement; the steps cut short after it
        // leave the credits measured
        let mut cut = none.clone();
        cut.interrupted_by = Some("SIGINT".into());
        assert!(!decides(&cut, &later(950.0, 2, 8192, RwMode::RandRead)));
        let mut steps_cut = stored_run();
        steps_cut.interrupted_by = Some("SIGINT".into());
        assert!(decides(
            &steps_cut,
            &later(950.0, 2, 8192, RwMode::RandRead)
        ));
        let mut own = later(950.0, 2, 8192, RwMode::RandRead);
        own.command = Some(RunCommand::Saturate);
        own.saturation = stored_run().saturation;
        hold(&mut own, &stored_run());
        assert!(own.stored_bucket.is_none());
        let mut scan = later(950.0, 2, 8192, RwMode::RandRead);
        scan.command = Some(RunCommand::Cachescan);
        hold(&mut scan, &stored_run());
        assert!(scan.stored_bucket.is_none());
    }

    #[test]
    fn preflight_says_it_in_its_warnings_and_a_group_spends_one_bucket() {
        let mut r = later(500.0, 2, 8192, RwMode::RandRead);
        r.command = Some(RunCommand::Preflight);
        r.preflight = Some(Preflight::default());
        let r = held_against(r, &stored_run());
        let p = r.preflight.as_ref().unwrap();
        assert_eq!(p.warnings.len(), 1, "{p:?}");
        assert!(r.tests[0].warnings.is_empty());
        // two tests at 500 IOPS at once spend 800 a second above the baseline together: 5 s
        // outlast the 3,200 credits, where each alone (300 above) would not
        let mut g = later(500.0, 5, 8192, RwMode::RandRead);
        g.tests[0].group = Some(1);
        g.tests.push(g.tests[0].clone());
        let alone = inside(
            &g,
            &stored(&stored_run()).unwrap(),
            &stored_run().tests[0].targets,
        );
        assert!(alone.is_empty(), "{alone:?}");
        g.tests[1].group = None;
        let apart = inside(
            &g,
            &stored(&stored_run()).unwrap(),
            &stored_run().tests[0].targets,
        );
        assert_eq!(apart.len(), 2, "{apart:?}");
    }
}

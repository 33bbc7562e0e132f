//! Merging one test's results from several ranks: sums, percentiles from the added histograms,
//! the per-rank scope, the slow host flagged, the fault naming its rank.

use iocap_model::fixture::{run, FixtureRun};
use iocap_model::hist::{decode_hist, quantile_us};
use iocap_model::{IoFault, JobSpec, TargetSpec, TestResult};
use iocap_session::{merge_test, place, RankPart};

fn part(rank: u32, iops: f64, p50_us: f64, start_ns: u64) -> RankPart {
    let r = run(&FixtureRun {
        iops,
        p50_us,
        salt: u64::from(rank),
        targets: vec![format!("/data/r{rank}/iocap.testfile")],
        ..FixtureRun::default()
    });
    RankPart {
        rank,
        host: format!("db{rank:02}"),
        start_ns,
        result: r.tests.into_iter().next().unwrap(),
        host_info: Some(r.host),
    }
}

fn parts() -> Vec<RankPart> {
    vec![
        part(0, 40_000.0, 180.0, 1_000_000_000),
        part(1, 42_000.0, 170.0, 1_000_071_000),
        part(2, 20_000.0, 400.0, 1_000_143_000),
        part(3, 41_000.0, 175.0, 1_000_010_000),
    ]
}

#[test]
fn totals_are_sums_and_percentiles_come_from_the_added_histograms() {
    let ps = parts();
    let m = merge_test(ps.clone());
    let sum = |f: fn(&TestResult) -> f64| ps.iter().map(|p| f(&p.result)).sum::<f64>();
    assert_eq!(
        m.total.ios,
        ps.iter().map(|p| p.result.total.ios).sum::<u64>()
    );
    assert!((m.total.iops - sum(|t| t.total.iops)).abs() < 1e-6);
    assert!((m.total.mb_s - sum(|t| t.total.mb_s)).abs() < 1e-6);
    // the p99 of all I/Os together, not the mean of the ranks' p99s
    let mut h = decode_hist(ps[0].result.total.lat_hist_ns.as_ref().unwrap()).unwrap();
    for p in &ps[1..] {
        h.add(decode_hist(p.result.total.lat_hist_ns.as_ref().unwrap()).unwrap())
            .unwrap();
    }
    let lat = m.total.lat_us.as_ref().unwrap();
    assert_eq!(lat.p99, quantile_us(&h, 0.99));
    let mean_of_p99s = ps
        .iter()
        .map(|p| p.result.total.lat_us.as_ref().unwrap().p99)
        .sum::<f64>()
        / 4.0;
    assert!(
        (lat.p99 - mean_of_p99s).abs() > 1.0,
        "{} vs {mean_of_p99s}",
        lat.p99
    );
    // the mean is weighted by I/Os
    let weighted = ps
        .iter()
        .map(|p| p.result.total.lat_us.as_ref().unwrap().mean * p.result.total.ios as f64)
        .sum::<f64>()
        / m.total.ios as f64;
    assert!((lat.mean - weighted).abs() < 1e-6);
    // the seconds add up, and so do the threads' in-flight I/Os
    assert!(
        (m.per_second[0].iops - ps.iter().map(|p| p.result.per_second[0].iops).sum::<f64>()).abs()
            < 1e-6
    );
    assert_eq!(m.targets.len(), 4);
    assert!(m.targets[2].path.starts_with("db02:/data/r2/"));
}

#[test]
fn the_scope_keeps_every_rank_and_flags_the_slow_one() {
    let m = merge_test(parts());
    let r = m.ranks.as_ref().unwrap();
    assert_eq!(r.ranks.len(), 4);
    assert_eq!(r.start_spread_us, 143.0);
    assert_eq!(r.ranks[1].start_offset_us, 71.0);
    let slow: Vec<u32> = r
        .ranks
        .iter()
        .filter(|s| s.below_median)
        .map(|s| s.rank)
        .collect();
    assert_eq!(slow, vec![2], "only the host at half the median's IOPS");
    assert_eq!(r.ranks[2].host, "db02");
    assert_eq!(r.ranks[2].result.total.iops, 20_000.0);
}

#[test]
fn a_fault_names_the_rank_and_its_host() {
    let mut ps = parts();
    ps[3].result.error = Some(IoFault {
        op: iocap_model::FaultOp::Read,
        path: "/data/r3/iocap.testfile".into(),
        offset_bytes: 81920,
        len_bytes: 8192,
        errno: 5,
        message: "Input/output error (os error 5)".into(),
    });
    let m = merge_test(ps);
    let e = m.error.unwrap().to_string();
    assert!(
        e.contains("rank 3 on db03") && e.contains("offset 81920") && e.starts_with("read"),
        "{e}"
    );
}

#[test]
fn targets_are_placed_per_host_and_rank() {
    let s = JobSpec {
        targets: vec![
            TargetSpec::new("/shared/{host}/t{rank}.dat"),
            TargetSpec::new("/local/t"),
        ],
        ..JobSpec::default()
    };
    let p = place(&s, "db07", 3);
    assert_eq!(p.targets[0].path, "/shared/db07/t3.dat");
    assert_eq!(p.targets[1].path, "/local/t");
}

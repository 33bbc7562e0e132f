use crate::scaleup::*;
use crate::tests::test;
use iocap_model::{RwMode, TestResult};

fn vol(iops: f64) -> TestResult {
    test(RwMode::RandRead, iops, 8192, 200.0, 900.0)
}

#[test]
fn linear_and_sub_linear() {
    let a = [vol(40_000.0), vol(40_000.0), vol(40_000.0), vol(40_000.0)];
    let alone: Vec<(String, &TestResult, u32)> = a
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("/v{i}"), t, i as u32))
        .collect();
    let two = vol(80_000.0);
    let four = vol(100_000.0);
    let paths = |n: usize| (0..n).map(|i| format!("/v{i}")).collect::<Vec<_>>();
    let s = scaleup(&alone, &[(paths(2), &two, 4), (paths(4), &four, 5)]);
    assert!(s.alone.iter().all(|v| !v.slow));
    assert!((s.together[0].efficiency_pct - 100.0).abs() < 0.01);
    assert!((s.together[1].efficiency_pct - 62.5).abs() < 0.01);
    assert_eq!(s.together[1].test_idx, 5);
    // a path never tested alone is left out of the sum; none at all gives 0
    let s = scaleup(&alone, &[(vec!["/v0".into(), "/x".into()], &two, 6)]);
    assert!((s.together[0].efficiency_pct - 200.0).abs() < 0.01);
    let s = scaleup(&[], &[(vec!["/x".into()], &two, 6)]);
    assert_eq!(s.together[0].efficiency_pct, 0.0);
}

#[test]
fn large_blocks_are_judged_by_mb_s() {
    let one = test(RwMode::Read, 1000.0, 1 << 20, 2000.0, 5000.0);
    let mut both = test(RwMode::Read, 2000.0, 1 << 20, 2000.0, 5000.0);
    both.total.iops = 1.0; // would be ~0 % by IOPS
    let s = scaleup(
        &[("/a".into(), &one, 0), ("/b".into(), &one, 1)],
        &[(vec!["/a".into(), "/b".into()], &both, 2)],
    );
    assert!((s.together[0].efficiency_pct - 100.0).abs() < 0.01);
}

#[test]
fn one_slow_volume_is_flagged() {
    let a = [vol(40_000.0), vol(41_000.0), vol(39_000.0), vol(25_000.0)];
    let alone: Vec<(String, &TestResult, u32)> = a
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("/v{i}"), t, i as u32))
        .collect();
    let s = scaleup(&alone, &[]);
    let slow = s.slow_paths();
    assert_eq!(slow, ["/v3"]);
    // a lone volume has no peers
    assert!(!scaleup(&alone[3..], &[]).alone[0].slow);
}

#[test]
fn group_sizes_double_up_to_n() {
    assert_eq!(group_sizes(0), Vec::<usize>::new());
    assert_eq!(group_sizes(1), [1]);
    assert_eq!(group_sizes(3), [1, 2, 3]);
    assert_eq!(group_sizes(8), [1, 2, 4, 8]);
    assert_eq!(group_sizes(6), [1, 2, 4, 6]);
}

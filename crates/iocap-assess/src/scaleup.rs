//! Scale-up: test each volume alone, then 1, 2, 4, 8 together, and expect near-linear growth.
//! A volume that is slow alone, or a group that gains far less than its members' sum, points
//! at a shared bottleneck (an HBA, a link, a controller) or a misconfigured volume.
//!
//! Rules:
//! - The figure compared is MB/s when the test's block size is 64 KiB or more (sequential and
//!   large-block work is judged by bandwidth) and IOPS below that (page-sized random I/O).
//! - Efficiency is the group's aggregate over the sum of the same volumes measured alone, in
//!   percent. Volumes of a group with no alone measurement are left out of the sum; when the sum
//!   is zero the efficiency is 0.
//! - A volume is slow when its alone figure is more than [`SLOW_BELOW_MEDIAN_PCT`] (20 %) below
//!   the median of the *other* volumes; a lone volume has no peers and is never slow.

use iocap_model::{ScaleStep, ScaleUp, TestResult, VolumeAlone};

/// How far below its peers' median a volume must be to count as slow, in percent.
pub const SLOW_BELOW_MEDIAN_PCT: f64 = 20.0;

/// Block size from which a test is judged by MB/s rather than IOPS.
const BANDWIDTH_FROM_BS: u64 = 64 << 10;

fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// The figure a test is judged by: MB/s for blocks of 64 KiB and more, else IOPS.
fn figure(t: &TestResult) -> f64 {
    if t.spec.bs_bytes >= BANDWIDTH_FROM_BS {
        finite(t.total.mb_s)
    } else {
        finite(t.total.iops)
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Volumes alone and groups together into one scale-up record.
pub fn scaleup(
    alone: &[(String, &TestResult, u32)],
    together: &[(Vec<String>, &TestResult, u32)],
) -> ScaleUp {
    let figures: Vec<f64> = alone.iter().map(|(_, t, _)| figure(t)).collect();
    let alone_out = alone
        .iter()
        .enumerate()
        .map(|(i, (path, t, idx))| {
            let peers: Vec<f64> = figures
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, v)| *v)
                .collect();
            let slow = median(peers)
                .is_some_and(|m| figures[i] < m * (1.0 - SLOW_BELOW_MEDIAN_PCT / 100.0));
            VolumeAlone {
                path: path.clone(),
                test_idx: *idx,
                iops: finite(t.total.iops),
                mb_s: finite(t.total.mb_s),
                lat_us_p99: t.total.lat_us.as_ref().map(|l| l.p99),
                slow,
            }
        })
        .collect();
    let together_out = together
        .iter()
        .map(|(paths, t, idx)| {
            let sum: f64 = paths
                .iter()
                .filter_map(|p| alone.iter().position(|(q, _, _)| q == p))
                .map(|i| figures[i])
                .sum();
            let efficiency_pct = if sum > 0.0 {
                figure(t) / sum * 100.0
            } else {
                0.0
            };
            ScaleStep {
                test_idx: *idx,
                paths: paths.clone(),
                iops: finite(t.total.iops),
                mb_s: finite(t.total.mb_s),
                efficiency_pct,
            }
        })
        .collect();
    ScaleUp {
        alone: alone_out,
        together: together_out,
    }
}

/// Group sizes to test: 1, 2, 4, 8, ... up to `n`, and `n` itself when it is not a power of
/// two. Empty for `n == 0`.
pub fn group_sizes(n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut g = 1usize;
    while g <= n {
        out.push(g);
        match g.checked_mul(2) {
            Some(next) => g = next,
            None => break,
        }
    }
    if n > 0 && out.last() != Some(&n) {
        out.push(n);
    }
    out
}

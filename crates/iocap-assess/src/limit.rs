//! A cap or the device's own limit, from saturate's sweep over block sizes at one depth.
//!
//! A policy's cap counts I/Os or bytes; a device runs out of something that grows with the
//! size (transfer time, bandwidth). So, over sizes at least [`MIN_SIZE_RATIO`] apart, past the
//! knee:
//! - **an IOPS cap** keeps IOPS within [`FLAT_PCT`] of their median while MB/s grows with the
//!   size;
//! - **a throughput cap** keeps MB/s within [`FLAT_PCT`];
//! - **the device** does neither.
//!
//! Flat alone is not enough: a seek-bound disk reads 4K and 64K at nearly the same IOPS. A cap
//! also runs differently in time. It grants each second the same count (blk-throttle's
//! per-second IOPS vary by nothing at all; a device's by a few percent, more on a busy host),
//! or it paces each request evenly (a narrow p99/p50). So a flat sweep is called a cap when its
//! points also ran steady, their per-second IOPS within [`STEADY_PCT`] of their median (the
//! median absolute deviation, and the median over the points, so one slow second or one point
//! a busy host disturbed does not hide it), or their
//! latency was narrow, p99/p50 at most [`CAP_P99_OVER_P50`]. Latency near depth ÷ rate is no
//! tell: Little's law gives every saturated queue that mean, and blk-throttle's median is far
//! from it (it releases a slice's budget at once and holds the rest to the next slice). A cap
//! at exactly the device's own limit cannot be told from the device.

use iocap_model::{Limit, LimitKind, RateUnit, SizePoint};

use crate::fmt;

/// Points within this many percent of their median count as flat.
pub const FLAT_PCT: f64 = 10.0;

/// The largest median absolute deviation of the points' per-second IOPS, in percent of their
/// median (the median over the points), that counts as a cap's steadiness. blk-throttle's
/// read 0.0 to 0.3 % on a quiet host, and 1.08 % at 32 MiB/s (512 I/Os a second at 64K)
/// while the whole test suite, fio and two CPU hogs shared two cores: a completion seen 10 ms
/// late moves 5 of them into the next second. A seek-bound disk's seconds stray by several
/// percent (about 8 % at 150 random IOPS, counting alone).
pub const STEADY_PCT: f64 = 2.0;

/// The widest p99/p50 that counts as a cap's even pacing.
pub const CAP_P99_OVER_P50: f64 = 1.5;

/// The smallest ratio of the largest size to the smallest for a judgement.
pub const MIN_SIZE_RATIO: f64 = 4.0;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The largest distance of `v` from `m`, in percent of `m`.
fn spread_pct(v: &[f64], m: f64) -> f64 {
    v.iter()
        .map(|x| (x / m - 1.0).abs() * 100.0)
        .fold(0.0, f64::max)
}

fn max_of(v: impl Iterator<Item = f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
}

/// How steady the points ran: over the points of three seconds or more, the median of each
/// one's median absolute deviation of its per-second IOPS, in percent of its median (medians
/// twice, so a slow second, or one point a busy host disturbed, does not hide a cap).
fn steadiness(points: &[&SizePoint]) -> Option<f64> {
    let each: Vec<f64> = points
        .iter()
        .filter(|p| p.per_second_iops.len() >= 3)
        .map(|p| {
            let m = median(p.per_second_iops.clone());
            let dev = p.per_second_iops.iter().map(|x| (x - m).abs()).collect();
            median(dev) / m * 100.0
        })
        .filter(|v| v.is_finite())
        .collect();
    (!each.is_empty()).then(|| median(each))
}

/// The largest p99/p50 of the points.
fn latency_spread(points: &[&SizePoint]) -> Option<f64> {
    max_of(
        points
            .iter()
            .filter_map(|p| Some(p.lat_us_p99? / p.lat_us_p50?)),
    )
}

/// The sweep's points that measured I/O, smallest size first.
fn usable(sweep: &[SizePoint]) -> Vec<&SizePoint> {
    let mut v: Vec<&SizePoint> = sweep
        .iter()
        .filter(|p| p.iops.is_finite() && p.iops > 0.0 && p.mb_s.is_finite())
        .collect();
    v.sort_by_key(|p| p.bs_bytes);
    v
}

/// The step of a ramp the sweep runs at: the deepest whose IOPS are within [`FLAT_PCT`] of
/// the highest, so past the knee where the limit holds at every size.
pub fn sweep_step(steps: &[iocap_model::CurvePoint]) -> Option<&iocap_model::CurvePoint> {
    let max = max_of(steps.iter().map(|p| p.iops))?;
    steps
        .iter()
        .filter(|p| p.iops.is_finite() && p.iops >= max * (1.0 - FLAT_PCT / 100.0))
        .max_by_key(|p| p.qd)
}

/// The limit the sweep shows; `device_iops` is the highest IOPS of the ramp (the device's
/// rate when no cap is found). `None` when the sweep has fewer than two sizes
/// [`MIN_SIZE_RATIO`] apart.
pub fn judge_limit(sweep: &[SizePoint], device_iops: f64) -> Option<Limit> {
    let pts = usable(sweep);
    let (lo, hi) = (pts.first()?, pts.last()?);
    let size_ratio = hi.bs_bytes as f64 / lo.bs_bytes as f64;
    if size_ratio < MIN_SIZE_RATIO {
        return None;
    }
    let iops: Vec<f64> = pts.iter().map(|p| p.iops).collect();
    let mbs: Vec<f64> = pts.iter().map(|p| p.mb_s).collect();
    let (m_iops, m_mbs) = (median(iops.clone()), median(mbs.clone()));
    let flat = Flat {
        iops_pct: spread_pct(&iops, m_iops),
        mb_s_pct: spread_pct(&mbs, m_mbs),
    };
    let mut l = Limit {
        kind: LimitKind::Device,
        rate: device_iops,
        rate_unit: RateUnit::Iops,
        spread_pct: flat.iops_pct,
        iops_ratio: hi.iops / lo.iops,
        mb_s_ratio: hi.mb_s / lo.mb_s,
        size_ratio,
        per_second_mad_pct: steadiness(&pts),
        p99_over_p50: latency_spread(&pts),
        evidence: Vec::new(),
        sentence: String::new(),
    };
    if runs_like_a_cap(&l) {
        if flat.iops_pct <= FLAT_PCT {
            (l.kind, l.rate) = (LimitKind::IopsCap, m_iops);
        } else if flat.mb_s_pct <= FLAT_PCT {
            l.kind = LimitKind::ThroughputCap;
            (l.rate, l.rate_unit, l.spread_pct) = (m_mbs * 1e6, RateUnit::BytesPerS, flat.mb_s_pct);
        }
    }
    let sizes = format!("{} to {}", fmt::bytes(lo.bs_bytes), fmt::bytes(hi.bs_bytes));
    l.evidence = evidence(&l, &sizes, lo.outstanding, &flat);
    l.sentence = sentence(&l, &sizes);
    Some(l)
}

/// Steady per second, or evenly paced; with neither figure (points too short, no
/// latencies), the sizes alone decide.
fn runs_like_a_cap(l: &Limit) -> bool {
    match (l.per_second_mad_pct, l.p99_over_p50) {
        (None, None) => true,
        (steady, spread) => {
            steady.is_some_and(|s| s <= STEADY_PCT) || spread.is_some_and(|w| w <= CAP_P99_OVER_P50)
        }
    }
}

struct Flat {
    iops_pct: f64,
    mb_s_pct: f64,
}

fn evidence(l: &Limit, sizes: &str, depth: u32, f: &Flat) -> Vec<String> {
    let flat = match (f.iops_pct <= FLAT_PCT, f.mb_s_pct <= FLAT_PCT) {
        (true, _) => format!(": IOPS flat, within {:.0} % of their median", f.iops_pct),
        (_, true) => format!(": MB/s flat, within {:.0} % of their median", f.mb_s_pct),
        _ => format!(
            ": neither flat (IOPS within {:.0} %, MB/s {:.0} %)",
            f.iops_pct, f.mb_s_pct
        ),
    };
    let mut e = vec![format!(
        "from {sizes} ({:.0}x the size) at {depth} outstanding, IOPS changed {:.2}x and \
         MB/s {:.2}x{flat}",
        l.size_ratio, l.iops_ratio, l.mb_s_ratio
    )];
    e.push(match l.per_second_mad_pct {
        Some(s) => format!(
            "per second, IOPS strayed {s:.1} % from their median, the median over the sizes \
             (a cap's stray at most {STEADY_PCT:.0} %)"
        ),
        None => "no point ran three seconds: steadiness not judged".into(),
    });
    if let Some(w) = l.p99_over_p50 {
        e.push(format!(
            "p99/p50 was {w:.2} at most (an evenly paced cap's is at most {CAP_P99_OVER_P50})"
        ));
    }
    if (f.iops_pct <= FLAT_PCT || f.mb_s_pct <= FLAT_PCT) && l.kind == LimitKind::Device {
        e.push(
            "flat over the sizes, but neither steady per second nor evenly paced (a \
             seek-bound disk is flat too): not called a cap"
                .into(),
        );
    }
    e.push("a cap at exactly the device's own limit cannot be told from the device".into());
    e
}

fn sentence(l: &Limit, sizes: &str) -> String {
    let steady = match l.per_second_mad_pct {
        Some(s) if s <= STEADY_PCT => ", steady per second",
        _ => "",
    };
    match l.kind {
        LimitKind::IopsCap => format!(
            "an IOPS cap near {}: flat within {:.0} % over {sizes}{steady}",
            fmt::count(l.rate),
            l.spread_pct,
        ),
        LimitKind::ThroughputCap => format!(
            "a throughput cap near {:.1} MB/s: flat within {:.0} % over {sizes}{steady}",
            l.rate / 1e6,
            l.spread_pct,
        ),
        LimitKind::Device => format!(
            "the device's own limit, no cap seen: from {sizes} IOPS changed {:.2}x and MB/s \
             {:.2}x",
            l.iops_ratio, l.mb_s_ratio
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A point of `iops` at `kib` KiB with 32 outstanding, its seconds `jitter` (a fraction)
    /// apart from one another, and its p99 `spread` times its median.
    fn pt(kib: u64, iops: f64, jitter: f64, spread: f64) -> SizePoint {
        let p50 = 32.0 / iops * 1e6;
        SizePoint {
            test_idx: 0,
            bs_bytes: kib * 1024,
            qd: 32,
            outstanding: 32,
            iops,
            mb_s: iops * (kib * 1024) as f64 / 1e6,
            lat_us_mean: Some(p50),
            lat_us_p50: Some(p50),
            lat_us_p99: Some(p50 * spread),
            per_second_iops: [1.0, 1.0 + jitter, 1.0 - jitter, 1.0 + jitter, 1.0]
                .iter()
                .map(|f| iops * f)
                .collect(),
        }
    }

    /// blk-throttle's shape: flat IOPS, every second the same count, latency spread wide
    /// (it releases a slice's budget at once).
    #[test]
    fn flat_iops_granted_evenly_per_second_is_an_iops_cap() {
        let sweep = [
            pt(4, 3010.0, 0.0, 180.0),
            pt(8, 2990.0, 0.002, 200.0),
            pt(16, 3000.0, 0.0, 150.0),
            pt(64, 2950.0, 0.0, 60.0),
        ];
        let l = judge_limit(&sweep, 3010.0).unwrap();
        assert_eq!((l.kind, l.rate_unit), (LimitKind::IopsCap, RateUnit::Iops));
        assert!((l.rate / 3000.0 - 1.0).abs() < 0.01, "{l:?}");
        assert!(
            l.sentence.starts_with("an IOPS cap near 2,995"),
            "{}",
            l.sentence
        );
        assert!(l.sentence.contains("steady per second"), "{}", l.sentence);
        assert!(l.per_second_mad_pct.unwrap() < 0.3);
        assert!(l.mb_s_ratio > 15.0 && l.size_ratio == 16.0);
    }

    /// A cap that paces each request evenly is one too, however its seconds wander.
    #[test]
    fn flat_megabytes_evenly_paced_is_a_throughput_cap_in_bytes_per_second() {
        let mb = 200e6;
        let sweep: Vec<SizePoint> = [4u64, 16, 64]
            .iter()
            .map(|&k| pt(k, mb / (k * 1024) as f64, 0.05, 1.2))
            .collect();
        let l = judge_limit(&sweep, 48_000.0).unwrap();
        assert_eq!(l.kind, LimitKind::ThroughputCap);
        assert_eq!(l.rate_unit, RateUnit::BytesPerS);
        assert!((l.rate / mb - 1.0).abs() < 0.01, "{l:?}");
        assert!(l.sentence.contains("200.0 MB/s"), "{}", l.sentence);
    }

    #[test]
    fn a_device_whose_iops_fall_and_bytes_rise_is_not_capped() {
        let sweep = [
            pt(4, 100_000.0, 0.0, 2.5),
            pt(16, 60_000.0, 0.0, 2.0),
            pt(64, 18_000.0, 0.0, 1.8),
        ];
        let l = judge_limit(&sweep, 101_000.0).unwrap();
        assert_eq!((l.kind, l.rate), (LimitKind::Device, 101_000.0));
        assert!(l.sentence.starts_with("the device's own limit"));
    }

    /// A seek-bound disk reads 4K and 64K at nearly the same IOPS, but its seconds wander and
    /// its latency spreads: not a cap.
    #[test]
    fn flat_iops_wandering_and_spread_wide_is_the_device() {
        let sweep = [pt(4, 160.0, 0.04, 3.0), pt(64, 150.0, 0.03, 3.2)];
        let l = judge_limit(&sweep, 160.0).unwrap();
        assert_eq!(l.kind, LimitKind::Device);
        assert!(l.evidence.iter().any(|e| e.contains("not called a cap")));
        assert!(l.per_second_mad_pct.unwrap() > STEADY_PCT);
    }

    #[test]
    fn sizes_too_close_or_missing_give_no_judgement() {
        assert!(judge_limit(&[pt(4, 3000.0, 0.0, 1.0), pt(8, 3000.0, 0.0, 1.0)], 1.0).is_none());
        assert!(judge_limit(&[], 1.0).is_none());
        let mut dead = pt(64, 1.0, 0.0, 1.0);
        dead.iops = 0.0;
        assert!(judge_limit(&[pt(4, 3000.0, 0.0, 1.0), dead], 1.0).is_none());
    }

    #[test]
    fn the_sweep_runs_at_the_deepest_step_near_the_highest_iops() {
        let step = |qd, iops| iocap_model::CurvePoint {
            test_idx: 0,
            qd,
            load_pct: None,
            iops,
            mb_s: 0.0,
            lat_us_p50: None,
            lat_us_p99: None,
            per_second_iops: Vec::new(),
        };
        // blk-throttle's first step gets the slice's budget at once: 2,154, then 2,000 flat
        let steps = [
            step(1, 2154.0),
            step(2, 2000.0),
            step(4, 2000.0),
            step(8, 1990.0),
        ];
        assert_eq!(sweep_step(&steps).unwrap().qd, 8);
        let falling = [step(1, 100.0), step(2, 200.0), step(4, 150.0)];
        assert_eq!(sweep_step(&falling).unwrap().qd, 2);
        assert!(sweep_step(&[]).is_none());
    }
}

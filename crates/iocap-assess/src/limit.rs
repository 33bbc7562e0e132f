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
//!
//! Where the block layer's requests could be recorded (saturate's one extra test at the sweep's
//! depth, [`DriverTime`]), the device's own time per request is set beside iocap's: a throttle
//! in this host (blk-throttle) holds bios before they become requests, so the device's time
//! stays tiny while iocap's is depth ÷ rate. A cap's verdict with most of the time spent above
//! the driver ([`HELD_ABOVE_PCT`]) says it was held there; one with little
//! ([`IN_DEVICE_BELOW_PCT`]) says the cap is below the driver (a volume's, a hypervisor's) or
//! the device's own flat limit. Without the figure, the rule above stands alone.

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

/// The share of iocap's time spent above the driver from which a cap counts as held there,
/// as a throttle in this host holds it. Measured on a 2-core VM, saturate's 8K random reads on
/// a loop device over a file (direct I/O) of a virtio disk, the timed test at the sweep's
/// depth: under blk-throttle at 2,000 IOPS, 96 % (qd 32: device 675 µs of iocap's 15.7 ms);
/// at 32 MiB/s, 90 % (qd 16: 392 µs of 3.92 ms); a throttle at a shallow depth less (73 % at
/// qd 2, 1.05 ms, where a flaky ramp stopped early). The share grows with depth ÷ rate.
pub const HELD_ABOVE_PCT: f64 = 80.0;

/// The share of iocap's time spent above the driver below which a cap's requests waited in
/// the device: a cap below the driver, or the device's own flat limit. Measured as for
/// [`HELD_ABOVE_PCT`], the loop device alone: 27 %, 33 % and 37 % (qd 16: 346 µs of 474 µs;
/// qd 4: 259 of 388; qd 16: 340 of 537), the host's own time to submit and reap; with the
/// host's two cores busy with other builds and tests, 66 % and 72 % (qd 16: 876 µs of
/// 2.55 ms; qd 8: 154 µs of 549 µs), so a starved host's time counts above the driver too,
/// and only a cap's verdict, flat and steady already, takes the share into its words.
pub const IN_DEVICE_BELOW_PCT: f64 = 50.0;

/// The device's own time per request beside iocap's, from one test (the run's block size at
/// the sweep's depth) whose block requests were recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceTime {
    /// The test in `RunResult.tests`.
    pub test_idx: u32,
    /// Requests the device completed in the test's measured window, and iocap's I/Os there.
    pub requests: u64,
    pub iocap_ios: u64,
    /// Their mean time in the device (issue to completion), and iocap's mean latency, in µs.
    pub device_us_mean: f64,
    pub iocap_us_mean: f64,
}

impl DeviceTime {
    /// The share of iocap's time not spent in the device, in percent (0 to 100); `None`
    /// without a latency to divide by.
    pub fn above_driver_pct(&self) -> Option<f64> {
        let (d, i) = (self.device_us_mean, self.iocap_us_mean);
        (d.is_finite() && d >= 0.0 && i.is_finite() && i > 0.0)
            .then(|| ((1.0 - d / i) * 100.0).clamp(0.0, 100.0))
    }
}

/// What the judgement knows of the device's own time.
#[derive(Debug, Clone, PartialEq)]
pub enum DriverTime {
    Measured(DeviceTime),
    /// Not measured, and why: one note in the evidence (none when empty).
    NotMeasured(String),
}

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
/// rate when no cap is found), `driver` the device's own time where it was measured. `None`
/// when the sweep has fewer than two sizes [`MIN_SIZE_RATIO`] apart.
pub fn judge_limit(sweep: &[SizePoint], device_iops: f64, driver: &DriverTime) -> Option<Limit> {
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
        device_time_test_idx: None,
        device_requests: None,
        device_time_us_mean: None,
        iocap_lat_us_mean: None,
        above_driver_pct: None,
        evidence: Vec::new(),
        sentence: String::new(),
    };
    if let DriverTime::Measured(d) = driver {
        l.device_time_test_idx = Some(d.test_idx);
        l.device_requests = Some(d.requests);
        l.device_time_us_mean = Some(d.device_us_mean);
        l.iocap_lat_us_mean = Some(d.iocap_us_mean);
        l.above_driver_pct = d.above_driver_pct();
    }
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
    let last = l.evidence.len() - 1;
    match driver {
        DriverTime::Measured(d) => {
            if let Some(e) = driver_evidence(&l, d) {
                l.evidence.insert(last, e);
            }
        }
        DriverTime::NotMeasured(why) if !why.is_empty() => l.evidence.insert(
            last,
            format!("the device's own time was not measured: {why}"),
        ),
        DriverTime::NotMeasured(_) => {}
    }
    l.sentence = sentence(&l, &sizes);
    Some(l)
}

/// The device's time beside iocap's, in words, with what the share says of the verdict.
fn driver_evidence(l: &Limit, d: &DeviceTime) -> Option<String> {
    let share = l.above_driver_pct?;
    let cap = l.kind != LimitKind::Device;
    let means = if share >= HELD_ABOVE_PCT && cap {
        ": something holds them before the device, as a throttle does"
    } else if share >= HELD_ABOVE_PCT {
        ": something holds them before the device (a throttle, a queue deeper than the \
         device takes, or a host too busy to submit and reap them)"
    } else if share < IN_DEVICE_BELOW_PCT && cap {
        ": they waited in the device, not in this host; a cap that holds them there is below \
         the driver (a volume's or a hypervisor's), else the limit is the device's own"
    } else if share < IN_DEVICE_BELOW_PCT {
        ": they waited in the device"
    } else {
        ": partly held before the device"
    };
    let mut e = format!(
        "requests waited {share:.0} % of their time above the driver (device {} of {}, \
         {} requests){means}",
        iocap_model::figures::lat_us(d.device_us_mean),
        iocap_model::figures::lat_us(d.iocap_us_mean),
        fmt::count(d.requests as f64),
    );
    let per_io = d.requests as f64 / d.iocap_ios.max(1) as f64;
    if !(0.5..=2.0).contains(&per_io) {
        e.push_str(&format!(
            " (the device saw {} requests for iocap's {} I/Os: merged, split or another's, so \
             the times compare loosely)",
            fmt::count(d.requests as f64),
            fmt::count(d.iocap_ios as f64)
        ));
    }
    Some(e)
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
    // where the device's own time was measured, where the cap held the requests
    let (below, held) = match l.above_driver_pct {
        Some(p) if p >= HELD_ABOVE_PCT => (
            "",
            format!(", held above the driver ({p:.0} % of the time)"),
        ),
        Some(p) if p < IN_DEVICE_BELOW_PCT => (
            " below the driver, or the device's own limit",
            format!(
                ", but the requests spent {:.0} % of their time in the device",
                100.0 - p
            ),
        ),
        _ => ("", String::new()),
    };
    match l.kind {
        LimitKind::IopsCap => format!(
            "an IOPS cap near {}{below}: flat within {:.0} % over {sizes}{steady}{held}",
            fmt::count(l.rate),
            l.spread_pct,
        ),
        LimitKind::ThroughputCap => format!(
            "a throughput cap near {:.1} MB/s{below}: flat within {:.0} % over \
             {sizes}{steady}{held}",
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
        let l = judge_limit(&sweep, 3010.0, &none()).unwrap();
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
        let l = judge_limit(&sweep, 48_000.0, &none()).unwrap();
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
        let l = judge_limit(&sweep, 101_000.0, &none()).unwrap();
        assert_eq!((l.kind, l.rate), (LimitKind::Device, 101_000.0));
        assert!(l.sentence.starts_with("the device's own limit"));
    }

    /// A seek-bound disk reads 4K and 64K at nearly the same IOPS, but its seconds wander and
    /// its latency spreads: not a cap.
    #[test]
    fn flat_iops_wandering_and_spread_wide_is_the_device() {
        let sweep = [pt(4, 160.0, 0.04, 3.0), pt(64, 150.0, 0.03, 3.2)];
        let l = judge_limit(&sweep, 160.0, &none()).unwrap();
        assert_eq!(l.kind, LimitKind::Device);
        assert!(l.evidence.iter().any(|e| e.contains("not called a cap")));
        assert!(l.per_second_mad_pct.unwrap() > STEADY_PCT);
    }

    #[test]
    fn sizes_too_close_or_missing_give_no_judgement() {
        assert!(judge_limit(
            &[pt(4, 3000.0, 0.0, 1.0), pt(8, 3000.0, 0.0, 1.0)],
            1.0,
            &none()
        )
        .is_none());
        assert!(judge_limit(&[], 1.0, &none()).is_none());
        let mut dead = pt(64, 1.0, 0.0, 1.0);
        dead.iops = 0.0;
        assert!(judge_limit(&[pt(4, 3000.0, 0.0, 1.0), dead], 1.0, &none()).is_none());
    }

    fn none() -> DriverTime {
        DriverTime::NotMeasured(String::new())
    }

    /// The device's time `device_us` beside iocap's `iocap_us`, over as many requests as I/Os.
    fn timed(device_us: f64, iocap_us: f64) -> DriverTime {
        DriverTime::Measured(DeviceTime {
            test_idx: 7,
            requests: 60_000,
            iocap_ios: 60_000,
            device_us_mean: device_us,
            iocap_us_mean: iocap_us,
        })
    }

    /// blk-throttle's flat, steady sweep of 4K to 64K at 2,000 IOPS.
    fn throttled() -> Vec<SizePoint> {
        [4u64, 16, 64]
            .iter()
            .map(|&k| pt(k, 2000.0, 0.0, 200.0))
            .collect()
    }

    /// blk-throttle holds bios before they become requests: the device's time stays tiny while
    /// iocap's is depth ÷ rate. The cap's verdict says it was held above the driver.
    #[test]
    fn a_cap_whose_requests_waited_above_the_driver_is_held_there() {
        let l = judge_limit(&throttled(), 2150.0, &timed(400.0, 16_000.0)).unwrap();
        assert_eq!(l.kind, LimitKind::IopsCap, "{l:?}");
        assert_eq!(l.device_time_test_idx, Some(7));
        assert_eq!(l.device_requests, Some(60_000));
        assert_eq!(
            (l.device_time_us_mean, l.iocap_lat_us_mean),
            (Some(400.0), Some(16_000.0))
        );
        assert!((l.above_driver_pct.unwrap() - 97.5).abs() < 1e-9, "{l:?}");
        assert!(
            l.sentence
                .ends_with("steady per second, held above the driver (98 % of the time)"),
            "{}",
            l.sentence
        );
        let e = l.evidence.iter().find(|e| e.contains("above the driver"));
        let e = e.expect("the device's time in the evidence");
        assert!(
            e.starts_with("requests waited 98 % of their time above the driver (device 400 µs of 16.0 ms, 60,000 requests): something holds them before the device, as a throttle does"),
            "{e}"
        );
        // the caveat stays last
        assert!(l.evidence.last().unwrap().contains("cannot be told"));
    }

    /// A flat, steady sweep whose requests spent their time in the device is no throttle in
    /// this host: it stays a cap (a volume's or a hypervisor's is below the driver) but says
    /// it may be the device's own limit.
    #[test]
    fn a_flat_steady_sweep_timed_in_the_device_is_not_called_a_plain_cap() {
        let l = judge_limit(&throttled(), 2150.0, &timed(15_000.0, 16_000.0)).unwrap();
        assert_eq!(l.kind, LimitKind::IopsCap);
        assert!(
            l.sentence.starts_with(
                "an IOPS cap near 2,000 below the driver, or the device's own limit: flat"
            ),
            "{}",
            l.sentence
        );
        assert!(
            l.sentence
                .ends_with("but the requests spent 94 % of their time in the device"),
            "{}",
            l.sentence
        );
        assert!(l
            .evidence
            .iter()
            .any(|e| e.contains("not in this host") && e.contains("device's own")));
    }

    /// Where the time was not measured, the rule stands alone and the evidence says why.
    #[test]
    fn unmeasured_the_rule_is_unchanged_and_says_why() {
        let why = "a capture needs root".to_string();
        let l = judge_limit(&throttled(), 2150.0, &DriverTime::NotMeasured(why)).unwrap();
        let plain = judge_limit(&throttled(), 2150.0, &none()).unwrap();
        assert_eq!((l.kind, &l.sentence), (plain.kind, &plain.sentence));
        assert_eq!(l.above_driver_pct, None);
        assert!(l
            .evidence
            .contains(&"the device's own time was not measured: a capture needs root".into()));
        assert_eq!(l.evidence.len(), plain.evidence.len() + 1);
        assert!(!plain.evidence.iter().any(|e| e.contains("driver")));
        // a share between the two thresholds changes no verdict
        let mid = judge_limit(&throttled(), 2150.0, &timed(6_000.0, 16_000.0)).unwrap();
        assert_eq!(mid.sentence, plain.sentence);
        assert!(mid.evidence.iter().any(|e| e.contains("partly held")));
    }

    /// A device's verdict takes the share as evidence only; a device slower than iocap's
    /// clock (merged requests) counts as 0 % above, and counts that differ are said.
    #[test]
    fn a_device_keeps_its_verdict_and_the_share_is_evidence() {
        let sweep = [
            pt(4, 100_000.0, 0.0, 2.5),
            pt(16, 60_000.0, 0.0, 2.0),
            pt(64, 18_000.0, 0.0, 1.8),
        ];
        let mut t = timed(330.0, 320.0);
        if let DriverTime::Measured(d) = &mut t {
            d.requests = 20_000;
        }
        let l = judge_limit(&sweep, 101_000.0, &t).unwrap();
        assert_eq!(l.kind, LimitKind::Device);
        assert_eq!(l.above_driver_pct, Some(0.0));
        assert!(l.sentence.starts_with("the device's own limit"));
        let e = l.evidence.iter().find(|e| e.contains("above the driver"));
        let e = e.unwrap();
        assert!(e.contains(": they waited in the device"), "{e}");
        assert!(e.contains("20,000 requests for iocap's 60,000 I/Os"), "{e}");
        let held = judge_limit(&sweep, 101_000.0, &timed(30.0, 320.0)).unwrap();
        assert_eq!(held.kind, LimitKind::Device);
        assert!(held
            .evidence
            .iter()
            .any(|e| e.contains("a queue deeper than the device takes")));
    }

    #[test]
    fn the_share_needs_a_latency_to_divide_by() {
        let d = |device_us_mean, iocap_us_mean| DeviceTime {
            test_idx: 0,
            requests: 1,
            iocap_ios: 1,
            device_us_mean,
            iocap_us_mean,
        };
        assert_eq!(d(1.0, 0.0).above_driver_pct(), None);
        assert_eq!(d(f64::NAN, 10.0).above_driver_pct(), None);
        assert_eq!(d(0.0, 10.0).above_driver_pct(), Some(100.0));
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

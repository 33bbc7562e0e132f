//! A test's [`Uncertainty`]: the spread of its per-second series, a confidence interval of its
//! IOPS and MB/s that allows for autocorrelation (batch means, from `iocap-stats`), the trend from
//! the first third to the last, the CPU the hypervisor stole, and a verdict with its reasons.
//!
//! The thresholds are a judgement, stated once here and in docs/run.md: a figure is stable when
//! its 95 % interval is within ±5 % of the mean, the last third is within ±10 % of the first and
//! the hypervisor stole less than 5 % of the CPU. Those are the limits within which a rerun on
//! the same storage is expected to agree; beyond any one of them the figure may not repeat.

use iocap_model::{SecondSample, Spread, Stability, Uncertainty};

/// Largest half-width of the 95 % interval of a stable figure, in percent of the mean.
pub const STABLE_CI_PCT: f64 = 5.0;
/// Largest drift from the first third of the window to the last, in percent.
pub const STABLE_TREND_PCT: f64 = 10.0;
/// Largest share of CPU time stolen by the hypervisor, in percent.
pub const STABLE_STEAL_PCT: f64 = 5.0;

/// The spread of one figure's per-second samples; `None` with fewer than three.
pub fn spread(xs: &[f64]) -> Option<Spread> {
    let ci = iocap_stats::batch_means_ci(xs, 0.95)?;
    let pct = |v: f64| {
        if ci.mean != 0.0 {
            v / ci.mean * 100.0
        } else {
            0.0
        }
    };
    Some(Spread {
        mean: ci.mean,
        ci95_low: ci.lo,
        ci95_high: ci.hi,
        ci95_half_pct: pct(ci.half_width),
        cv_pct: iocap_stats::cv(xs).map_or(0.0, |c| c * 100.0),
        trend_pct: iocap_stats::trend(xs).map(|t| t * 100.0),
        samples: xs.len() as u32,
        batches: ci.batches as u32,
    })
}

/// The uncertainty of a test with per-second series `per_second` during which the hypervisor
/// stole `steal_pct` of the CPU.
pub fn uncertainty(per_second: &[SecondSample], steal_pct: Option<f64>) -> Uncertainty {
    let iops: Vec<f64> = per_second.iter().map(|s| s.iops).collect();
    let mb_s: Vec<f64> = per_second.iter().map(|s| s.mb_s).collect();
    let (iops, mb_s) = (spread(&iops), spread(&mb_s));
    let mut reasons = Vec::new();
    let verdict = match &iops {
        None => {
            reasons.push(format!(
                "only {} per-second sample{}: measure for at least 3 s to judge the noise",
                per_second.len(),
                if per_second.len() == 1 { "" } else { "s" }
            ));
            Stability::TooShort
        }
        Some(s) => {
            if s.ci95_half_pct > STABLE_CI_PCT {
                reasons.push(format!(
                    "the IOPS' 95 % interval is ±{:.1} % of the mean (stable: within \
                     ±{STABLE_CI_PCT:.0} %): measure longer (--until-stable) or repeat (--repeat)",
                    s.ci95_half_pct
                ));
            }
            if let Some(t) = s.trend_pct.filter(|t| t.abs() > STABLE_TREND_PCT) {
                reasons.push(format!(
                    "the IOPS {} {:.0} % from the first third of the window to the last: a \
                     cache filling or emptying, or a neighbour's load changing",
                    if t > 0.0 { "rose" } else { "fell" },
                    t.abs()
                ));
            }
            if s.mean == 0.0 {
                reasons.push("no I/O completed in the window".into());
            }
            if let Some(st) = steal_pct.filter(|st| *st >= STABLE_STEAL_PCT) {
                reasons.push(format!(
                    "the hypervisor stole {st:.1} % of the CPU time: other guests compete for \
                     this host, and the figure depends on them"
                ));
            }
            if reasons.is_empty() {
                Stability::Stable
            } else {
                Stability::Unstable
            }
        }
    };
    Uncertainty {
        iops,
        mb_s,
        steal_pct,
        verdict,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(v: &[f64]) -> Vec<SecondSample> {
        v.iter()
            .enumerate()
            .map(|(i, &iops)| SecondSample {
                t_s: i as f64 + 1.0,
                iops,
                mb_s: iops * 8192.0 / 1e6,
                lat_us_mean: None,
                lat_us_p99: None,
                submit_each_pct: None,
                read: None,
                write: None,
            })
            .collect()
    }

    /// A steady series with a little deterministic jitter.
    fn steady(n: usize, level: f64, jitter: f64) -> Vec<f64> {
        (0..n)
            .map(|i| level * (1.0 + jitter * (((i * 7919) % 13) as f64 / 6.0 - 1.0)))
            .collect()
    }

    #[test]
    fn a_steady_series_is_stable_with_a_narrow_interval() {
        let u = uncertainty(&series(&steady(20, 10_000.0, 0.02)), Some(0.2));
        assert_eq!(u.verdict, Stability::Stable, "{:?}", u.reasons);
        let s = u.iops.unwrap();
        assert!(s.ci95_low < s.mean && s.mean < s.ci95_high);
        assert!(s.ci95_half_pct < 2.0, "{s:?}");
        assert!(s.cv_pct > 0.5 && s.cv_pct < 3.0, "{s:?}");
        assert_eq!(s.samples, 20);
        let m = u.mb_s.unwrap();
        assert!((m.mean - s.mean * 8192.0 / 1e6).abs() < 1e-6);
    }

    #[test]
    fn each_reason_makes_it_unstable_and_says_why() {
        let noisy = steady(10, 10_000.0, 0.5);
        let u = uncertainty(&series(&noisy), None);
        assert_eq!(u.verdict, Stability::Unstable);
        assert!(u.reasons[0].contains("95 % interval"), "{:?}", u.reasons);

        let ramp: Vec<f64> = (0..12).map(|i| 10_000.0 + 500.0 * i as f64).collect();
        let u = uncertainty(&series(&ramp), None);
        assert!(u.iops.as_ref().unwrap().trend_pct.unwrap() > 10.0);
        assert!(
            u.reasons.iter().any(|r| r.contains("rose")),
            "{:?}",
            u.reasons
        );

        let u = uncertainty(&series(&steady(20, 10_000.0, 0.01)), Some(12.5));
        assert_eq!(u.verdict, Stability::Unstable);
        assert!(u.reasons.iter().any(|r| r.contains("stole 12.5 %")));
    }

    #[test]
    fn too_short_says_so() {
        let u = uncertainty(&series(&[1000.0, 1100.0]), Some(0.0));
        assert_eq!(u.verdict, Stability::TooShort);
        assert!(u.iops.is_none());
        assert!(u.reasons[0].contains("2 per-second samples"));
    }
}

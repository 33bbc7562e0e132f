//! A burst bucket's figures from its drain and refill runs (`iocap saturate --bucket`): the
//! drop in the drain's per-second IOPS (`crate::burst::level_drop`) splits the burst from the
//! baseline; the I/Os above the baseline before the drop are the bucket's credits; each refill
//! probe's I/Os above the baseline are the credits its idle pause gave back.
//!
//! The drain stops once the drop has held [`SETTLE_S`] seconds ([`drained`]); a probe once its
//! last [`BACK_S`] seconds are back at the baseline ([`back_at_baseline`]). Credits are counted
//! up to the end of the drop's interval, so the second the bucket ran out in counts whole and
//! the noise of the seconds after it does not.

use iocap_model::{BurstBucket, LevelDrop, Refill};

use crate::burst::level_drop;

/// Seconds the lower level must hold before the drain stops.
pub const SETTLE_S: usize = 10;

/// Seconds at the baseline that end a refill probe.
pub const BACK_S: usize = 3;

/// A second within this share above the baseline counts as at the baseline.
pub const AT_BASELINE: f64 = 0.10;

/// Whether the drain has found its drop and held the lower level [`SETTLE_S`] seconds.
pub fn drained(series: &[f64]) -> Option<LevelDrop> {
    let d = level_drop(series, 0)?;
    (series.len() as f64 - d.at_s >= SETTLE_S as f64).then_some(d)
}

/// Whether a probe's last [`BACK_S`] seconds are back at `baseline`.
pub fn back_at_baseline(series: &[f64], baseline: f64) -> bool {
    series.len() >= BACK_S
        && series[series.len() - BACK_S..]
            .iter()
            .all(|x| *x <= baseline * (1.0 + AT_BASELINE))
}

/// The I/Os of `series` above `baseline`, each second's excess counted with its sign.
fn above(series: &[f64], baseline: f64) -> f64 {
    series.iter().map(|x| x - baseline).sum::<f64>().max(0.0)
}

/// The bucket's figures from the drain's per-second IOPS and each refill probe (idle seconds,
/// per-second IOPS after them).
pub fn bucket(drain: &[f64], bs_bytes: u64, qd: u32, probes: &[(f64, Vec<f64>)]) -> BurstBucket {
    let mut b = BurstBucket {
        bs_bytes,
        qd,
        per_second_iops: drain.to_vec(),
        ..BurstBucket::default()
    };
    let Some(d) = level_drop(drain, 0) else {
        b.sentence = format!(
            "the rate held for all {} s at {} IOPS: no burst ran out (a bucket larger than \
             that, or none)",
            drain.len(),
            crate::fmt::count(drain.iter().sum::<f64>() / drain.len().max(1) as f64)
        );
        return b;
    };
    let base = d.after_iops;
    let upto = (d.at_s_high as usize).min(drain.len());
    let credit = above(&drain[..upto], base);
    let burst_ios: f64 = drain[..d.at_s as usize].iter().sum();
    b.refills = probes
        .iter()
        .map(|(idle, s)| {
            let regained = above(s, base);
            Refill {
                idle_s: *idle,
                regained_ios: regained,
                ios_per_idle_s: regained / idle,
                per_second_iops: s.clone(),
            }
        })
        .collect();
    b.refill_ios_per_s = fit_through_zero(&b.refills);
    b.peak_iops = Some(d.before_iops);
    b.baseline_iops = Some(base);
    // a device that stopped answering has a baseline of 0: no ratio to give
    b.ratio = (base > 0.0).then(|| d.before_iops / base);
    b.burst_s = Some(d.at_s);
    b.burst_ios = Some(burst_ios);
    b.burst_bytes = Some(burst_ios * bs_bytes as f64);
    b.credit_ios = Some(credit);
    b.sentence = sentence(&b, &d);
    b.drop = Some(d);
    b
}

/// Regained credits per idle second, least squares through zero over the probes that did not
/// refill the whole bucket (a full bucket says only that the pause was long enough).
fn fit_through_zero(refills: &[Refill]) -> Option<f64> {
    let (xy, xx) = refills
        .iter()
        .filter(|r| r.idle_s > 0.0)
        .fold((0.0, 0.0), |(xy, xx), r| {
            (xy + r.idle_s * r.regained_ios, xx + r.idle_s * r.idle_s)
        });
    (xx > 0.0).then(|| xy / xx)
}

fn sentence(b: &BurstBucket, d: &LevelDrop) -> String {
    let c = crate::fmt::count;
    let when = crate::burst::interval(d);
    let refill = b.refill_ios_per_s.map_or_else(String::new, |r| {
        format!("; it refills {} I/Os per second idle", c(r))
    });
    format!(
        "a burst of {} IOPS for {:.0} s{when} ({} I/Os above the baseline), then a baseline \
         of {} IOPS{}{refill}: plan on {} IOPS",
        c(d.before_iops),
        d.at_s,
        c(b.credit_ios.unwrap_or(0.0)),
        c(d.after_iops),
        b.ratio
            .map_or_else(String::new, |r| format!(" ({r:.1}x less)")),
        c(d.after_iops)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token bucket of 3,200 credits at a peak of 1,000 and a fill of 200 per second, as a
    /// per-second series: 4 s at the peak, then the fill rate (with a little noise).
    fn drained_series(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| {
                if i < 4 {
                    1000.0
                } else {
                    200.0 + [3.0, -2.0, 1.0][i % 3]
                }
            })
            .collect()
    }

    #[test]
    fn a_drained_bucket_gives_its_credits_length_baseline_and_refill() {
        let drain = drained_series(15);
        assert!(drained(&drain).is_some());
        assert!(
            drained(&drain[..12]).is_none(),
            "8 s after the drop is not settled"
        );
        // 5 s idle at 200 per second: 1,000 credits, 1.25 s at the peak
        let probe = vec![1000.0, 450.0, 200.0, 201.0, 199.0];
        let probe2 = vec![1000.0, 1000.0, 700.0, 200.0, 200.0, 200.0];
        let b = bucket(&drain, 8192, 32, &[(5.0, probe), (10.0, probe2)]);
        let credit = b.credit_ios.unwrap();
        assert!((credit / 3200.0 - 1.0).abs() < 0.02, "{b:?}");
        assert_eq!(b.burst_s, Some(4.0));
        assert!((b.baseline_iops.unwrap() / 200.0 - 1.0).abs() < 0.01);
        assert!((b.ratio.unwrap() - 5.0).abs() < 0.1);
        assert_eq!(b.burst_ios, Some(4000.0));
        assert_eq!(b.burst_bytes, Some(4000.0 * 8192.0));
        let r = &b.refills[0];
        assert!((r.regained_ios / 1000.0 - 1.0).abs() < 0.05, "{r:?}");
        let fit = b.refill_ios_per_s.unwrap();
        assert!((fit / 200.0 - 1.0).abs() < 0.05, "{fit}");
        assert!(
            b.sentence.starts_with("a burst of 1,000 IOPS for 4 s"),
            "{}",
            b.sentence
        );
        assert!(b.sentence.ends_with("plan on 200 IOPS"), "{}", b.sentence);
    }

    #[test]
    fn a_rate_that_holds_has_no_burst_and_says_so() {
        let b = bucket(&[500.0; 20], 8192, 32, &[]);
        assert!(b.drop.is_none() && b.credit_ios.is_none() && b.refills.is_empty());
        assert!(b.sentence.contains("no burst ran out"), "{}", b.sentence);
    }

    #[test]
    fn a_probe_ends_when_three_seconds_are_back_at_the_baseline() {
        assert!(!back_at_baseline(&[1000.0, 200.0], 200.0));
        assert!(!back_at_baseline(&[1000.0, 200.0, 215.0, 260.0], 200.0));
        assert!(back_at_baseline(&[1000.0, 200.0, 215.0, 190.0], 200.0));
    }
}

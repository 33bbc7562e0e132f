//! A burst that ran out inside a test: a per-second series that held one level and then fell
//! to a lower one and stayed, as a cloud volume's burst bucket does when its credits are spent
//! (a high rate for minutes, then the baseline), or a write-back cache does when it fills. A
//! test that ends before the drop measured the burst, and a figure taken across it is neither
//! level; the lower level is the capacity to plan on.
//!
//! The rule: the one split of the series into two levels that leaves the least squared error
//! (each side at least [`MIN_SIDE_S`] seconds), called a drop when the later level is at least
//! [`MIN_DROP_PCT`] below the earlier **and** Welch's test of the two sides' seconds gives
//! p < [`DROP_P`]. How sure the second of the drop is: every split whose squared error is within
//! 3.84 σ² of the best (the profile likelihood's 95 % interval, σ² the best split's residual
//! variance) lies inside `at_s_low..=at_s_high`.

use iocap_model::LevelDrop;

/// The fewest seconds on each side of a drop.
pub const MIN_SIDE_S: usize = 3;

/// The least fall, in percent of the earlier level, that counts as a drop.
pub const MIN_DROP_PCT: f64 = 20.0;

/// The p-value below which the two levels differ beyond the noise.
pub const DROP_P: f64 = 0.01;

/// The chi-squared quantile of one degree of freedom at 95 %.
const CHI2_95: f64 = 3.84;

/// Squared error of `xs[a..b]` about its mean, from prefix sums of the values and their squares.
fn sse(sum: &[f64], sq: &[f64], a: usize, b: usize) -> f64 {
    let n = (b - a) as f64;
    let s = sum[b] - sum[a];
    ((sq[b] - sq[a]) - s * s / n).max(0.0)
}

/// The drop in `series` (per-second figures, the first at second 1), if there is one; `test_idx`
/// names the test it came from.
pub fn level_drop(series: &[f64], test_idx: u32) -> Option<LevelDrop> {
    let n = series.len();
    if n < 2 * MIN_SIDE_S || series.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let (mut sum, mut sq) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    for (i, x) in series.iter().enumerate() {
        sum[i + 1] = sum[i] + x;
        sq[i + 1] = sq[i] + x * x;
    }
    let cost = |k: usize| sse(&sum, &sq, 0, k) + sse(&sum, &sq, k, n);
    let splits = MIN_SIDE_S..=n - MIN_SIDE_S;
    let best = splits
        .clone()
        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))?;
    let (before, after) = (&series[..best], &series[best..]);
    let w = iocap_stats::welch(before, after)?;
    let fell = (w.mean_a - w.mean_b) / w.mean_a * 100.0;
    if !(fell >= MIN_DROP_PCT && w.p_value < DROP_P) {
        return None;
    }
    let sigma2 = cost(best) / (n - 2) as f64;
    let near: Vec<usize> = splits
        .filter(|&k| cost(k) - cost(best) <= CHI2_95 * sigma2)
        .collect();
    Some(LevelDrop {
        test_idx,
        at_s: best as f64,
        at_s_low: *near.first().unwrap_or(&best) as f64,
        at_s_high: *near.last().unwrap_or(&best) as f64,
        before_iops: w.mean_a,
        after_iops: w.mean_b,
    })
}

/// The drops in the tests of a run, each test's per-second IOPS looked at alone.
pub fn drops(tests: &[iocap_model::TestResult]) -> Vec<LevelDrop> {
    tests
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let s: Vec<f64> = t.per_second.iter().map(|p| p.iops).collect();
            level_drop(&s, i as u32)
        })
        .collect()
}

/// A test's drop as the views and preflight's warnings say it: what fell, and what that means
/// for the figures and the plan.
pub fn sentence(test_name: &str, d: &LevelDrop) -> String {
    format!(
        "{test_name}: {} and stayed: a burst ran out (a bucket's credits, or a write cache \
         filling); the figures before it were taken inside the burst, plan on {} IOPS",
        describe(d),
        crate::fmt::count(d.after_iops)
    )
}

/// A drop's interval in words, ` (5 to 7 s)`, or nothing when it is one second.
pub fn interval(d: &LevelDrop) -> String {
    if d.at_s_low == d.at_s_high {
        String::new()
    } else {
        format!(" ({:.0} to {:.0} s)", d.at_s_low, d.at_s_high)
    }
}

/// A drop in words: `IOPS fell from 3,000 to 500 after 6 s (5 to 7 s)`.
pub fn describe(d: &LevelDrop) -> String {
    format!(
        "IOPS fell from {} to {} after {:.0} s{}",
        crate::fmt::count(d.before_iops),
        crate::fmt::count(d.after_iops),
        d.at_s,
        interval(d)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic wobble of ±`pct` percent around `level`.
    fn wobble(level: f64, pct: f64, n: usize, salt: usize) -> Vec<f64> {
        (0..n)
            .map(|i| level * (1.0 + pct / 100.0 * (((i + salt) as f64) * 2.3).sin()))
            .collect()
    }

    #[test]
    fn a_bucket_that_runs_out_is_a_drop_at_its_second() {
        let mut s = wobble(3000.0, 3.0, 6, 0);
        s.extend(wobble(500.0, 5.0, 8, 7));
        let d = level_drop(&s, 4).unwrap();
        assert_eq!((d.test_idx, d.at_s), (4, 6.0));
        assert!((d.before_iops / 3000.0 - 1.0).abs() < 0.03, "{d:?}");
        assert!((d.after_iops / 500.0 - 1.0).abs() < 0.05, "{d:?}");
        assert!(d.at_s_low <= 6.0 && d.at_s_high >= 6.0 && d.at_s_high - d.at_s_low <= 1.0);
        assert!(
            describe(&d).starts_with("IOPS fell from 2,99"),
            "{}",
            describe(&d)
        );
        assert!(describe(&d).contains("after 6 s"), "{}", describe(&d));
    }

    #[test]
    fn a_steady_noisy_or_rising_series_has_no_drop() {
        assert!(level_drop(&wobble(3000.0, 10.0, 20, 1), 0).is_none());
        let mut up = wobble(500.0, 3.0, 6, 0);
        up.extend(wobble(3000.0, 3.0, 6, 3));
        assert!(level_drop(&up, 0).is_none());
        // a 10 % step is not a bucket running out
        let mut small = wobble(1000.0, 1.0, 6, 0);
        small.extend(wobble(900.0, 1.0, 6, 3));
        assert!(level_drop(&small, 0).is_none());
        assert!(
            level_drop(&[3000.0, 3000.0, 500.0, 500.0], 0).is_none(),
            "too short"
        );
    }

    /// One slow second on a busy host is not a level: the drop must hold.
    #[test]
    fn one_slow_second_is_not_a_drop() {
        let mut s = wobble(3000.0, 2.0, 12, 0);
        s[9] = 900.0;
        assert!(level_drop(&s, 0).is_none(), "{:?}", level_drop(&s, 0));
    }

    /// A bucket that runs out halfway through a second leaves that second between the levels:
    /// the drop is placed on either side of it, and the interval says so.
    #[test]
    fn a_drop_inside_a_second_spans_that_second() {
        let mut s = wobble(1000.0, 2.0, 10, 0);
        s.push(600.0);
        s.extend(wobble(200.0, 2.0, 10, 5));
        let d = level_drop(&s, 0).unwrap();
        assert!(d.at_s_low <= 10.0 && d.at_s_high >= 11.0, "{d:?}");
        assert!(describe(&d).contains("(10 to 11 s)"), "{}", describe(&d));
    }
}

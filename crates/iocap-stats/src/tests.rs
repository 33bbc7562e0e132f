use super::*;
use proptest::prelude::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn t_quantiles_match_the_tables() {
    // two-sided 95 % critical values from any table of Student's t
    for (df, want) in [
        (1.0, 12.706),
        (2.0, 4.303),
        (4.0, 2.776),
        (10.0, 2.228),
        (30.0, 2.042),
        (1e6, 1.960),
    ] {
        let t = student_t_quantile(0.975, df);
        assert!(close(t, want, 0.0015), "df {df}: {t} vs {want}");
    }
    assert!(close(student_t_quantile(0.995, 5.0), 4.032, 0.001));
    assert_eq!(student_t_quantile(0.5, 3.0), 0.0);
    assert!(student_t_quantile(0.0, 3.0).is_nan());
}

#[test]
fn the_cdf_is_symmetric_and_monotonic() {
    for df in [1.0, 3.5, 12.0, 200.0] {
        for t in [0.1, 0.7, 2.0, 5.0] {
            let (up, down) = (student_t_cdf(t, df), student_t_cdf(-t, df));
            assert!(close(up + down, 1.0, 1e-12), "df {df} t {t}");
        }
        assert!(close(student_t_cdf(0.0, df), 0.5, 1e-12));
        assert!(student_t_cdf(1.0, df) < student_t_cdf(1.1, df));
    }
    // t = 1 with one degree of freedom is the Cauchy distribution: 3/4
    assert!(close(student_t_cdf(1.0, 1.0), 0.75, 1e-12));
}

#[test]
fn welch_matches_a_worked_example() {
    // Worked by hand from the definitions (and agreeing with scipy.stats.ttest_ind(a, b,
    // equal_var=False)): means 20.0 and 22.0, variances 2.5 and 10.0, n 5 and 5.
    let a = [18.0, 19.0, 20.0, 21.0, 22.0];
    let b = [18.0, 20.0, 22.0, 24.0, 26.0];
    let w = welch(&a, &b).unwrap();
    assert_eq!((w.mean_a, w.mean_b), (20.0, 22.0));
    // se² = 2.5/5 + 10/5 = 2.5; t = -2 / √2.5
    assert!(close(w.t, -2.0 / 2.5f64.sqrt(), 1e-12));
    // df = 2.5² / (0.5²/4 + 2²/4) = 6.25 / 1.0625
    assert!(close(w.df, 6.25 / 1.0625, 1e-9));
    // two-sided p of |t| = 1.2649 at 5.88 df
    assert!(close(w.p_value, 0.2527, 0.002), "{}", w.p_value);
    // identical samples: no difference at all
    let w = welch(&a, &a).unwrap();
    assert!(close(w.p_value, 1.0, 1e-12));
    // no spread on either side and different means: certain
    assert_eq!(welch(&[1.0, 1.0], &[2.0, 2.0]).unwrap().p_value, 0.0);
    assert!(welch(&[1.0], &[2.0, 3.0]).is_none());
}

#[test]
fn batch_means_interval_of_a_constant_is_a_point() {
    let ci = batch_means_ci(&[500.0; 16], 0.95).unwrap();
    assert_eq!((ci.mean, ci.half_width, ci.batches), (500.0, 0.0, 4));
    assert!(batch_means_ci(&[1.0, 2.0], 0.95).is_none());
    assert!(batch_means_ci(&[1.0, 2.0, f64::NAN], 0.95).is_none());
}

/// An AR(1) series (each value leans on the last) makes the naive interval far too narrow;
/// batch means widen it.
#[test]
fn batch_means_widen_the_interval_of_a_correlated_series() {
    let mut state: u64 = 42;
    let mut noise = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mut x = 0.0;
    let xs: Vec<f64> = (0..400)
        .map(|_| {
            x = 0.95 * x + noise();
            1000.0 + 100.0 * x
        })
        .collect();
    let ci = batch_means_ci(&xs, 0.95).unwrap();
    let naive = 1.966 * (variance(&xs) / xs.len() as f64).sqrt();
    assert!(
        ci.half_width > 2.0 * naive,
        "batch means {} vs naive {naive}",
        ci.half_width
    );
    assert_eq!(ci.batches, 20);
}

#[test]
fn spread_and_trend() {
    assert!(close(cv(&[9.0, 11.0]).unwrap(), 2f64.sqrt() / 10.0, 1e-12));
    assert!(cv(&[0.0, 0.0]).is_none());
    let ramp: Vec<f64> = (1..=9).map(f64::from).collect();
    // first third 1,2,3 (mean 2), last 7,8,9 (mean 8)
    assert!(close(trend(&ramp).unwrap(), 3.0, 1e-12));
    assert!(trend(&[1.0, 2.0]).is_none());
}

#[test]
fn quartiles_interpolate() {
    assert_eq!(quartiles(&[5.0, 1.0, 3.0, 2.0, 4.0]), Some((2.0, 3.0, 4.0)));
    assert_eq!(quartiles(&[1.0, 2.0]), Some((1.25, 1.5, 1.75)));
    assert_eq!(quartiles(&[7.0]), Some((7.0, 7.0, 7.0)));
    assert_eq!(quartiles(&[]), None);
}

/// Finite values of every magnitude, the huge ones included (found in review: squaring
/// variances of 1e128 overflowed into NaN).
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        -1e12f64..1e12,
        prop::num::f64::NORMAL | prop::num::f64::ZERO | prop::num::f64::SUBNORMAL,
    ]
}

#[test]
fn huge_values_give_answers_or_none_never_nan() {
    let w = welch(&[0.0, 0.0], &[-3.1e128, 0.0]).unwrap();
    assert!(!w.df.is_nan() && !w.p_value.is_nan(), "{w:?}");
    assert_eq!(quartiles(&[-1e308, 1e308]).unwrap().1, 0.0);
    assert_eq!(cv(&[0.0, 2.3e256]), None);
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(500)))]

    /// Nothing panics, and nothing returned is NaN, for any finite series.
    #[test]
    fn no_panic_no_nan(a in prop::collection::vec(value(), 0..60),
                       b in prop::collection::vec(value(), 0..60)) {
        if let Some(ci) = batch_means_ci(&a, 0.95) {
            prop_assert!(ci.lo <= ci.mean && ci.mean <= ci.hi && ci.half_width >= 0.0);
        }
        if let Some(c) = cv(&a) { prop_assert!(c.is_finite() && c >= 0.0); }
        if let Some(t) = trend(&a) { prop_assert!(!t.is_nan()); }
        if let Some(w) = welch_batch_means(&a, &b) {
            prop_assert!((0.0..=1.0).contains(&w.p_value), "{:?}", w);
        }
        if let Some(w) = welch(&a, &b) {
            prop_assert!((0.0..=1.0).contains(&w.p_value), "{:?}", w);
        }
        if let Some((q1, m, q3)) = quartiles(&a) { prop_assert!(q1 <= m && m <= q3); }
    }
}

/// A periodic series whose batches happen to balance still gets a wide interval.
#[test]
fn a_periodic_series_is_not_taken_as_steady() {
    let xs = [1000.0, 0.0, 0.0, 1000.0];
    assert_eq!(batch_means(&xs).unwrap(), [500.0, 500.0]);
    let ci = batch_means_ci(&xs, 0.95).unwrap();
    assert!(ci.half_width > 500.0, "{ci:?}");
}

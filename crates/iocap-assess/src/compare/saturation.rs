//! Two saturate runs' conclusions side by side (issue 37 §2): the knee, the limit the sweep
//! over block sizes named (its kind and rate) and the burst bucket `--bucket` measured
//! (credits, the burst's rate and length, the baseline, the refill). The tests are paired by
//! part and depth (`super::pairing`); these are the figures a plan rests on, which no one test
//! holds.
//!
//! What is judged, and how:
//! - the bucket's **baseline** is the capacity to plan on: a drop beyond `--iops-drop` is a
//!   regression, a rise as large is better, and, as for a test's IOPS, only beyond the noise of
//!   the two drains' seconds at the baseline (Welch's test over batch means, p < `NOISE_P`);
//! - a **cap's rate**, where both runs met the same kind of cap: an IOPS cap's against
//!   `--iops-drop`, a throughput cap's against `--mbps-drop` (by the threshold alone: the cap
//!   is a median over the sweep's sizes, not a series). The device's own limit is the steps'
//!   highest IOPS, which the tests already judge, so it is shown, not judged;
//! - the knee, the credits, the burst's rate and length and the refill are shown with their
//!   change, never judged: a shorter burst over the same baseline changes no plan.
//!
//! A change of kind is called out in words (`notes`), not counted as a regression: a cap that
//! appeared, went or changed kind, and a bucket whose burst appeared or went. Its effect on the
//! figures is the tests' and the baseline's to judge.

use iocap_model::figures::count;
use iocap_model::{BurstBucket, Limit, LimitKind, RateUnit, Saturation};
use serde::Serialize;

use super::{metric, noisy_metric, Gate, Metric, MetricName, Noise, Thresholds};

/// One figure of the two saturate runs, and the base's test it was measured in.
#[derive(Debug, Clone, Serialize)]
pub struct SaturationMetric {
    #[serde(flatten)]
    pub metric: Metric,
    /// Index of the base's test the figure comes from (the bucket's drain, the sweep's first
    /// point), which a flag names; `null` for the knee, which no one test holds.
    pub test_index: Option<usize>,
}

/// The knee, the limit and the bucket of two saturate runs (or two preflights' read curves).
#[derive(Debug, Clone, Serialize)]
pub struct SaturationComparison {
    /// `knee_qd`; the limit's rate (`limit_iops`, or `limit_bytes_per_s` for a throughput cap)
    /// where either run swept block sizes; the bucket's `bucket_credit_ios`,
    /// `bucket_peak_iops`, `bucket_baseline_iops`, `bucket_burst_s` and
    /// `bucket_refill_ios_per_s` where either measured one.
    pub metrics: Vec<SaturationMetric>,
    /// The kind of limit each run met; `null` for a run without a sweep.
    pub base_limit: Option<LimitKind>,
    pub run_limit: Option<LimitKind>,
    /// Changes of kind, in words: a cap that appeared, went or changed kind; a burst that
    /// appeared or went; a bucket measured by one run only.
    pub notes: Vec<String>,
}

/// The limit in a few words: `an IOPS cap near 2,000 IOPS`, `the device's own limit`.
pub fn limit_words(l: &Limit) -> String {
    match l.kind {
        LimitKind::IopsCap => format!("an IOPS cap near {} IOPS", count(l.rate)),
        LimitKind::ThroughputCap => format!("a throughput cap near {:.1} MB/s", l.rate / 1e6),
        LimitKind::Device => "the device's own limit".into(),
    }
}

fn is_cap(l: &Limit) -> bool {
    l.kind != LimitKind::Device
}

/// A change of the limit's kind called out; `None` when the kind held or no cap is involved.
fn limit_note(b: Option<&Limit>, r: Option<&Limit>) -> Option<String> {
    let w = limit_words;
    Some(match (b, r) {
        (Some(b), Some(r)) if b.kind == r.kind => return None,
        (Some(b), Some(r)) => {
            let what = match (is_cap(b), is_cap(r)) {
                (false, true) => "a cap appeared",
                (true, false) => "the cap went",
                _ => "the cap changed kind",
            };
            format!("{what}: the base met {}, this run {}", w(b), w(r))
        }
        (None, Some(r)) if is_cap(r) => {
            format!(
                "this run met {}; the base swept no block sizes to compare",
                w(r)
            )
        }
        (Some(b), None) if is_cap(b) => {
            format!(
                "the base met {}; this run swept no block sizes to compare",
                w(b)
            )
        }
        _ => return None,
    })
}

/// A bucket's burst in words: `ran out after 4 s`, or that the rate held.
fn burst_words(b: &BurstBucket) -> String {
    match b.burst_s {
        Some(s) if b.credit_ios.is_some() => format!("ran out after {s:.0} s"),
        _ => format!(
            "held one rate for its whole drain ({} s)",
            b.per_second_iops.len()
        ),
    }
}

/// A bucket measured by one run only, or a burst found by one only, called out.
fn bucket_note(b: Option<&BurstBucket>, r: Option<&BurstBucket>) -> Option<String> {
    let burst = |x: &BurstBucket| x.credit_ios.is_some();
    Some(match (b, r) {
        (Some(b), Some(r)) if burst(b) == burst(r) => return None,
        (Some(b), Some(r)) => {
            let what = if burst(r) {
                "a burst appeared"
            } else {
                "the burst went"
            };
            format!(
                "{what}: the base's bucket {}, this run's {}",
                burst_words(b),
                burst_words(r)
            )
        }
        (Some(_), None) => "only the base measured a burst bucket (--bucket)".into(),
        (None, Some(_)) => "only this run measured a burst bucket (--bucket)".into(),
        (None, None) => return None,
    })
}

/// The limit's rate on both sides, in the base's unit (the run's without a base limit); a
/// side whose rate is in the other unit has none here (its note says what it met). Judged
/// only where both met the same cap.
fn limit_metric(b: Option<&Limit>, r: Option<&Limit>, th: &Thresholds) -> Option<Metric> {
    let unit = b.or(r)?.rate_unit;
    let rate = |l: Option<&Limit>| l.filter(|l| l.rate_unit == unit).map(|l| l.rate);
    let gate = match (b.map(|l| l.kind), r.map(|l| l.kind)) {
        (Some(LimitKind::IopsCap), Some(LimitKind::IopsCap)) => Gate::Drop(th.iops_drop_pct),
        (Some(LimitKind::ThroughputCap), Some(LimitKind::ThroughputCap)) => {
            Gate::Drop(th.mbps_drop_pct)
        }
        _ => Gate::None,
    };
    let name = match unit {
        RateUnit::Iops => MetricName::LimitIops,
        RateUnit::BytesPerS => MetricName::LimitBytesPerS,
    };
    Some(metric(name, rate(b), rate(r), gate))
}

/// A drain's seconds at the baseline: those after the drop's interval.
fn baseline_seconds(b: Option<&BurstBucket>) -> Vec<f64> {
    b.and_then(|b| {
        let d = b.drop.as_ref()?;
        let from = (d.at_s_high.max(0.0).ceil() as usize).min(b.per_second_iops.len());
        Some(b.per_second_iops[from..].to_vec())
    })
    .unwrap_or_default()
}

/// The bucket's figures on both sides, the baseline judged; a figure neither has (the refill
/// without probes) is left out.
fn bucket_metrics(
    b: Option<&BurstBucket>,
    r: Option<&BurstBucket>,
    th: &Thresholds,
) -> Vec<Metric> {
    let f = |pick: fn(&BurstBucket) -> Option<f64>| (b.and_then(pick), r.and_then(pick));
    let shown = |name, pick| {
        let (x, y) = f(pick);
        metric(name, x, y, Gate::None)
    };
    let (base, run) = f(|x| x.baseline_iops);
    let noise = Noise::of_series(&baseline_seconds(b), &baseline_seconds(r));
    vec![
        shown(MetricName::BucketCreditIos, |x| x.credit_ios),
        shown(MetricName::BucketPeakIops, |x| x.peak_iops),
        noisy_metric(
            MetricName::BucketBaselineIops,
            base,
            run,
            Gate::Drop(th.iops_drop_pct),
            noise,
        ),
        shown(MetricName::BucketBurstS, |x| x.burst_s),
        shown(MetricName::BucketRefillIosPerS, |x| x.refill_ios_per_s),
    ]
    .into_iter()
    .filter(|m| m.base.is_some() || m.run.is_some())
    .collect()
}

/// The knee, the limit and the bucket of `run` against `base`.
pub fn compare(base: &Saturation, run: &Saturation, th: &Thresholds) -> SaturationComparison {
    let knee = |s: &Saturation| s.knee_qd.map(f64::from);
    let mut metrics = vec![SaturationMetric {
        metric: metric(MetricName::KneeQd, knee(base), knee(run), Gate::None),
        test_index: None,
    }];
    let (bl, rl) = (base.limit.as_ref(), run.limit.as_ref());
    if let Some(m) = limit_metric(bl, rl, th) {
        metrics.push(SaturationMetric {
            metric: m,
            test_index: base.size_sweep.first().map(|p| p.test_idx as usize),
        });
    }
    let (bb, rb) = (base.bucket.as_ref(), run.bucket.as_ref());
    if bb.is_some() || rb.is_some() {
        // the drain is the first test of a run that measured a bucket
        let drain = bb.map(|_| 0);
        metrics.extend(
            bucket_metrics(bb, rb, th)
                .into_iter()
                .map(|metric| SaturationMetric {
                    metric,
                    test_index: drain,
                }),
        );
    }
    SaturationComparison {
        metrics,
        base_limit: bl.map(|l| l.kind),
        run_limit: rl.map(|l| l.kind),
        notes: [limit_note(bl, rl), bucket_note(bb, rb)]
            .into_iter()
            .flatten()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::ChangeVerdict;

    use iocap_model::fixture::{bucket, limit};

    fn sat(knee: Option<u32>, l: Option<Limit>, b: Option<BurstBucket>) -> Saturation {
        Saturation {
            knee_qd: knee,
            limit: l,
            bucket: b,
            ..Saturation::default()
        }
    }

    fn find(c: &SaturationComparison, m: MetricName) -> &Metric {
        &c.metrics
            .iter()
            .find(|x| x.metric.metric == m)
            .unwrap()
            .metric
    }

    #[test]
    fn a_lower_baseline_beyond_the_threshold_and_the_noise_is_a_regression() {
        let base = sat(Some(16), None, Some(bucket(3200.0, 200.0)));
        let run = sat(Some(8), None, Some(bucket(1600.0, 150.0)));
        let c = compare(&base, &run, &Thresholds::default());
        let b = find(&c, MetricName::BucketBaselineIops);
        assert_eq!(b.verdict, Some(ChangeVerdict::Regression), "{b:?}");
        assert_eq!(b.change_pct, Some(-25.0));
        assert!(b.p_value.is_some_and(|p| p < 0.05), "{b:?}");
        let credits = find(&c, MetricName::BucketCreditIos);
        assert_eq!((credits.change_pct, credits.verdict), (Some(-50.0), None));
        let knee = find(&c, MetricName::KneeQd);
        assert_eq!(
            (knee.base, knee.run, knee.verdict),
            (Some(16.0), Some(8.0), None)
        );
        assert!(c.notes.is_empty(), "{:?}", c.notes);
        // the drain's test is the one a flag names
        let m = c
            .metrics
            .iter()
            .find(|x| x.metric.metric == MetricName::BucketBaselineIops);
        assert_eq!(m.unwrap().test_index, Some(0));
        // a 5 % lower baseline is within the threshold
        let run = sat(Some(16), None, Some(bucket(3200.0, 190.0)));
        let c = compare(&base, &run, &Thresholds::default());
        assert_eq!(find(&c, MetricName::BucketBaselineIops).verdict, None);
    }

    #[test]
    fn a_cap_s_rate_is_judged_against_the_same_cap_and_a_change_of_kind_called_out() {
        let th = Thresholds::default();
        let iops = |r| Some(limit(LimitKind::IopsCap, r));
        let c = compare(
            &sat(None, iops(3000.0), None),
            &sat(None, iops(2000.0), None),
            &th,
        );
        let m = find(&c, MetricName::LimitIops);
        assert_eq!(m.verdict, Some(ChangeVerdict::Regression), "{m:?}");
        assert!(c.notes.is_empty());
        assert_eq!(c.run_limit, Some(LimitKind::IopsCap));
        let device = Some(limit(LimitKind::Device, 9000.0));
        let c = compare(
            &sat(None, device.clone(), None),
            &sat(None, iops(2000.0), None),
            &th,
        );
        assert_eq!(find(&c, MetricName::LimitIops).verdict, None, "shown only");
        assert_eq!(
            c.notes,
            vec![
                "a cap appeared: the base met the device's own limit, this run an IOPS cap near \
                 2,000 IOPS"
            ]
        );
        let mbs = Some(limit(LimitKind::ThroughputCap, 32e6));
        let c = compare(
            &sat(None, iops(2000.0), None),
            &sat(None, mbs.clone(), None),
            &th,
        );
        assert!(
            c.notes[0].starts_with("the cap changed kind:"),
            "{:?}",
            c.notes
        );
        assert!(
            c.notes[0].ends_with("a throughput cap near 32.0 MB/s"),
            "{:?}",
            c.notes
        );
        let c = compare(&sat(None, mbs.clone(), None), &sat(None, mbs, None), &th);
        assert!(c
            .metrics
            .iter()
            .any(|m| m.metric.metric == MetricName::LimitBytesPerS));
        let c = compare(&sat(None, None, None), &sat(None, iops(2000.0), None), &th);
        assert!(
            c.notes[0].contains("the base swept no block sizes"),
            "{:?}",
            c.notes
        );
    }

    #[test]
    fn a_bucket_on_one_side_or_a_burst_that_went_is_called_out() {
        let th = Thresholds::default();
        let c = compare(
            &sat(None, None, Some(bucket(3200.0, 200.0))),
            &sat(None, None, None),
            &th,
        );
        assert_eq!(
            c.notes,
            vec!["only the base measured a burst bucket (--bucket)"]
        );
        assert_eq!(find(&c, MetricName::BucketBaselineIops).run, None);
        // no refill probes on either side: no refill row
        let mut unprobed = bucket(3200.0, 200.0);
        unprobed.refill_ios_per_s = None;
        let c = compare(
            &sat(None, None, Some(unprobed)),
            &sat(None, None, None),
            &th,
        );
        let refill = MetricName::BucketRefillIosPerS;
        assert!(!c.metrics.iter().any(|m| m.metric.metric == refill));
        let mut held = bucket(3200.0, 200.0);
        held.credit_ios = None;
        held.baseline_iops = None;
        let c = compare(
            &sat(None, None, Some(bucket(3200.0, 200.0))),
            &sat(None, None, Some(held)),
            &th,
        );
        assert_eq!(
            c.notes,
            vec![
                "the burst went: the base's bucket ran out after 4 s, this run's held one rate \
                 for its whole drain (24 s)"
            ]
        );
        let c = compare(&sat(Some(4), None, None), &sat(Some(4), None, None), &th);
        assert_eq!(
            c.metrics.len(),
            1,
            "the knee alone without sweeps or buckets"
        );
    }
}

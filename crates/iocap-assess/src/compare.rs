//! `iocap compare`'s judgement: which figure of a run got worse or better than the base's,
//! beyond what threshold and beyond the noise, and whether that fails the command. Which test is
//! set beside which is [`pairing`]'s (by position, or for two saturate runs by each test's part
//! and depth); the view (`iocap_report::compare`) lists what changed around a figure and
//! renders it all; what counts as a regression is decided here, once, so the text, the JSON and
//! the exit status of `--fail-on-regression` cannot disagree.
//!
//! A change of IOPS or MB/s beyond its threshold is a regression (or an improvement) only when it
//! is also beyond the noise of both runs: Welch's t-test on the two tests' per-second series,
//! taken over batch means so that correlated seconds are not counted as independent evidence
//! (`iocap-stats`), must give p < [`NOISE_P`]. Otherwise the change is `within_noise`: shown,
//! with both intervals and the p-value, but not flagged. The thresholds stay as the smallest
//! effect worth flagging. Runs saved without a per-second series (fewer than three seconds)
//! fall back to the threshold alone. p99 latency keeps the threshold rule: a run stores one p99,
//! not a distribution of them to test. No input can give `NaN`: a change against a zero or
//! missing base figure is not defined (`None`).

use iocap_model::{LatencyUs, OpStats, SecondSample, TargetResult, TestResult};
use serde::{Deserialize, Serialize};

pub mod pairing;
pub mod saturation;

/// The p-value below which a difference is beyond the noise.
pub const NOISE_P: f64 = 0.05;

/// How far a figure may move against the base before it counts; each in percent, strictly
/// beyond (a drop of exactly 10 % with a 10 % threshold is not flagged).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Thresholds {
    pub iops_drop_pct: f64,
    pub mbps_drop_pct: f64,
    pub p99_rise_pct: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            iops_drop_pct: 10.0,
            mbps_drop_pct: 10.0,
            p99_rise_pct: 20.0,
        }
    }
}

/// A figure compared between two runs, by the name it has in `iocap compare`'s JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MetricName {
    #[serde(rename = "iops")]
    Iops,
    #[serde(rename = "mb_s")]
    MbS,
    #[serde(rename = "lat_us_p50")]
    LatUsP50,
    #[serde(rename = "lat_us_p99")]
    LatUsP99,
    #[serde(rename = "lat_us_p99_9")]
    LatUsP999,
    #[serde(rename = "lat_us_max")]
    LatUsMax,
    #[serde(rename = "cpu_us_per_io")]
    CpuUsPerIo,
    /// A saturate run's figures ([`saturation`]): the knee's queue depth, the limit's rate
    /// (IOPS, or bytes per second for a throughput cap) and the burst bucket's.
    #[serde(rename = "knee_qd")]
    KneeQd,
    #[serde(rename = "limit_iops")]
    LimitIops,
    #[serde(rename = "limit_bytes_per_s")]
    LimitBytesPerS,
    #[serde(rename = "bucket_credit_ios")]
    BucketCreditIos,
    #[serde(rename = "bucket_peak_iops")]
    BucketPeakIops,
    #[serde(rename = "bucket_baseline_iops")]
    BucketBaselineIops,
    #[serde(rename = "bucket_burst_s")]
    BucketBurstS,
    #[serde(rename = "bucket_refill_ios_per_s")]
    BucketRefillIosPerS,
}

impl MetricName {
    /// Every figure of a test, in the order a test's table lists them.
    pub const ALL: [MetricName; 7] = [
        MetricName::Iops,
        MetricName::MbS,
        MetricName::LatUsP50,
        MetricName::LatUsP99,
        MetricName::LatUsP999,
        MetricName::LatUsMax,
        MetricName::CpuUsPerIo,
    ];

    /// As the JSON names it: `iops`, `mb_s`, `lat_us_p50`, ..., `cpu_us_per_io`.
    pub const fn name(self) -> &'static str {
        match self {
            MetricName::Iops => "iops",
            MetricName::MbS => "mb_s",
            MetricName::LatUsP50 => "lat_us_p50",
            MetricName::LatUsP99 => "lat_us_p99",
            MetricName::LatUsP999 => "lat_us_p99_9",
            MetricName::LatUsMax => "lat_us_max",
            MetricName::CpuUsPerIo => "cpu_us_per_io",
            MetricName::KneeQd => "knee_qd",
            MetricName::LimitIops => "limit_iops",
            MetricName::LimitBytesPerS => "limit_bytes_per_s",
            MetricName::BucketCreditIos => "bucket_credit_ios",
            MetricName::BucketPeakIops => "bucket_peak_iops",
            MetricName::BucketBaselineIops => "bucket_baseline_iops",
            MetricName::BucketBurstS => "bucket_burst_s",
            MetricName::BucketRefillIosPerS => "bucket_refill_ios_per_s",
        }
    }
}

/// Which way a figure moved against the base, where it moved beyond its threshold.
///
/// Not [`iocap_model::Verdict`]: that one holds a measured figure against an absolute guideline
/// or expectation (PASS, WARN, FAIL, INFO on a capacity line); this one is relative, a change
/// between two runs, with no verdict at all for a change within the threshold, and it is written
/// in snake case in `iocap compare`'s JSON (`regression`, `better`, `within_noise`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeVerdict {
    Regression,
    Better,
    /// Beyond the threshold, but not beyond the noise of the two runs (p ≥ [`NOISE_P`]).
    WithinNoise,
}

/// One figure side by side. Values are `null` where the side has none (no I/O completed,
/// target missing); `change_pct` is `null` where the change is not defined (zero base).
#[derive(Debug, Clone, Serialize)]
pub struct Metric {
    pub metric: MetricName,
    pub base: Option<f64>,
    pub run: Option<f64>,
    pub change_pct: Option<f64>,
    /// `regression` or `better` when beyond the threshold (and, for IOPS and MB/s, beyond the
    /// noise); `within_noise` when beyond the threshold but not the noise; `null` otherwise or
    /// when the figure is not gated (only IOPS, MB/s and p99 of whole tests are, and a saturate
    /// run's bucket baseline and cap rate: [`saturation`]).
    pub verdict: Option<ChangeVerdict>,
    /// 95 % confidence interval of each side's mean, from its per-second series (IOPS and MB/s
    /// of whole tests, and a bucket's baseline, with at least three seconds); `null` otherwise.
    #[serde(default)]
    pub base_ci95: Option<[f64; 2]>,
    #[serde(default)]
    pub run_ci95: Option<[f64; 2]>,
    /// Welch's test of the two per-second series (over batch means), two-sided; `null` where
    /// either side has fewer than three seconds.
    #[serde(default)]
    pub p_value: Option<f64>,
}

/// One figure beyond its threshold.
#[derive(Debug, Clone, Serialize)]
pub struct Flag {
    pub test: String,
    pub test_index: usize,
    pub metric: MetricName,
    pub base: f64,
    pub run: f64,
    pub change_pct: f64,
    /// Welch's p-value of the change, where there were per-second series to test.
    #[serde(default)]
    pub p_value: Option<f64>,
}

/// The flagged figures of one run against the base, by verdict.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub regressions: Vec<Flag>,
    pub improvements: Vec<Flag>,
    /// Changes beyond a threshold that the noise of the two runs explains.
    pub within_noise: Vec<Flag>,
}

impl Flags {
    /// Adds the figures of test `index` (named `test` in the base) that have a verdict.
    pub fn add(&mut self, test: &str, index: usize, metrics: &[Metric]) {
        for m in metrics {
            let (Some(v), Some(base), Some(run), Some(change_pct)) =
                (m.verdict, m.base, m.run, m.change_pct)
            else {
                continue;
            };
            let flag = Flag {
                test: test.to_string(),
                test_index: index,
                metric: m.metric,
                base,
                run,
                change_pct,
                p_value: m.p_value,
            };
            match v {
                ChangeVerdict::Regression => self.regressions.push(flag),
                ChangeVerdict::Better => self.improvements.push(flag),
                ChangeVerdict::WithinNoise => self.within_noise.push(flag),
            }
        }
    }
}

/// What `iocap compare` does when a figure regressed: only report it, or also fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnRegression {
    Report,
    /// `--fail-on-regression`: exit 1 when any figure regressed.
    Fail,
}

impl OnRegression {
    /// Whether comparisons with `regressions` regressed figures in all fail the command.
    pub fn fails(self, regressions: usize) -> bool {
        self == OnRegression::Fail && regressions > 0
    }
}

/// Change in percent of `run` against `base`; not defined (`None`) for a zero, negative or
/// non-finite base, or when the result is not finite.
pub fn change_pct(base: f64, run: f64) -> Option<f64> {
    let c = (run - base) / base * 100.0;
    (base > 0.0 && c.is_finite()).then_some(c)
}

/// Whether two tests ran the same workload (name, read/write mix and block size): only such
/// tests are judged, in `iocap compare` and in the HTML report.
pub fn same_workload(b: &TestResult, r: &TestResult) -> bool {
    b.name == r.name
        && b.spec.rw == r.spec.rw
        && b.spec.write_pct == r.spec.write_pct
        && b.spec.bs_bytes == r.spec.bs_bytes
}

/// The figures of two tests side by side: IOPS, MB/s, the latency percentiles and CPU per I/O.
/// IOPS, MB/s and p99 get a verdict when the two ran the same workload ([`same_workload`]);
/// IOPS and MB/s carry the noise of their per-second series.
pub fn test_metrics(b: &TestResult, r: &TestResult, th: &Thresholds) -> Vec<Metric> {
    let gated = same_workload(b, r);
    let g = |gate| if gated { gate } else { Gate::None };
    let (bt, rt) = (Some(&b.total), Some(&r.total));
    let noisy = |name, base, run, gate, series: fn(&SecondSample) -> f64| {
        noisy_metric(name, base, run, g(gate), Noise::of(b, r, series))
    };
    vec![
        noisy(
            MetricName::Iops,
            Some(b.total.iops),
            Some(r.total.iops),
            Gate::Drop(th.iops_drop_pct),
            |s| s.iops,
        ),
        noisy(
            MetricName::MbS,
            Some(b.total.mb_s),
            Some(r.total.mb_s),
            Gate::Drop(th.mbps_drop_pct),
            |s| s.mb_s,
        ),
        lat_metric(MetricName::LatUsP50, bt, rt, |l| l.p50, Gate::None),
        lat_metric(
            MetricName::LatUsP99,
            bt,
            rt,
            |l| l.p99,
            g(Gate::Rise(th.p99_rise_pct)),
        ),
        lat_metric(MetricName::LatUsP999, bt, rt, |l| l.p99_9, Gate::None),
        lat_metric(MetricName::LatUsMax, bt, rt, |l| l.max, Gate::None),
        metric(
            MetricName::CpuUsPerIo,
            Some(b.cpu.us_per_io),
            Some(r.cpu.us_per_io),
            Gate::None,
        ),
    ]
}

/// IOPS, MB/s and p99 of one target on both sides (either may be missing); shown, never judged.
pub fn target_metrics(b: Option<&TargetResult>, r: Option<&TargetResult>) -> Vec<Metric> {
    let (bt, rt) = (b.map(|t| &t.total), r.map(|t| &t.total));
    let iops = |o: &OpStats| o.iops;
    let mb_s = |o: &OpStats| o.mb_s;
    vec![
        metric(MetricName::Iops, bt.map(iops), rt.map(iops), Gate::None),
        metric(MetricName::MbS, bt.map(mb_s), rt.map(mb_s), Gate::None),
        lat_metric(MetricName::LatUsP99, bt, rt, |l| l.p99, Gate::None),
    ]
}

/// Which way is good for a judged figure, and its threshold.
#[derive(Clone, Copy)]
enum Gate {
    None,
    /// Higher is better; a drop beyond the threshold is a regression.
    Drop(f64),
    /// Lower is better; a rise beyond the threshold is a regression.
    Rise(f64),
}

/// The noise of a figure on both sides: each side's interval, and Welch's test between them.
#[derive(Clone, Copy, Default)]
struct Noise {
    base_ci95: Option<[f64; 2]>,
    run_ci95: Option<[f64; 2]>,
    p_value: Option<f64>,
}

impl Noise {
    /// From the two tests' per-second series of one figure.
    fn of(base: &TestResult, run: &TestResult, f: fn(&SecondSample) -> f64) -> Self {
        let (b, r): (Vec<f64>, Vec<f64>) = (
            base.per_second.iter().map(f).collect(),
            run.per_second.iter().map(f).collect(),
        );
        Self::of_series(&b, &r)
    }

    /// From two per-second series of one figure.
    fn of_series(b: &[f64], r: &[f64]) -> Self {
        let ci = |x: &[f64]| iocap_stats::batch_means_ci(x, 0.95).map(|c| [c.lo, c.hi]);
        Noise {
            base_ci95: ci(b),
            run_ci95: ci(r),
            p_value: iocap_stats::welch_batch_means(b, r).map(|w| w.p_value),
        }
    }
}

/// A finite figure, or none.
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

fn lat_metric(
    name: MetricName,
    b: Option<&OpStats>,
    r: Option<&OpStats>,
    pick: fn(&LatencyUs) -> f64,
    gate: Gate,
) -> Metric {
    let lat = |o: Option<&OpStats>| o.and_then(|o| o.lat_us.as_ref()).map(pick);
    metric(name, lat(b), lat(r), gate)
}

fn metric(name: MetricName, base: Option<f64>, run: Option<f64>, gate: Gate) -> Metric {
    noisy_metric(name, base, run, gate, Noise::default())
}

/// A threshold's verdict on a change in percent.
fn verdict(change_pct: f64, gate: Gate) -> Option<ChangeVerdict> {
    match gate {
        Gate::Drop(th) if change_pct < -th => Some(ChangeVerdict::Regression),
        Gate::Drop(th) if change_pct > th => Some(ChangeVerdict::Better),
        Gate::Rise(th) if change_pct > th => Some(ChangeVerdict::Regression),
        Gate::Rise(th) if change_pct < -th => Some(ChangeVerdict::Better),
        _ => None,
    }
}

fn noisy_metric(
    name: MetricName,
    base: Option<f64>,
    run: Option<f64>,
    gate: Gate,
    noise: Noise,
) -> Metric {
    let (base, run) = (base.and_then(finite), run.and_then(finite));
    // not defined for a missing side
    let change = base.zip(run).and_then(|(b, r)| change_pct(b, r));
    let verdict = match (change.and_then(|c| verdict(c, gate)), noise.p_value) {
        (Some(_), Some(p)) if p >= NOISE_P => Some(ChangeVerdict::WithinNoise),
        (v, _) => v,
    };
    Metric {
        metric: name,
        base,
        run,
        change_pct: change,
        verdict,
        base_ci95: noise.base_ci95,
        run_ci95: noise.run_ci95,
        p_value: noise.p_value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_name_serialises_to_its_old_string_and_parses_back() {
        let old = [
            "iops",
            "mb_s",
            "lat_us_p50",
            "lat_us_p99",
            "lat_us_p99_9",
            "lat_us_max",
            "cpu_us_per_io",
        ];
        for (m, s) in MetricName::ALL.into_iter().zip(old) {
            assert_eq!(m.name(), s);
            assert_eq!(toml::Value::try_from(m).unwrap(), toml::Value::from(s));
            assert_eq!(toml::Value::from(s).try_into::<MetricName>().unwrap(), m);
        }
        assert!(toml::Value::from("IOPS").try_into::<MetricName>().is_err());
    }

    #[test]
    fn verdicts_serialise_in_snake_case() {
        for (v, s) in [
            (ChangeVerdict::Regression, "regression"),
            (ChangeVerdict::Better, "better"),
            (ChangeVerdict::WithinNoise, "within_noise"),
        ] {
            assert_eq!(toml::Value::try_from(v).unwrap(), toml::Value::from(s));
        }
    }

    #[test]
    fn a_change_beyond_the_threshold_is_judged_and_one_at_it_is_not() {
        assert_eq!(verdict(-10.0, Gate::Drop(10.0)), None);
        assert_eq!(
            verdict(-10.1, Gate::Drop(10.0)),
            Some(ChangeVerdict::Regression)
        );
        assert_eq!(verdict(10.1, Gate::Drop(10.0)), Some(ChangeVerdict::Better));
        assert_eq!(
            verdict(20.1, Gate::Rise(20.0)),
            Some(ChangeVerdict::Regression)
        );
        assert_eq!(
            verdict(-20.1, Gate::Rise(20.0)),
            Some(ChangeVerdict::Better)
        );
        assert_eq!(verdict(-90.0, Gate::None), None);
    }

    #[test]
    fn a_change_inside_the_noise_is_within_noise() {
        let noise = Noise {
            p_value: Some(0.2),
            ..Noise::default()
        };
        let m = noisy_metric(
            MetricName::Iops,
            Some(100.0),
            Some(50.0),
            Gate::Drop(10.0),
            noise,
        );
        assert_eq!(m.verdict, Some(ChangeVerdict::WithinNoise));
        let m = metric(MetricName::Iops, Some(100.0), Some(50.0), Gate::Drop(10.0));
        assert_eq!(
            m.verdict,
            Some(ChangeVerdict::Regression),
            "no series: threshold alone"
        );
    }

    #[test]
    fn a_change_against_nothing_is_not_defined() {
        assert_eq!(change_pct(200.0, 150.0), Some(-25.0));
        assert_eq!(change_pct(0.0, 150.0), None);
        assert_eq!(change_pct(f64::NAN, 1.0), None);
        let m = metric(MetricName::Iops, Some(0.0), Some(5.0), Gate::Drop(10.0));
        assert_eq!((m.change_pct, m.verdict), (None, None));
        let m = metric(MetricName::Iops, Some(f64::NAN), None, Gate::Drop(10.0));
        assert_eq!((m.base, m.run, m.verdict), (None, None, None));
    }

    #[test]
    fn only_a_regression_fails_and_only_when_asked() {
        assert!(OnRegression::Fail.fails(1));
        assert!(!OnRegression::Fail.fails(0));
        assert!(!OnRegression::Report.fails(3));
    }
}

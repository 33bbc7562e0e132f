//! What the assessing commands conclude from their tests: the load–latency curve and knee of
//! `iocap saturate`, the scale-up of `iocap scaleup`, and the capacity table with verdicts of
//! `iocap preflight`. Each is stored on the [`crate::RunResult`] beside the tests it was
//! computed from, so a report can redraw the curve and a later iocap can recompute a verdict.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Role, Verdict};

/// One point of a load–latency curve: one test of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CurvePoint {
    /// Index of the test in `RunResult.tests` that measured this point.
    pub test_idx: u32,
    /// Outstanding I/Os per thread per target.
    pub qd: u32,
    /// For throttled points: the load asked for, in percent of the maximum; `null` for the
    /// unthrottled steps.
    pub load_pct: Option<f64>,
    pub iops: f64,
    pub mb_s: f64,
    pub lat_us_p50: Option<f64>,
    pub lat_us_p99: Option<f64>,
    /// The step's per-second IOPS, so the knee rule can tell a gain from noise; empty in runs
    /// saved before it was recorded (the rule then uses the threshold alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_second_iops: Vec<f64>,
}

impl CurvePoint {
    /// The point that test `t` (index `test_idx` of its run) measured at `qd`, and at
    /// `load_pct` for a throttled point.
    pub fn of(test_idx: u32, qd: u32, load_pct: Option<f64>, t: &crate::TestResult) -> Self {
        CurvePoint {
            test_idx,
            qd,
            load_pct,
            iops: t.total.iops,
            mb_s: t.total.mb_s,
            lat_us_p50: t.total.lat_us.as_ref().map(|l| l.p50),
            lat_us_p99: t.total.lat_us.as_ref().map(|l| l.p99),
            per_second_iops: t.per_second.iter().map(|s| s.iops).collect(),
        }
    }
}

/// The result of `iocap saturate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Saturation {
    /// The unthrottled steps, queue depth 1, 2, 4, ...
    pub steps: Vec<CurvePoint>,
    /// Throttled points at a share of the maximum (10, 50, 70, 80, 90, 100 %).
    pub throttled: Vec<CurvePoint>,
    /// The queue depth past which throughput gained less than `min_gain_pct` while latency
    /// kept rising; `null` if the steps never flattened.
    pub knee_qd: Option<u32>,
    /// Why the steps stopped, in words.
    pub stop_reason: String,
    pub max_iops: f64,
    pub max_mb_s: f64,
    /// The gain per doubling below which throughput counts as flat, in percent.
    pub min_gain_pct: f64,
    /// The p99 latency that ends the steps, if set.
    pub lat_ceiling_us: Option<f64>,
    /// The p99 latency target for the capacity figure, if set.
    pub latency_target_us: Option<f64>,
    /// The highest IOPS measured with p99 at or below the target (CALIBRATE_IO's max_iops at
    /// max_latency).
    pub capacity_iops_at_target: Option<f64>,
    pub capacity_qd_at_target: Option<u32>,
    /// The sweep over block sizes at the depth of the highest IOPS, run after the steps to
    /// tell a cap from the device's own limit; empty when skipped (`--sizes none`) or in runs
    /// saved before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub size_sweep: Vec<crate::SizePoint>,
    /// The kind of limit the run met, from the sweep; `null` without a sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<crate::Limit>,
    /// The tests whose per-second IOPS fell to a lower level and stayed: a burst that ran out
    /// inside them (their figures mix the burst and the baseline; the figures of the tests
    /// before were taken inside the burst).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drops: Vec<crate::LevelDrop>,
    /// The burst bucket measured before the steps (`--bucket`); `null` without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket: Option<crate::BurstBucket>,
}

/// One volume tested alone by `iocap scaleup`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VolumeAlone {
    pub path: String,
    pub test_idx: u32,
    pub iops: f64,
    pub mb_s: f64,
    pub lat_us_p99: Option<f64>,
    /// More than 20 % below the median of its peers.
    pub slow: bool,
}

/// Several volumes together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScaleStep {
    pub test_idx: u32,
    pub paths: Vec<String>,
    pub iops: f64,
    pub mb_s: f64,
    /// Aggregate over the sum of the same volumes alone, in percent (100: linear).
    pub efficiency_pct: f64,
}

/// The result of `iocap scaleup`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScaleUp {
    pub alone: Vec<VolumeAlone>,
    pub together: Vec<ScaleStep>,
}

impl ScaleUp {
    /// The volumes flagged slow alone (more than 20 % below the median of the others).
    pub fn slow_paths(&self) -> Vec<&str> {
        self.alone
            .iter()
            .filter(|v| v.slow)
            .map(|v| v.path.as_str())
            .collect()
    }
}

/// One line of the preflight capacity table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CapacityRow {
    /// `data`, `log`, `temp` or `backup`.
    pub role: Role,
    /// e.g. `8K random read IOPS at p99 <= 10 ms`.
    pub metric: String,
    pub value: Option<f64>,
    /// Unit of `value`: `IOPS`, `MB/s`, `us`.
    pub unit: String,
    pub verdict: Verdict,
    /// The guideline or expectation held against, in words.
    pub against: Option<String>,
    /// What the verdict means and what to look at, in one sentence.
    pub sentence: String,
    /// Tests of the run this row was computed from.
    pub test_idx: Vec<u32>,
}

/// The result of `iocap preflight`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Preflight {
    /// Database family: `sqlserver`, `postgres`, `mysql` or `oracle`.
    pub profile: String,
    pub quick: bool,
    /// `flash` or `rotational`, per role, from sysfs or `--device-class`.
    pub device_class: String,
    pub rows: Vec<CapacityRow>,
    pub warnings: Vec<String>,
    /// Size of the test files, when a cache scan chose it (4 times the largest cache found,
    /// bounded by free space and time); absent when `--size` or the default set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_bytes: Option<u64>,
    /// The files could not be made 4 times larger than the largest cache found (or a cache
    /// could not be ruled out): the figures may include cache hits.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache_included: bool,
}

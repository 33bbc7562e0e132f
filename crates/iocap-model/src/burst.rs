//! A burst bucket measured (`iocap saturate --bucket`): a cloud volume's credits that give a
//! high rate for minutes, then a baseline, refilled while the volume is idle. The drain runs at
//! full speed until the rate falls and settles; each refill probe idles, then runs again and
//! counts the I/Os above the baseline it regained. `iocap_assess::burst` makes the figures.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::LevelDrop;

/// One refill probe: an idle pause, then a run at full speed back down to the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Refill {
    pub idle_s: f64,
    /// The I/Os above the baseline the run after the pause got: the credits the pause gave.
    pub regained_ios: f64,
    /// `regained_ios / idle_s`.
    pub ios_per_idle_s: f64,
    /// The run's per-second IOPS.
    pub per_second_iops: Vec<f64>,
}

/// The burst bucket a saturate run measured before its steps (`--bucket`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct BurstBucket {
    pub bs_bytes: u64,
    /// Outstanding I/Os per thread per target during the drain and the probes.
    pub qd: u32,
    /// The drain's per-second IOPS from its first second, across its tests.
    pub per_second_iops: Vec<f64>,
    /// Where the rate fell (`test_idx` is the drain's first test, `at_s` seconds from its
    /// start); `null` when it held for the whole drain.
    pub drop: Option<LevelDrop>,
    /// The mean IOPS before the drop: the burst's rate.
    pub peak_iops: Option<f64>,
    /// The mean IOPS after it: the baseline to plan on.
    pub baseline_iops: Option<f64>,
    /// `peak_iops / baseline_iops`.
    pub ratio: Option<f64>,
    /// Seconds at the burst's rate: the drop's second (its interval is the drop's).
    pub burst_s: Option<f64>,
    /// The I/Os and bytes done before the drop.
    pub burst_ios: Option<f64>,
    pub burst_bytes: Option<f64>,
    /// The I/Os above the baseline before the drop: the bucket's size in I/Os.
    pub credit_ios: Option<f64>,
    pub refills: Vec<Refill>,
    /// Credits regained per second idle, fitted over the probes (through zero); `null` without
    /// probes or a drop.
    pub refill_ios_per_s: Option<f64>,
    /// What was found, in one sentence.
    pub sentence: String,
}

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

/// How a test's I/Os were held against a stored bucket's credits ([`InsideBurst::counted_in`]):
/// a bucket measured at one I/O size may count I/Os (as gp2's credits do) or bytes (as a
/// throughput bucket does), and one measurement cannot tell which.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CountedIn {
    /// Counted in I/Os: the test ran inside the credits as I/Os, not as bytes.
    Ios,
    /// Counted in bytes: the test ran inside the credits as bytes, not as I/Os.
    Bytes,
    /// Either way (the test ran the bucket's I/O size, or was inside both counts).
    IosAndBytes,
}

impl CountedIn {
    pub fn name(self) -> &'static str {
        match self {
            CountedIn::Ios => "ios",
            CountedIn::Bytes => "bytes",
            CountedIn::IosAndBytes => "ios_and_bytes",
        }
    }
}

/// A test of this run that was shorter than the burst a stored bucket gives at its rate: had
/// the bucket been full when it started, it never ran out inside the test, so the test's
/// figures may be the burst's (`iocap_assess::stored_bucket`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InsideBurst {
    /// Index of the test in `RunResult.tests`.
    pub test_idx: u32,
    /// How its I/Os were held against the credits.
    pub counted_in: CountedIn,
    /// The test's rate on the bucket's target, in the I/Os the bucket counts (its writes
    /// alone for a bucket drained by writes), and in bytes per second.
    pub iops: f64,
    pub bytes_per_s: f64,
    /// Seconds it ran at that rate: the warm-up and the measured window (with the other tests
    /// of its group, that ran at the same time).
    pub ran_s: f64,
    /// The seconds a full bucket lasts at that rate: the credits over the rate above the
    /// baseline, counted as `counted_in` says (I/Os where both are inside).
    pub burst_at_rate_s: f64,
    /// What was found, in one sentence (also a warning of the test, or of preflight).
    pub sentence: String,
}

/// The burst bucket of the newest stored `saturate --bucket` on this run's target (the same
/// host, and the same device, or the same path where the device cannot be told), held against
/// this run's tests (issue 37 §3): a test can only show a burst that ran out inside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StoredBucket {
    /// The run that measured the bucket, and when it started (RFC 3339).
    pub run_id: String,
    pub started_at: String,
    /// The drain's workload: a bucket drained by writes alone may be a write cache, which
    /// reads do not spend, so only a test's writes are held against it.
    pub rw: crate::RwMode,
    pub write_pct: u8,
    pub bs_bytes: u64,
    /// The bucket's credits (the I/Os above the baseline before the drop), and in bytes at
    /// the drain's I/O size.
    pub credit_ios: f64,
    pub credit_bytes: f64,
    /// The burst's rate, the baseline, and the burst's length at the drain's rate.
    pub peak_iops: f64,
    pub baseline_iops: f64,
    pub burst_s: f64,
    /// The tests of this run that may have run inside the burst; empty when none did.
    pub inside: Vec<InsideBurst>,
}

//! How sure a test's headline figures are. The storage under a database is shared and moody:
//! arrays tune their caches, hypervisors steal CPU, neighbours load the SAN, and the same test can
//! differ by 30 % within minutes. So every test carries, beside its IOPS and MB/s, the spread of
//! its per-second series, a confidence interval that allows for the series' autocorrelation, its
//! trend and the CPU the hypervisor stole, and a verdict with its reasons.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The uncertainty of one test's headline figures, from its per-second series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Uncertainty {
    /// Of the I/Os per second; `null` with fewer than three per-second samples.
    pub iops: Option<Spread>,
    /// Of the MB/s (10^6 bytes); `null` with fewer than three per-second samples.
    pub mb_s: Option<Spread>,
    /// Share of all CPUs' time the hypervisor gave to someone else during the measured window
    /// (`steal` in `/proc/stat`), in percent; `null` where it could not be read.
    pub steal_pct: Option<f64>,
    pub verdict: Stability,
    /// Why the verdict is what it is, one sentence each; empty for a stable test.
    pub reasons: Vec<String>,
}

/// The spread of one figure's per-second samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Spread {
    /// Mean of the per-second samples.
    pub mean: f64,
    /// 95 % confidence interval of the mean, by non-overlapping batch means (per-second samples
    /// are autocorrelated, so treating them as independent would make it too narrow).
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// Half the interval's width over the mean, in percent.
    pub ci95_half_pct: f64,
    /// Coefficient of variation of the per-second samples, in percent.
    pub cv_pct: f64,
    /// Mean of the last third of the samples over the mean of the first third, minus one, in
    /// percent; `null` when the first third's mean is zero.
    pub trend_pct: Option<f64>,
    /// Per-second samples, and the batches they were grouped into for the interval.
    pub samples: u32,
    pub batches: u32,
}

/// Whether a test's figures can be taken as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stability {
    /// Narrow interval, no trend, no significant steal.
    Stable,
    /// At least one reason says the figure may not repeat.
    Unstable,
    /// Fewer than three per-second samples: nothing to judge by.
    TooShort,
}

impl Stability {
    pub fn name(self) -> &'static str {
        match self {
            Self::Stable => "stable",
            Self::Unstable => "unstable",
            Self::TooShort => "too short to tell",
        }
    }
}

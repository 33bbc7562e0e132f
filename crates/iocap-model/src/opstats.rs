//! The figures of one class of operation (reads, writes, their total, syncs): counts, rates and
//! the latency distribution. Every level of a result states them this way: the test, each
//! target, each worker, each rank.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Counters and latency distribution of one class of operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct OpStats {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    /// 2^20 bytes per second.
    pub mib_s: f64,
    /// 10^6 bytes per second.
    pub mb_s: f64,
    /// Latency from submission to completion in microseconds; `null` when no I/O completed.
    pub lat_us: Option<LatencyUs>,
    /// The whole latency distribution, in nanoseconds: HdrHistogram V2, deflated, base64
    /// (see `iocap_model::hist`). Percentiles can be recomputed from it and runs merged.
    /// `null` when no I/O completed.
    #[serde(default)]
    pub lat_hist_ns: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct LatencyUs {
    pub min: f64,
    pub mean: f64,
    pub stddev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub p99_999: f64,
    pub max: f64,
}

impl LatencyUs {
    /// The statistics of one distribution, its percentiles read through `q` (a quantile from
    /// 0 to 1 → µs), as the engine and a merge of several ranks both state them.
    pub fn from_quantiles(
        min: f64,
        mean: f64,
        stddev: f64,
        max: f64,
        q: impl Fn(f64) -> f64,
    ) -> Self {
        LatencyUs {
            min,
            mean,
            stddev,
            p50: q(0.50),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            p99_9: q(0.999),
            p99_99: q(0.9999),
            p99_999: q(0.99999),
            max,
        }
    }
}

//! What kind of limit a saturate run met: the device's own, or a policy's cap on IOPS or on
//! throughput (a cloud volume's provisioned rate, a cgroup's blk-throttle, a hypervisor's
//! per-disk limit). A knee alone cannot say which; a sweep over block sizes at one depth can:
//! a cap on IOPS keeps IOPS flat while the bytes grow with the size, a cap on throughput keeps
//! the bytes flat, and a device does neither. `iocap_assess::limit` makes the judgement.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One point of saturate's sweep over block sizes, all at the same depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SizePoint {
    /// Index of the test in `RunResult.tests` that measured this point.
    pub test_idx: u32,
    pub bs_bytes: u64,
    /// Outstanding I/Os per thread per target.
    pub qd: u32,
    /// Outstanding I/Os in all: `qd` times the threads times the targets.
    pub outstanding: u32,
    pub iops: f64,
    pub mb_s: f64,
    pub lat_us_mean: Option<f64>,
    pub lat_us_p50: Option<f64>,
    pub lat_us_p99: Option<f64>,
    /// The point's per-second IOPS, so the judgement can see how steady it ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_second_iops: Vec<f64>,
}

/// The kind of limit a saturate run met; scripts read these names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// IOPS stayed flat over the block sizes while MB/s grew with the size.
    IopsCap,
    /// MB/s stayed flat over the block sizes.
    ThroughputCap,
    /// Neither: the device's own saturation (or a cap at exactly the device's limit, which
    /// cannot be told from it).
    Device,
}

impl LimitKind {
    pub fn name(self) -> &'static str {
        match self {
            LimitKind::IopsCap => "iops_cap",
            LimitKind::ThroughputCap => "throughput_cap",
            LimitKind::Device => "device",
        }
    }
}

/// The unit of [`Limit::rate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RateUnit {
    Iops,
    BytesPerS,
}

/// The limit a saturate run met, with the evidence for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Limit {
    pub kind: LimitKind,
    /// The cap's rate: IOPS for `iops_cap`, bytes per second for `throughput_cap`; for
    /// `device`, the highest IOPS the ramp measured at the run's block size.
    pub rate: f64,
    /// `iops` or `bytes_per_s`.
    pub rate_unit: RateUnit,
    /// How far the sweep's points lie from their median at most, in percent: for a cap, the
    /// flatness its rate rests on (IOPS for an IOPS cap, MB/s for a throughput cap); for the
    /// device, the IOPS's.
    pub spread_pct: f64,
    /// IOPS at the largest size over IOPS at the smallest (about 1 under an IOPS cap).
    pub iops_ratio: f64,
    /// MB/s at the largest size over MB/s at the smallest (about 1 under a throughput cap,
    /// about the sizes' ratio under an IOPS cap).
    pub mb_s_ratio: f64,
    /// The largest size over the smallest.
    pub size_ratio: f64,
    /// How steady the sweep's points ran: the median, over the points of three seconds or
    /// more, of each one's median absolute deviation of its per-second IOPS, in percent of its
    /// median (0 under blk-throttle, which grants each second the same count); `null` when no
    /// point ran three seconds.
    pub per_second_mad_pct: Option<f64>,
    /// The largest p99 over p50 of the sweep's points (near 1 where a cap paces each request
    /// evenly; blk-throttle releases its requests in bursts and spreads them wide); `null`
    /// without latencies.
    pub p99_over_p50: Option<f64>,
    /// The test that timed the device's own requests: the run's block size at the sweep's
    /// depth, its block requests recorded from the kernel's tracepoints; absent where that
    /// could not run (not root, no eBPF, a target on no block device, several hosts) or was
    /// skipped (`--no-device-time`), which the evidence says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_time_test_idx: Option<u32>,
    /// The requests the device completed in that test's measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_requests: Option<u64>,
    /// Their mean time in the device: the driver given the request (`block_rq_issue`) to its
    /// completion (`block_rq_complete`), in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_time_us_mean: Option<f64>,
    /// iocap's own mean latency in the same test, submission to completion, in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iocap_lat_us_mean: Option<f64>,
    /// The share of iocap's time not spent in the device: `1 - device / iocap`, in percent
    /// (at least 0). Near 100 where something holds the requests before the driver sees them
    /// (blk-throttle, or a queue deeper than the device takes), near 0 where they wait in the
    /// device (its own limit, or a cap below the driver: a volume's or a hypervisor's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above_driver_pct: Option<f64>,
    /// The facts the verdict rests on, one sentence each.
    pub evidence: Vec<String>,
    /// The verdict in one sentence, e.g. `an IOPS cap near 3,000: ...`.
    pub sentence: String,
}

/// A test whose per-second IOPS held one level and then fell to a lower one and stayed: a
/// burst that ran out inside it (`iocap_assess::burst`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LevelDrop {
    /// Index of the test in `RunResult.tests`.
    pub test_idx: u32,
    /// Seconds into the test's measured window when the lower level began.
    pub at_s: f64,
    /// The 95 % interval of `at_s`.
    pub at_s_low: f64,
    pub at_s_high: f64,
    /// The mean IOPS of the seconds before the drop: a burst's rate.
    pub before_iops: f64,
    /// The mean IOPS of the seconds after it: the baseline to plan on.
    pub after_iops: f64,
}

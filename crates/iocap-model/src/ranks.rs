//! The scope of a test that ran on several hosts at once (MPI ranks): each rank's own figures,
//! beside the merged figure the test states, and how closely together the ranks started.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::TestResult;

/// The ranks that ran one test together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ranks {
    /// How far apart the ranks left the start barrier: the latest minus the earliest, in µs,
    /// by each host's real-time clock (hosts' clock offsets are included).
    pub start_spread_us: f64,
    /// What rank 0 took to decode every rank's result and merge them, once all had arrived,
    /// in µs (the gather before it waits for the slowest rank).
    #[serde(default)]
    pub merge_us: f64,
    /// Every rank, in rank order.
    pub ranks: Vec<RankScope>,
}

/// One rank's part of a test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RankScope {
    pub rank: u32,
    pub host: String,
    /// When this rank left the start barrier, after the earliest, in µs.
    pub start_offset_us: f64,
    /// Its IOPS are below the ranks' median by more than its own noise (the 95 % interval of
    /// its IOPS, at least 2 %): a slow host or path.
    pub below_median: bool,
    /// Its own figures, as a test run on this host alone would state them.
    pub result: TestResult,
    /// The host it ran on (kernel, CPU model, CPUs, memory), as the run's `host` says of rank
    /// 0's; absent in runs saved before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_info: Option<crate::HostInfo>,
}

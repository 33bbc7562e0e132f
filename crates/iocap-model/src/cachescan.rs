//! What `iocap cachescan` found: the caches below the operating system, located by measurement.
//!
//! A cache in a controller, an array or a hypervisor answers reads of data it holds faster than
//! the storage behind it, and the operating system cannot see it. The scan reads working sets
//! that double in size; while a working set fits a cache its reads are hits, and once it no
//! longer fits, latency rises and IOPS fall. Each such step is a [`CacheLevel`]. The rule that
//! test files must be 2 to 4 times larger than every cache in the path is applied from here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One working set of the sweep: its region warmed, then measured at qd 1 and qd 32.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CacheStep {
    /// Size of the region read: `[0, working_set_bytes)` of the target.
    pub working_set_bytes: u64,
    /// Time the warming pass took (one sequential read of the region).
    pub warm_s: f64,
    /// Index in `RunResult.tests` of the qd 32 random-read test.
    pub qd32_test_idx: u32,
    /// Index in `RunResult.tests` of the qd 1 random-read test.
    pub qd1_test_idx: u32,
    /// Mean latency of the fastest 98 % of the qd 1 reads: what the level rule reads. A mean
    /// moves with the share of misses as soon as the set outgrows a cache (a median waits
    /// until half the reads miss); leaving out the slowest 2 % keeps a few stalls of the host
    /// from moving it.
    pub lat_us_trim_mean: f64,
    pub lat_us_p50: f64,
    pub lat_us_p99: f64,
    /// IOPS of the qd 32 reads.
    pub iops_qd32: f64,
}

/// A cache found between two working sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CacheLevel {
    /// The largest working set that still ran at hit speed.
    pub fits_bytes: u64,
    /// The next working set, where latency rose and IOPS fell.
    pub exceeds_bytes: u64,
    /// Estimate from the share of hits at `exceeds_bytes` (an LRU cache of size C holds about
    /// C/W of a working set W), kept between the two bounds.
    pub estimated_bytes: u64,
    /// qd 1 latency while the working set fits (`lat_us_trim_mean` of that step).
    pub hit_lat_us: f64,
    /// qd 1 latency (`lat_us_trim_mean`) of the largest working set before the next level (or
    /// the sweep's end): at least what a miss costs, more so the further the sweep went past the cache.
    pub miss_lat_us: f64,
    pub hit_iops_qd32: f64,
    pub miss_iops_qd32: f64,
}

/// A second look at a level's edge: the working set that fit, warmed and measured again after
/// the sweep, then the one past it. A rise seen once can be the host's load growing between
/// two steps (a sweep only ever goes up); measured again in the same order later, the load
/// has no reason to rise at the same edge, while a cache rises there every time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CacheRecheck {
    pub fit: CacheStep,
    pub over: CacheStep,
    /// The rise and the fall held again: the level stands. A level whose every recheck failed
    /// is dropped from `levels`, with a note.
    pub confirmed: bool,
}

/// Whether a write cache holds recent writes: pages written and read back at once, against
/// reads of pages not written lately, interleaved at qd 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReadAfterWrite {
    /// Pairs measured (each: one write, its read-back, one read of old data).
    pub samples: u32,
    pub block_bytes: u64,
    /// Median latency of a read right after the write of the same page.
    pub fresh_lat_us_p50: f64,
    /// Median latency of a read of a page not written during the check.
    pub old_lat_us_p50: f64,
    /// Median latency of the writes.
    pub write_lat_us_p50: f64,
    /// Fresh reads at most half as slow as old ones: something below the OS keeps written
    /// data and answers from it.
    pub holds_recent_writes: bool,
}

/// The result of `iocap cachescan` (also run by `preflight` to size its files).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct CacheScan {
    pub target: String,
    pub block_bytes: u64,
    pub steps: Vec<CacheStep>,
    /// Levels found, smallest first.
    pub levels: Vec<CacheLevel>,
    /// The largest working set measured: no cache larger than this can be ruled out.
    pub tried_up_to_bytes: u64,
    /// Why the sweep stopped, in words.
    pub stop_reason: String,
    #[serde(default)]
    pub read_after_write: Option<ReadAfterWrite>,
    /// The second looks at each edge the sweep found, in the order run.
    #[serde(default)]
    pub rechecks: Vec<CacheRecheck>,
    /// What the scan could not rule out or did not do, in sentences.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl CacheScan {
    /// The upper bound of the largest cache found: test files should be 4 times this.
    pub fn largest_cache_bytes(&self) -> Option<u64> {
        self.levels.iter().map(|l| l.exceeds_bytes).max()
    }
}

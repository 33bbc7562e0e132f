//! What `iocap fsync` measured: the ways of making a log write durable compared at queue depth
//! 1, per write size (issue 7). Stored as [`crate::RunResult::fsync`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::LatencyUs;

/// One `iocap fsync` run: every (method, size) point, the device it ran on, what looked wrong
/// and what to set in the database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct FsyncReport {
    /// The test file (or block device) that was written.
    pub target: String,
    /// The block device holding the target (sysfs name), `null` when it cannot be told.
    #[serde(default)]
    pub device: Option<String>,
    /// The file system of the target (`ext4`, `xfs`, `tmpfs`); `null` for a block device.
    #[serde(default)]
    pub fs_type: Option<String>,
    /// The device's `queue/rotational` flag from sysfs; `null` when unknown.
    #[serde(default)]
    pub rotational: Option<bool>,
    /// The device's `queue/write_cache` from sysfs: `write back` (a volatile cache the kernel
    /// flushes) or `write through`; `null` when unknown.
    #[serde(default)]
    pub write_cache: Option<String>,
    /// The device's `queue/fua` from sysfs: whether it takes Forced Unit Access writes.
    #[serde(default)]
    pub fua: Option<bool>,
    /// The O_DIRECT alignment of the target; O_DIRECT sizes below it are skipped.
    pub logical_block_bytes: u64,
    /// Size of the test file; writes stay inside it.
    pub file_size_bytes: u64,
    /// Where each write goes: `same` (offset 0 every time, as pg_test_fsync) or `cycle`
    /// (walking through the file, wrapping at its end).
    pub offsets: String,
    /// Time asked for per point.
    pub duration_s: f64,
    /// The database family the recommendation is for: `postgres`, `sqlserver`, `mysql`,
    /// `oracle`.
    pub profile: String,
    pub points: Vec<FsyncPoint>,
    /// Implausibly fast durable writes for the device class, and other caveats.
    pub warnings: Vec<String>,
    /// One or two plain sentences for the profile's database, with the measured numbers.
    pub recommendation: String,
}

/// One method at one write size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct FsyncPoint {
    /// `fsync` (write + fsync), `fdatasync` (write + fdatasync), `o_dsync`,
    /// `o_direct_o_dsync`, `o_sync`, `o_direct_o_sync`, `rwf_dsync` (pwritev2 with RWF_DSYNC).
    pub method: String,
    pub size_bytes: u64,
    /// Durable writes completed (for `fsync`/`fdatasync`: write plus flush pairs).
    pub ops: u64,
    /// Measured time of this point, shorter if interrupted.
    pub duration_s: f64,
    /// `ops / duration_s`.
    pub ops_per_s: f64,
    /// Latency of each durable write (write and flush together) in microseconds; `null` when
    /// nothing was measured.
    #[serde(default)]
    pub lat_us: Option<LatencyUs>,
    /// Whether the method could run here; `false` with `reason` when the kernel or file system
    /// does not offer it or the size does not suit it.
    pub available: bool,
    #[serde(default)]
    pub reason: Option<String>,
}

//! What the operating system's own disk counters said during a test: `/proc/diskstats` for the
//! block devices under the test's targets, sampled on the edges of iocap's own per-second
//! intervals, so every device figure sits beside the iocap figure of the same second. Experts
//! check every benchmark against `iostat -x`; this is that check, kept with the result. On
//! Windows the same figures come from the physical disks' `IOCTL_DISK_PERFORMANCE` counters,
//! the ones perfmon's PhysicalDisk object shows ([`DISK_PERFORMANCE_SOURCE`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `OsCounters.source` on Windows: the physical disks' IOCTL_DISK_PERFORMANCE counters (perfmon's
/// PhysicalDisk object), shown under perfmon's names.
pub const DISK_PERFORMANCE_SOURCE: &str = "IOCTL_DISK_PERFORMANCE";

/// The OS counters of one test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct OsCounters {
    /// Where the counters came from (`/proc/diskstats`, or `IOCTL_DISK_PERFORMANCE` on
    /// Windows).
    pub source: String,
    /// One entry per block device sampled.
    pub devices: Vec<OsDevice>,
    /// Why some or all targets have no device counters (tmpfs, FUSE, NFS: no block device).
    #[serde(default)]
    pub unavailable: Vec<String>,
}

/// One block device during one test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct OsDevice {
    /// Kernel name (`vda`, `nvme0n1p2`, `dm-0`, `loop3`); on Windows the physical disk
    /// (`PhysicalDrive2`, perfmon's instance `2 ...`).
    pub device: String,
    /// `target` for the device that holds a target (the one iocap's I/O goes to one for one),
    /// `underlying` for the devices below it (dm, md and partition parents), shown for
    /// reference only.
    pub role: DeviceRole,
    /// The targets of this test on this device (paths as given).
    pub targets: Vec<String>,
    /// The device over the whole measured window (time-weighted average of `series`).
    pub summary: DeviceSample,
    /// One sample per second of the measured window, on the same edges as the test's
    /// `per_second` series (`t_s` is seconds since the window opened).
    pub series: Vec<DeviceSample>,
    /// Where the device's counters and iocap's figures disagree, and the likely reason.
    #[serde(default)]
    pub findings: Vec<OsFinding>,
}

/// Where a sampled device stands to the test's targets (`OsDevice.role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeviceRole {
    /// The device that holds a target: iocap's I/O goes to it one for one.
    #[default]
    Target,
    /// A device below a target's (dm, md and partition parents), for reference only.
    Underlying,
}

impl DeviceRole {
    pub fn name(self) -> &'static str {
        match self {
            DeviceRole::Target => "target",
            DeviceRole::Underlying => "underlying",
        }
    }
}

/// A disagreement between what iocap did and what the device saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OsFinding {
    /// `served_from_cache`, `merging`, `writes_absorbed`, `write_amplification`,
    /// `device_saturated`, `device_busy` or `cpu_bound` (a newer version's kind is kept as it
    /// is).
    pub kind: FindingKind,
    /// One plain sentence with both figures.
    pub message: String,
}

/// What an [`OsFinding`] is about. The set grows as the check learns new disagreements, so a
/// kind this version does not know (a run saved by a newer iocap) is kept as
/// [`FindingKind::Other`]; in the JSON it stays a plain string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(from = "String", into = "String")]
pub enum FindingKind {
    /// Reads the device never saw: the page cache served them.
    ServedFromCache,
    /// The block layer merged requests.
    Merging,
    /// Writes the device never saw: a cache absorbed them.
    WritesAbsorbed,
    /// The device wrote more than iocap did.
    WriteAmplification,
    /// The device was saturated.
    DeviceSaturated,
    /// Other I/O kept the device busy.
    DeviceBusy,
    /// iocap's CPU, not the device, set the pace.
    CpuBound,
    /// A kind this version does not know, kept as it was.
    Other(String),
}

crate::names::open_names!(FindingKind {
    ServedFromCache => "served_from_cache",
    Merging => "merging",
    WritesAbsorbed => "writes_absorbed",
    WriteAmplification => "write_amplification",
    DeviceSaturated => "device_saturated",
    DeviceBusy => "device_busy",
    CpuBound => "cpu_bound",
});

/// Per-second figures for one device over one interval, as `iostat -x` shows
/// them. Units are in the field names: `_s` = per second, `kb` = KiB (1024 B,
/// iostat's "kB"), `mb` = 10⁶ B, `_ms` = milliseconds, `_pct` = percent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceSample {
    /// Kernel device name (`vda`, `nvme0n1`, `sda1`...).
    pub device: String,
    /// End of the interval, seconds since the sampler started (0-based).
    pub t_s: f64,
    /// Length of the interval in seconds.
    pub interval_s: f64,
    /// Reads completed per second (`r/s`).
    pub r_s: f64,
    /// Writes completed per second (`w/s`).
    pub w_s: f64,
    /// Discards completed per second (`d/s`).
    pub d_s: f64,
    /// Flush requests per second (`f/s`).
    pub f_s: f64,
    /// KiB read per second (`rkB/s`, 1 kB = 1024 B as in iostat).
    pub rkb_s: f64,
    /// KiB written per second (`wkB/s`).
    pub wkb_s: f64,
    /// KiB discarded per second (`dkB/s`).
    pub dkb_s: f64,
    /// Read throughput in decimal megabytes (10⁶ B) per second.
    pub rmb_s: f64,
    /// Write throughput in decimal megabytes (10⁶ B) per second.
    pub wmb_s: f64,
    /// Read requests merged per second (`rrqm/s`).
    pub rrqm_s: f64,
    /// Write requests merged per second (`wrqm/s`).
    pub wrqm_s: f64,
    /// Percentage of read requests merged (`%rrqm`).
    pub rrqm_pct: f64,
    /// Percentage of write requests merged (`%wrqm`).
    pub wrqm_pct: f64,
    /// Average read latency incl. queueing, ms (`r_await`).
    pub r_await_ms: f64,
    /// Average write latency incl. queueing, ms (`w_await`).
    pub w_await_ms: f64,
    /// Average discard latency, ms (`d_await`).
    pub d_await_ms: f64,
    /// Average flush latency, ms (`f_await`).
    pub f_await_ms: f64,
    /// Average latency over reads+writes+discards, ms (`await`, iostat `-s`).
    pub await_ms: f64,
    /// Average read request size, KiB (`rareq-sz`).
    pub rareq_sz_kb: f64,
    /// Average write request size, KiB (`wareq-sz`).
    pub wareq_sz_kb: f64,
    /// Average queue size (`aqu-sz`).
    pub aqu_sz: f64,
    /// Percentage of the interval the device had I/O in flight (`%util`),
    /// capped at 100. Not a saturation measure on devices that serve many
    /// requests in parallel (SSD, NVMe, RAID).
    pub util_pct: f64,
    /// Requests in flight when the interval ended (perfmon's Current Disk Queue Length; a
    /// summary's is the mean of its samples'). Windows' counters only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_queue_length: Option<f64>,
    /// Requests the disk's driver split into several, per second (perfmon's Split IO/Sec).
    /// Windows' counters only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_s: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample from /proc/diskstats is written as before: Windows' own fields are left out when
    /// they are absent, and a saved sample without them reads back.
    #[test]
    fn windows_fields_are_absent_from_linux_samples() {
        let linux = DeviceSample {
            device: "vda".into(),
            r_s: 10.0,
            ..DeviceSample::default()
        };
        let v = serde_json::to_value(&linux).unwrap();
        assert!(v.get("current_queue_length").is_none() && v.get("split_s").is_none());
        assert_eq!(serde_json::from_value::<DeviceSample>(v).unwrap(), linux);
        let windows = DeviceSample {
            current_queue_length: Some(3.0),
            split_s: Some(0.5),
            ..linux
        };
        let v = serde_json::to_value(&windows).unwrap();
        assert_eq!(v["current_queue_length"], 3.0);
        assert_eq!(serde_json::from_value::<DeviceSample>(v).unwrap(), windows);
    }

    /// A device's role is written as it always was and reads back.
    #[test]
    fn device_roles_are_their_old_strings() {
        for (r, name) in [
            (DeviceRole::Target, "target"),
            (DeviceRole::Underlying, "underlying"),
        ] {
            assert_eq!(serde_json::to_value(r).unwrap(), name);
            assert_eq!(r.name(), name);
            assert_eq!(
                serde_json::from_value::<DeviceRole>(name.into()).unwrap(),
                r
            );
        }
    }
}

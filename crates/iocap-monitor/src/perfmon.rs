//! Windows' disk counters, as perfmon's PhysicalDisk object computes its counters: each
//! physical disk's `DISK_PERFORMANCE` (IOCTL_DISK_PERFORMANCE, decoded by
//! `iocap_platform::winstruct`), read on `\\.\PhysicalDriveN` opened with no access rights.
//! [`perf_delta`] turns two readings into the same [`DeviceSample`] fields [`crate::delta`]
//! fills from `/proc/diskstats`; [`PhysicalDisks`] reads the disks for the samplers.
//!
//! IOCTL_DISK_PERFORMANCE rather than PDH: it is the source of PDH's PhysicalDisk counters, read
//! with one call per disk at exactly the engine's edges (PDH collects on its own schedule
//! through a query and formats the figures itself), it needs no library beyond kernel32, and its
//! bytes are decoded by a pure function tested on Linux like the other ioctls. It needs the
//! disks' performance counters on, as they are by default; where the call fails iocap says
//! the counters cannot be read here and never turns them on (docs/windows.md).
//!
//! # Formulas (Δ = later − earlier reading, times in 100 ns, `T` = interval in seconds)
//!
//! | field | formula | perfmon counter |
//! |---|---|---|
//! | `r_s`, `w_s` | ΔReadCount / T, ΔWriteCount / T | Disk Reads/sec, Disk Writes/sec |
//! | `rkb_s`, `wkb_s` | ΔBytesRead / 1024 / T, ΔBytesWritten / 1024 / T | Disk Read Bytes/sec, Disk Write Bytes/sec (÷ 1024) |
//! | `rmb_s`, `wmb_s` | ΔBytesRead / 10⁶ / T, ΔBytesWritten / 10⁶ / T | |
//! | `r_await_ms` | ΔReadTime / ΔReadCount / 10⁴ | Avg. Disk sec/Read (× 1000) |
//! | `w_await_ms` | ΔWriteTime / ΔWriteCount / 10⁴ | Avg. Disk sec/Write (× 1000) |
//! | `await_ms` | (ΔReadTime + ΔWriteTime) / (ΔReadCount + ΔWriteCount) / 10⁴ | Avg. Disk sec/Transfer (× 1000) |
//! | `rareq_sz_kb`, `wareq_sz_kb` | ΔBytesRead / ΔReadCount / 1024, the same for writes | Avg. Disk Bytes/Read, /Write (÷ 1024) |
//! | `aqu_sz` | (ΔReadTime + ΔWriteTime) / (T × 10⁷) | Avg. Disk Queue Length |
//! | `util_pct` | 100 − % Idle Time, % Idle Time = ΔIdleTime / (T × 10⁷) × 100, capped at 100 | 100 − % Idle Time |
//! | `current_queue_length` | QueueDepth of the later reading (a gauge) | Current Disk Queue Length |
//! | `split_s` | ΔSplitCount / T | Split IO/Sec |
//!
//! Windows counts no discards, flushes or merges: those fields are 0. `T` is measured with a
//! monotonic clock between the readings, as on Linux (QueryTime is the wall clock, which can be
//! stepped). The 32-bit counts wrap as diskstats' do ([`crate::delta`]'s rule). A disk with
//! nothing completed and nothing in flight at either reading was idle: its `%util` is 0 whatever
//! IdleTime says (a driver may bring IdleTime up to date only when a request arrives).

use std::io;

use iocap_model::{DeviceSample, DISK_PERFORMANCE_SOURCE};
use iocap_platform::winstruct::DiskPerformance;

use crate::source::CounterSource;
use crate::{counter_delta, ratio, MonitorError, Watch};

/// The highest disk number `iocap monitor` looks for when no disk is named.
pub const MAX_DISK: u32 = 63;

/// 100 ns units per second.
const TICKS_PER_S: f64 = 1e7;

/// A physical disk's name in the samples: `PhysicalDrive2` (perfmon's instance `2 ...`).
pub fn disk_name(number: u32) -> String {
    format!("PhysicalDrive{number}")
}

/// The disk a user named: `2`, `PhysicalDrive2` or `\\.\PhysicalDrive2` (any case).
pub fn parse_disk(name: &str) -> Option<u32> {
    let lower = name.to_ascii_lowercase();
    let rest = lower
        .strip_prefix(r"\\.\")
        .or_else(|| lower.strip_prefix(r"\\?\"))
        .unwrap_or(&lower);
    rest.strip_prefix("physicaldrive")
        .unwrap_or(rest)
        .parse()
        .ok()
}

/// Per-second figures for the interval between two readings of the same disk, with perfmon's
/// formulas (see the module docs). `interval_s` ≤ 0 (or not finite) yields zero rates.
pub fn perf_delta(prev: &DiskPerformance, cur: &DiskPerformance, interval_s: f64) -> DeviceSample {
    let d = |p: u64, c: u64| counter_delta(p, c) as f64;
    let d32 = |p: u32, c: u32| counter_delta(u64::from(p), u64::from(c)) as f64;
    let (rd, wr) = (
        d32(prev.read_count, cur.read_count),
        d32(prev.write_count, cur.write_count),
    );
    let (rb, wb) = (
        d(prev.bytes_read, cur.bytes_read),
        d(prev.bytes_written, cur.bytes_written),
    );
    let (rt, wt) = (
        d(prev.read_time_100ns, cur.read_time_100ns),
        d(prev.write_time_100ns, cur.write_time_100ns),
    );
    let idle = d(prev.idle_time_100ns, cur.idle_time_100ns);
    let split = d32(prev.split_count, cur.split_count);
    let t = if interval_s.is_finite() && interval_s > 0.0 {
        interval_s
    } else {
        0.0
    };
    let per_s = |x: f64| ratio(x, t);
    let quiet = rd + wr == 0.0 && prev.queue_depth == 0 && cur.queue_depth == 0;
    let util_pct = if t > 0.0 && !quiet {
        100.0 - (idle / (t * TICKS_PER_S) * 100.0).min(100.0)
    } else {
        0.0
    };
    DeviceSample {
        interval_s: t,
        r_s: per_s(rd),
        w_s: per_s(wr),
        rkb_s: per_s(rb) / 1024.0,
        wkb_s: per_s(wb) / 1024.0,
        rmb_s: per_s(rb) / 1e6,
        wmb_s: per_s(wb) / 1e6,
        r_await_ms: ratio(rt, rd) / 1e4,
        w_await_ms: ratio(wt, wr) / 1e4,
        await_ms: ratio(rt + wt, rd + wr) / 1e4,
        rareq_sz_kb: ratio(rb, rd) / 1024.0,
        wareq_sz_kb: ratio(wb, wr) / 1024.0,
        aqu_sz: per_s(rt + wt) / TICKS_PER_S,
        util_pct,
        current_queue_length: Some(f64::from(cur.queue_depth)),
        split_s: Some(per_s(split)),
        ..DeviceSample::default()
    }
}

/// Physical disks by number, read with `read` (on Windows,
/// `iocap_platform::devinfo::disk_performance`; in tests, made-up readings).
pub struct PhysicalDisks<R> {
    disks: Vec<u32>,
    read: R,
}

impl<R: FnMut(u32) -> io::Result<DiskPerformance>> PhysicalDisks<R> {
    pub fn new(disks: Vec<u32>, read: R) -> PhysicalDisks<R> {
        PhysicalDisks { disks, read }
    }
}

impl<R: FnMut(u32) -> io::Result<DiskPerformance>> CounterSource for PhysicalDisks<R> {
    type Counters = DiskPerformance;
    fn name(&self) -> &'static str {
        DISK_PERFORMANCE_SOURCE
    }
    fn read(&mut self) -> io::Result<Vec<(String, DiskPerformance)>> {
        let read = &mut self.read;
        self.disks
            .iter()
            .map(|&n| match read(n) {
                Ok(c) => Ok((disk_name(n), c)),
                Err(e) => Err(io::Error::new(e.kind(), unreadable(n, &e))),
            })
            .collect()
    }
    fn delta(prev: &DiskPerformance, cur: &DiskPerformance, interval_s: f64) -> DeviceSample {
        perf_delta(prev, cur, interval_s)
    }
}

/// Why disk `n` has no counters: what a user reads in `unavailable` and in monitor's error.
fn unreadable(n: u32, e: &io::Error) -> String {
    format!(
        "{}: the disk's performance counters cannot be read here ({DISK_PERFORMANCE_SOURCE}: \
         {e}); iocap does not turn them on",
        disk_name(n)
    )
}

impl<R: FnMut(u32) -> io::Result<DiskPerformance>> Watch<PhysicalDisks<R>> {
    /// `iocap monitor` on Windows: the disks named (`2`, `PhysicalDrive2`,
    /// `\\.\PhysicalDrive2`), each of which must be readable, or, when none is named, every disk
    /// from 0 to [`MAX_DISK`] whose counters can be read (those with I/O are shown). Refuses
    /// when no disk can be read, with the first reason.
    pub fn physical_disks(devices: &[String], mut read: R) -> Result<Self, MonitorError> {
        let mut disks = Vec::new();
        for d in devices {
            let n = parse_disk(d).ok_or_else(|| MonitorError::NoDisk(d.clone()))?;
            read(n).map_err(|e| MonitorError::Unreadable(unreadable(n, &e)))?;
            disks.push(n);
        }
        if devices.is_empty() {
            let mut first = None;
            for n in 0..=MAX_DISK {
                match read(n) {
                    Ok(_) => disks.push(n),
                    Err(e) => {
                        first.get_or_insert_with(|| unreadable(n, &e));
                    }
                }
            }
            if disks.is_empty() {
                return Err(MonitorError::Unreadable(format!(
                    "no physical disk's counters can be read here: {}",
                    first.unwrap_or_default()
                )));
            }
        }
        Watch::from_source(PhysicalDisks::new(disks, read), devices_named(devices))
    }
}

/// The names the samples of the disks a user named carry (`PhysicalDrive2`).
fn devices_named(devices: &[String]) -> Vec<String> {
    devices
        .iter()
        .filter_map(|d| parse_disk(d))
        .map(disk_name)
        .collect()
}

/// The system's physical disks.
#[cfg(windows)]
pub type SystemDisks = PhysicalDisks<fn(u32) -> io::Result<DiskPerformance>>;

/// The physical disks `disks`, read from Windows.
#[cfg(windows)]
pub fn system_disks(disks: Vec<u32>) -> SystemDisks {
    PhysicalDisks::new(disks, iocap_platform::devinfo::disk_performance)
}

/// `iocap monitor`'s watch on Windows ([`Watch::physical_disks`] over Windows' disks).
#[cfg(windows)]
pub fn system_watch(devices: &[String]) -> Result<Watch<SystemDisks>, MonitorError> {
    let read: fn(u32) -> io::Result<DiskPerformance> = iocap_platform::devinfo::disk_performance;
    Watch::physical_disks(devices, read)
}

#[cfg(test)]
mod tests;

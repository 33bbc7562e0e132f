//! iocap's OS-counter cross-check: `/proc/diskstats` sampled like `iostat -x`.
//!
//! * [`parse_diskstats`] / [`snapshot`] read the kernel's cumulative per-device
//!   counters ([`DiskCounters`], see the kernel's
//!   `Documentation/admin-guide/iostats.rst`).
//! * [`delta`] turns two snapshots into per-second figures ([`DeviceSample`]),
//!   computed with the same formulas as sysstat's `iostat -x` (sysstat 12.x,
//!   `write_ext_stat` + `compute_ext_disk_stats`).
//! * [`Sampler`] samples a set of devices on its own thread every interval.
//! * [`EdgeSampler`] samples at instants the caller chooses (the engine's
//!   per-second edges, so device and iocap figures cover the same seconds).
//! * [`cross_check`] / [`cross_check_series`] turn disagreements between what
//!   the application did and what the device saw into plain-language hints.
//! * [`perfmon`]: the same figures on Windows, from each physical disk's
//!   IOCTL_DISK_PERFORMANCE counters (perfmon's PhysicalDisk object); the samplers take
//!   either system's counters through [`CounterSource`].
//!
//! # Formulas (Δ = current − previous counter, `T` = interval in seconds)
//!
//! | field | formula | iostat column |
//! |---|---|---|
//! | `r_s` | Δreads_completed / T | `r/s` |
//! | `w_s` | Δwrites_completed / T | `w/s` |
//! | `d_s`, `f_s` | Δdiscards_completed / T, Δflush_requests / T | `d/s`, `f/s` |
//! | `rkb_s` | Δsectors_read / 2 / T (KiB = 1024 B; sectors are always 512 B) | `rkB/s` (with `-k`, the `-x` default) |
//! | `rmb_s` | Δsectors_read × 512 / 10⁶ / T (decimal MB) | not iostat's `rMB/s` (that one is MiB, = `rkb_s / 1024`) |
//! | `rrqm_s` | Δreads_merged / T | `rrqm/s` |
//! | `rrqm_pct` | Δreads_merged / (Δreads_merged + Δreads_completed) × 100 | `%rrqm` |
//! | `r_await_ms` | Δms_reading / Δreads_completed (0 when no reads) | `r_await` |
//! | `rareq_sz_kb` | Δsectors_read / Δreads_completed / 2 (KiB) | `rareq-sz` |
//! | `await_ms` | (Δms_reading + Δms_writing + Δms_discarding) / (Δreads + Δwrites + Δdiscards) | `await` (`-s`) |
//! | `aqu_sz` | Δtime_in_queue_ms / (T × 1000) | `aqu-sz` |
//! | `util_pct` | Δio_ticks_ms / (T × 1000) × 100, **capped at 100** | `%util` (iostat does not cap) |
//!
//! The `w*`/`d*` variants use the matching write/discard counters. iostat takes
//! `T` from `/proc/uptime` (10 ms resolution); [`Sampler`] uses a monotonic
//! clock, which is more precise.
//!
//! # Counter wrap
//!
//! Older kernels (and some fields such as `time_in_queue` on 32-bit builds) use
//! 32-bit counters. When a counter decreases, [`delta`] treats it as a 32-bit
//! wrap if the previous value was in the upper half of the 32-bit range, and as a
//! reset (device removed and re-added: delta = current value) otherwise. A delta
//! is never negative and nothing panics.

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Default location of the kernel's block-device counters.
pub const PROC_DISKSTATS: &str = "/proc/diskstats";

/// Errors from this crate that are not plain I/O errors.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// The sampling interval must be positive.
    #[error("sampling interval must be > 0")]
    ZeroInterval,
    /// `iocap monitor` was given a device `/proc/diskstats` does not list.
    #[error("no block device '{0}' in {PROC_DISKSTATS}")]
    NoDevice(String),
    /// `iocap monitor` on Windows was given a name that is not a physical disk's.
    #[error(
        "'{0}' is not a physical disk: name one as 2, PhysicalDrive2 or \\\\.\\PhysicalDrive2"
    )]
    NoDisk(String),
    /// `iocap monitor` on Windows could not read the disks' counters (why, in full).
    #[error("{0}")]
    Unreadable(String),
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Cumulative counters of one `/proc/diskstats` line (kernel
/// `Documentation/admin-guide/iostats.rst`). Times are in milliseconds,
/// sectors are 512 bytes regardless of the device's sector size.
///
/// Fields missing on older kernels are 0; [`DiskCounters::fields`] tells how
/// many statistics fields the line had (4 for old partition lines, 11 for
/// kernels < 4.18, 15 with discard stats (4.18+), 17 with flush stats (5.5+)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiskCounters {
    /// Device major number.
    pub major: u32,
    /// Device minor number.
    pub minor: u32,
    /// Field 1: reads completed successfully.
    pub reads_completed: u64,
    /// Field 2: reads merged.
    pub reads_merged: u64,
    /// Field 3: sectors read.
    pub sectors_read: u64,
    /// Field 4: time spent reading (ms).
    pub ms_reading: u64,
    /// Field 5: writes completed.
    pub writes_completed: u64,
    /// Field 6: writes merged.
    pub writes_merged: u64,
    /// Field 7: sectors written.
    pub sectors_written: u64,
    /// Field 8: time spent writing (ms).
    pub ms_writing: u64,
    /// Field 9: I/Os currently in progress (a gauge, not cumulative).
    pub ios_in_progress: u64,
    /// Field 10: time spent doing I/Os (ms), a.k.a. io_ticks.
    pub ms_doing_io: u64,
    /// Field 11: weighted time spent doing I/Os (ms), a.k.a. time_in_queue.
    pub weighted_ms_doing_io: u64,
    /// Field 12 (4.18+): discards completed.
    pub discards_completed: u64,
    /// Field 13 (4.18+): discards merged.
    pub discards_merged: u64,
    /// Field 14 (4.18+): sectors discarded.
    pub sectors_discarded: u64,
    /// Field 15 (4.18+): time spent discarding (ms).
    pub ms_discarding: u64,
    /// Field 16 (5.5+): flush requests completed.
    pub flush_requests: u64,
    /// Field 17 (5.5+): time spent flushing (ms).
    pub ms_flushing: u64,
    /// Number of statistics fields present on the line (after the name).
    pub fields: u8,
}

/// Parse the text of `/proc/diskstats`. Lines that are too short or contain
/// non-numeric fields are skipped; this never panics.
pub fn parse_diskstats(text: &str) -> Vec<(String, DiskCounters)> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<(String, DiskCounters)> {
    let mut it = line.split_whitespace();
    let major: u32 = it.next()?.parse().ok()?;
    let minor: u32 = it.next()?.parse().ok()?;
    let name = it.next()?.to_string();
    let mut v = Vec::with_capacity(17);
    for tok in it {
        v.push(tok.parse::<u64>().ok()?);
        if v.len() == 17 {
            break; // future kernels may append fields: ignore them
        }
    }
    let mut c = DiskCounters {
        major,
        minor,
        fields: v.len() as u8,
        ..DiskCounters::default()
    };
    match v.len() {
        // Old (2.6) partition lines: reads, sectors read, writes, sectors written.
        4 => {
            c.reads_completed = v[0];
            c.sectors_read = v[1];
            c.writes_completed = v[2];
            c.sectors_written = v[3];
        }
        n if n >= 11 => {
            let g = |i: usize| v.get(i).copied().unwrap_or(0);
            c.reads_completed = g(0);
            c.reads_merged = g(1);
            c.sectors_read = g(2);
            c.ms_reading = g(3);
            c.writes_completed = g(4);
            c.writes_merged = g(5);
            c.sectors_written = g(6);
            c.ms_writing = g(7);
            c.ios_in_progress = g(8);
            c.ms_doing_io = g(9);
            c.weighted_ms_doing_io = g(10);
            c.discards_completed = g(11);
            c.discards_merged = g(12);
            c.sectors_discarded = g(13);
            c.ms_discarding = g(14);
            c.flush_requests = g(15);
            c.ms_flushing = g(16);
        }
        _ => return None,
    }
    Some((name, c))
}

/// Read and parse a diskstats file (normally [`PROC_DISKSTATS`]).
pub fn snapshot(path: impl AsRef<Path>) -> io::Result<Vec<(String, DiskCounters)>> {
    Ok(parse_diskstats(&std::fs::read_to_string(path)?))
}

pub use check::{cross_check, cross_check_series, AppFigures};
pub use edges::EdgeSampler;
pub use iocap_model::DeviceSample;
pub use source::{CounterSource, Diskstats};
pub use watch::Watch;

mod check;
mod edges;
pub mod perfmon;
mod source;
mod watch;

/// This system's disk counters: `/proc/diskstats`, or the physical disks' IOCTL_DISK_PERFORMANCE
/// on Windows.
#[cfg(not(windows))]
pub type SystemSource = Diskstats;
/// This system's disk counters: `/proc/diskstats`, or the physical disks' IOCTL_DISK_PERFORMANCE
/// on Windows.
#[cfg(windows)]
pub type SystemSource = perfmon::SystemDisks;

/// `iocap monitor`'s watch of `devices` (every device with I/O when empty) on this system's
/// counters: block devices on Linux, physical disks on Windows.
pub fn system_watch(devices: &[String]) -> Result<Watch<SystemSource>, MonitorError> {
    #[cfg(not(windows))]
    return Watch::new(devices);
    #[cfg(windows)]
    return perfmon::system_watch(devices);
}

/// Difference of two cumulative counters: never negative. A decrease is a
/// 32-bit wrap when the previous value sat in the upper half of the 32-bit
/// range, otherwise a reset (delta = current value).
fn counter_delta(prev: u64, cur: u64) -> u64 {
    if cur >= prev {
        cur - prev
    } else if prev <= u64::from(u32::MAX) && prev >= 1 << 31 && cur <= u64::from(u32::MAX) {
        (cur + (1u64 << 32)) - prev
    } else {
        cur
    }
}

pub(crate) fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// Per-second figures for the interval between two snapshots of the same
/// device, with iostat's formulas (see the crate docs). `interval_s` ≤ 0 (or
/// not finite) yields zero rates rather than infinities. `device` and `t_s` are
/// left empty/0 for the caller to fill.
pub fn delta(prev: &DiskCounters, cur: &DiskCounters, interval_s: f64) -> DeviceSample {
    let d = |p: u64, c: u64| counter_delta(p, c) as f64;
    let rd = d(prev.reads_completed, cur.reads_completed);
    let wr = d(prev.writes_completed, cur.writes_completed);
    let dc = d(prev.discards_completed, cur.discards_completed);
    let fl = d(prev.flush_requests, cur.flush_requests);
    let rm = d(prev.reads_merged, cur.reads_merged);
    let wm = d(prev.writes_merged, cur.writes_merged);
    let rs = d(prev.sectors_read, cur.sectors_read);
    let ws = d(prev.sectors_written, cur.sectors_written);
    let ds = d(prev.sectors_discarded, cur.sectors_discarded);
    let rt = d(prev.ms_reading, cur.ms_reading);
    let wt = d(prev.ms_writing, cur.ms_writing);
    let dt = d(prev.ms_discarding, cur.ms_discarding);
    let ft = d(prev.ms_flushing, cur.ms_flushing);
    let io_ticks = d(prev.ms_doing_io, cur.ms_doing_io);
    let rq_ticks = d(prev.weighted_ms_doing_io, cur.weighted_ms_doing_io);

    let t = if interval_s.is_finite() && interval_s > 0.0 {
        interval_s
    } else {
        0.0
    };
    let per_s = |x: f64| ratio(x, t);
    DeviceSample {
        device: String::new(),
        t_s: 0.0,
        interval_s: t,
        r_s: per_s(rd),
        w_s: per_s(wr),
        d_s: per_s(dc),
        f_s: per_s(fl),
        rkb_s: per_s(rs) / 2.0,
        wkb_s: per_s(ws) / 2.0,
        dkb_s: per_s(ds) / 2.0,
        rmb_s: per_s(rs) * 512.0 / 1e6,
        wmb_s: per_s(ws) * 512.0 / 1e6,
        rrqm_s: per_s(rm),
        wrqm_s: per_s(wm),
        rrqm_pct: ratio(rm, rm + rd) * 100.0,
        wrqm_pct: ratio(wm, wm + wr) * 100.0,
        r_await_ms: ratio(rt, rd),
        w_await_ms: ratio(wt, wr),
        d_await_ms: ratio(dt, dc),
        f_await_ms: ratio(ft, fl),
        await_ms: ratio(rt + wt + dt, rd + wr + dc),
        rareq_sz_kb: ratio(rs, rd) / 2.0,
        wareq_sz_kb: ratio(ws, wr) / 2.0,
        aqu_sz: per_s(rq_ticks) / 1000.0,
        util_pct: (per_s(io_ticks) / 1000.0 * 100.0).min(100.0),
        current_queue_length: None,
        split_s: None,
    }
}

struct Shared {
    samples: Vec<DeviceSample>,
    last_error: Option<String>,
}

/// Background sampler: reads a diskstats file every `interval` on its own
/// thread and records one [`DeviceSample`] per device per interval.
///
/// The first snapshot is taken synchronously in [`Sampler::start`], so an
/// unreadable file is reported immediately and `t_s` is measured from that
/// moment. Intervals are scheduled against absolute deadlines (no drift).
/// [`Sampler::stop`] takes one final, possibly shorter, sample if at least
/// 50 ms passed since the last one, so the tail of a run is not lost.
pub struct Sampler {
    stop_tx: mpsc::Sender<()>,
    handle: Option<JoinHandle<()>>,
    shared: std::sync::Arc<std::sync::Mutex<Shared>>,
}

impl Sampler {
    /// Sample `devices` (kernel names as in `/proc/diskstats`; empty = every
    /// device) from [`PROC_DISKSTATS`] every `interval`.
    pub fn start(devices: &[String], interval: Duration) -> io::Result<Sampler> {
        Self::start_with_path(PROC_DISKSTATS, devices, interval)
    }

    /// Like [`Sampler::start`], reading `path` instead of `/proc/diskstats`.
    pub fn start_with_path(
        path: impl Into<PathBuf>,
        devices: &[String],
        interval: Duration,
    ) -> io::Result<Sampler> {
        if interval.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                MonitorError::ZeroInterval,
            ));
        }
        let path = path.into();
        let wanted: BTreeSet<String> = devices.iter().cloned().collect();
        let start = Instant::now();
        let first = filter(snapshot(&path)?, &wanted);
        let shared = std::sync::Arc::new(std::sync::Mutex::new(Shared {
            samples: Vec::new(),
            last_error: None,
        }));
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let sh = shared.clone();
        let handle = std::thread::Builder::new()
            .name("iocap-diskstats".into())
            .spawn(move || {
                let mut prev = first;
                let mut prev_t = start;
                let mut n: u32 = 1;
                loop {
                    let deadline = start + interval * n;
                    let wait = deadline.saturating_duration_since(Instant::now());
                    let stopping = match stop_rx.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => false,
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
                    };
                    let now = Instant::now();
                    if stopping && now.duration_since(prev_t) < Duration::from_millis(50) {
                        break;
                    }
                    match snapshot(&path) {
                        Ok(all) => {
                            let cur = filter(all, &wanted);
                            let dt = now.duration_since(prev_t).as_secs_f64();
                            let t_s = now.duration_since(start).as_secs_f64();
                            let mut new = Vec::new();
                            for (name, c) in &cur {
                                if let Some(p) = prev.get(name) {
                                    let mut s = delta(p, c, dt);
                                    s.device = name.clone();
                                    s.t_s = t_s;
                                    new.push(s);
                                }
                            }
                            new.sort_by(|a, b| a.device.cmp(&b.device));
                            let mut g = sh.lock().unwrap_or_else(|e| e.into_inner());
                            g.samples.extend(new);
                            prev = cur;
                            prev_t = now;
                        }
                        Err(e) => {
                            let mut g = sh.lock().unwrap_or_else(|e| e.into_inner());
                            g.last_error = Some(e.to_string());
                        }
                    }
                    if stopping {
                        break;
                    }
                    // Skip deadlines already missed (e.g. the machine was stalled).
                    let elapsed = now.duration_since(start).as_secs_f64();
                    let next = (elapsed / interval.as_secs_f64()).floor() as u32 + 1;
                    n = next.max(n + 1);
                }
            })?;
        Ok(Sampler {
            stop_tx,
            handle: Some(handle),
            shared,
        })
    }

    /// Samples recorded so far (a copy); useful for live display.
    pub fn samples(&self) -> Vec<DeviceSample> {
        self.lock().samples.clone()
    }

    /// The last error reading the diskstats file, if any happened.
    pub fn last_error(&self) -> Option<String> {
        self.lock().last_error.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stop sampling (taking a final partial sample, see the type docs) and
    /// return every sample in time order.
    pub fn stop(mut self) -> Vec<DeviceSample> {
        let _ = self.stop_tx.send(());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        std::mem::take(&mut self.lock().samples)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        let _ = self.stop_tx.send(());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

pub(crate) fn filter<C>(all: Vec<(String, C)>, wanted: &BTreeSet<String>) -> HashMap<String, C> {
    all.into_iter()
        .filter(|(n, _)| wanted.is_empty() || wanted.contains(n))
        .collect()
}

/// Time-weighted average of samples (by `interval_s`); device name from the
/// first sample.
pub fn average(samples: &[DeviceSample]) -> DeviceSample {
    let total: f64 = samples.iter().map(|s| s.interval_s).sum();
    let n = samples.len().max(1) as f64;
    let w = |s: &DeviceSample| {
        if total > 0.0 {
            s.interval_s / total
        } else {
            1.0 / n
        }
    };
    let mut a = DeviceSample {
        device: samples
            .first()
            .map(|s| s.device.clone())
            .unwrap_or_default(),
        t_s: samples.last().map(|s| s.t_s).unwrap_or(0.0),
        interval_s: total,
        ..DeviceSample::default()
    };
    for s in samples {
        let k = w(s);
        a.r_s += k * s.r_s;
        a.w_s += k * s.w_s;
        a.d_s += k * s.d_s;
        a.f_s += k * s.f_s;
        a.rkb_s += k * s.rkb_s;
        a.wkb_s += k * s.wkb_s;
        a.dkb_s += k * s.dkb_s;
        a.rmb_s += k * s.rmb_s;
        a.wmb_s += k * s.wmb_s;
        a.rrqm_s += k * s.rrqm_s;
        a.wrqm_s += k * s.wrqm_s;
        a.aqu_sz += k * s.aqu_sz;
        a.util_pct += k * s.util_pct;
    }
    // Per-request figures: weight by request counts, as a single long interval would.
    let wsum = |f: &dyn Fn(&DeviceSample) -> (f64, f64)| {
        let (num, den) = samples.iter().fold((0.0, 0.0), |(n, d), s| {
            let (v, c) = f(s);
            let cnt = c * s.interval_s;
            (n + v * cnt, d + cnt)
        });
        ratio(num, den)
    };
    a.r_await_ms = wsum(&|s| (s.r_await_ms, s.r_s));
    a.w_await_ms = wsum(&|s| (s.w_await_ms, s.w_s));
    a.d_await_ms = wsum(&|s| (s.d_await_ms, s.d_s));
    a.f_await_ms = wsum(&|s| (s.f_await_ms, s.f_s));
    a.await_ms = wsum(&|s| (s.await_ms, s.r_s + s.w_s + s.d_s));
    a.rareq_sz_kb = wsum(&|s| (s.rareq_sz_kb, s.r_s));
    a.wareq_sz_kb = wsum(&|s| (s.wareq_sz_kb, s.w_s));
    a.rrqm_pct = ratio(a.rrqm_s, a.rrqm_s + a.r_s) * 100.0;
    a.wrqm_pct = ratio(a.wrqm_s, a.wrqm_s + a.w_s) * 100.0;
    // Windows' own figures: the queue's mean over the samples, splits weighted by time
    let queues: Vec<f64> = samples
        .iter()
        .filter_map(|s| s.current_queue_length)
        .collect();
    a.current_queue_length =
        (!queues.is_empty()).then(|| queues.iter().sum::<f64>() / queues.len() as f64);
    if samples.iter().any(|s| s.split_s.is_some()) {
        a.split_s = Some(
            samples
                .iter()
                .map(|s| w(s) * s.split_s.unwrap_or(0.0))
                .sum(),
        );
    }
    a
}

/// Kernel name of the whole-disk or partition block device holding `path`
/// (via `stat` + `/sys/dev/block/MAJ:MIN`), or `None` for filesystems not
/// backed by a block device (tmpfs, overlay, NFS...), and on systems other than Linux.
#[cfg(not(target_os = "linux"))]
pub fn device_of_path(_: impl AsRef<Path>) -> Option<String> {
    None
}

/// Kernel name of the whole-disk or partition block device holding `path`
/// (via `stat` + `/sys/dev/block/MAJ:MIN`), or `None` for filesystems not
/// backed by a block device (tmpfs, overlay, NFS...).
#[cfg(target_os = "linux")]
pub fn device_of_path(path: impl AsRef<Path>) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    // glibc's major()/minor() encoding.
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff);
    if major == 0 {
        return None;
    }
    let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    link.file_name()?.to_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    const K4_14: &str = "   8       0 sda 1000 10 8000 500 2000 100 32000 3000 0 10000 20000\n   8       1 sda1 900 5 7000 400 1900 90 31000 2900 0 9000 19000\n";
    const K418_18: &str = " 259       0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n";
    const K55_20: &str = " 254       0 vda 22539601 123809 425273014 37137415 1857593 165402 148130712 1260350 0 1004244 38446292 72308 94 67218752 27769 161153 20756\n";

    #[test]
    fn parses_14_field_lines() {
        let v = parse_diskstats(K4_14);
        assert_eq!(v.len(), 2);
        let (n, c) = &v[0];
        assert_eq!(n, "sda");
        assert_eq!((c.major, c.minor, c.fields), (8, 0, 11));
        assert_eq!(c.reads_completed, 1000);
        assert_eq!(c.reads_merged, 10);
        assert_eq!(c.sectors_read, 8000);
        assert_eq!(c.ms_reading, 500);
        assert_eq!(c.writes_completed, 2000);
        assert_eq!(c.writes_merged, 100);
        assert_eq!(c.sectors_written, 32000);
        assert_eq!(c.ms_writing, 3000);
        assert_eq!(c.ios_in_progress, 0);
        assert_eq!(c.ms_doing_io, 10000);
        assert_eq!(c.weighted_ms_doing_io, 20000);
        assert_eq!(c.discards_completed, 0);
        assert_eq!(c.flush_requests, 0);
        assert_eq!(v[1].0, "sda1");
    }

    #[test]
    fn parses_18_field_lines() {
        let v = parse_diskstats(K418_18);
        assert_eq!(v.len(), 1);
        let c = v[0].1;
        assert_eq!(c.fields, 15);
        assert_eq!(c.weighted_ms_doing_io, 11);
        assert_eq!(c.discards_completed, 12);
        assert_eq!(c.discards_merged, 13);
        assert_eq!(c.sectors_discarded, 14);
        assert_eq!(c.ms_discarding, 15);
        assert_eq!(c.flush_requests, 0);
    }

    #[test]
    fn parses_20_field_lines() {
        let v = parse_diskstats(K55_20);
        let (n, c) = &v[0];
        assert_eq!(n, "vda");
        assert_eq!((c.major, c.minor, c.fields), (254, 0, 17));
        assert_eq!(c.reads_completed, 22539601);
        assert_eq!(c.weighted_ms_doing_io, 38446292);
        assert_eq!(c.discards_completed, 72308);
        assert_eq!(c.ms_discarding, 27769);
        assert_eq!(c.flush_requests, 161153);
        assert_eq!(c.ms_flushing, 20756);
    }

    #[test]
    fn parses_old_4_field_partition_lines() {
        let v = parse_diskstats("   3    1 hda1 35486 38030 38030 38030\n");
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].1.reads_completed, 35486);
        assert_eq!(v[0].1.sectors_written, 38030);
    }

    #[test]
    fn skips_garbage_and_empty() {
        assert!(parse_diskstats("").is_empty());
        assert!(parse_diskstats("\n\n   \n").is_empty());
        let text = format!(
            "garbage\n8 0\n8 0 sda\n8 0 sda 1 2 3\nx 0 sda 1 2 3 4 5 6 7 8 9 10 11\n\
             8 0 sda 1 2 3 4 5 6 7 -8 9 10 11\n8 0 sda 1 2 3 4 5 6 7 8 9 10 99999999999999999999999\n\
             8 0 sda 1 2 3 4 5 6 7 8 9 10\n{K55_20}\u{1F4A9} \u{0}\n"
        );
        let v = parse_diskstats(&text);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].0, "vda");
        // Trailing extra fields from a future kernel are ignored.
        let v = parse_diskstats("8 0 sdz 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19\n");
        assert_eq!(v[0].1.ms_flushing, 17);
    }

    fn prev_cur() -> (DiskCounters, DiskCounters) {
        let prev = parse_diskstats(K4_14)[0].1;
        let mut cur = prev;
        cur.reads_completed += 200;
        cur.reads_merged += 50;
        cur.sectors_read += 1600;
        cur.ms_reading += 100;
        cur.writes_completed += 400;
        cur.writes_merged += 100;
        cur.sectors_written += 6400;
        cur.ms_writing += 800;
        cur.ms_doing_io += 500;
        cur.weighted_ms_doing_io += 900;
        (prev, cur)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn delta_matches_hand_computed_values() {
        let (prev, cur) = prev_cur();
        let s = delta(&prev, &cur, 2.0);
        let expect = [
            ("r_s", s.r_s, 100.0),
            ("w_s", s.w_s, 200.0),
            ("rkb_s", s.rkb_s, 400.0),
            ("wkb_s", s.wkb_s, 1600.0),
            ("rmb_s", s.rmb_s, 0.4096),
            ("wmb_s", s.wmb_s, 1.6384),
            ("rrqm_s", s.rrqm_s, 25.0),
            ("wrqm_s", s.wrqm_s, 50.0),
            ("rrqm_pct", s.rrqm_pct, 20.0),
            ("wrqm_pct", s.wrqm_pct, 20.0),
            ("r_await_ms", s.r_await_ms, 0.5),
            ("w_await_ms", s.w_await_ms, 2.0),
            ("await_ms", s.await_ms, 1.5),
            ("rareq_sz_kb", s.rareq_sz_kb, 4.0),
            ("wareq_sz_kb", s.wareq_sz_kb, 8.0),
            ("aqu_sz", s.aqu_sz, 0.45),
            ("util_pct", s.util_pct, 25.0),
            ("d_s", s.d_s, 0.0),
            ("f_await_ms", s.f_await_ms, 0.0),
            ("interval_s", s.interval_s, 2.0),
        ];
        for (name, got, want) in expect {
            assert!(close(got, want), "{name}: got {got}, want {want}");
        }
    }

    #[test]
    fn delta_idle_and_bad_interval_are_zero_not_nan() {
        let (prev, cur) = prev_cur();
        let idle = delta(&prev, &prev, 1.0);
        assert_eq!(idle.r_await_ms, 0.0);
        assert_eq!(idle.rareq_sz_kb, 0.0);
        assert_eq!(idle.util_pct, 0.0);
        for t in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let s = delta(&prev, &cur, t);
            assert_eq!(s.r_s, 0.0);
            assert_eq!(s.util_pct, 0.0);
            // Per-request figures do not depend on the interval.
            assert!(close(s.r_await_ms, 0.5));
        }
    }

    #[test]
    fn delta_handles_wrap_and_reset() {
        let mut prev = DiskCounters::default();
        let mut cur = DiskCounters::default();
        // 32-bit wrap.
        prev.reads_completed = u64::from(u32::MAX) - 9;
        cur.reads_completed = 10;
        prev.ms_reading = u64::from(u32::MAX);
        cur.ms_reading = 19;
        // Reset (device re-added): delta = current value.
        prev.writes_completed = 1000;
        cur.writes_completed = 5;
        // 64-bit counter going backwards: reset as well.
        prev.sectors_read = 1 << 40;
        cur.sectors_read = 160;
        let s = delta(&prev, &cur, 1.0);
        assert!(close(s.r_s, 20.0));
        assert!(close(s.r_await_ms, 1.0));
        assert!(close(s.w_s, 5.0));
        assert!(close(s.rkb_s, 80.0));
        // Decrease from u64::MAX must not overflow either.
        prev.flush_requests = u64::MAX;
        cur.flush_requests = 0;
        let s = delta(&prev, &cur, 1.0);
        assert!(s.f_s >= 0.0);
    }

    #[test]
    fn util_is_capped_at_100() {
        let prev = DiskCounters::default();
        let cur = DiskCounters {
            ms_doing_io: 1030,
            weighted_ms_doing_io: 4000,
            ..DiskCounters::default()
        };
        let s = delta(&prev, &cur, 1.0);
        assert_eq!(s.util_pct, 100.0);
        assert!(close(s.aqu_sz, 4.0));
    }

    #[test]
    fn sampler_reads_a_test_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diskstats");
        std::fs::write(&path, K4_14).unwrap();
        let devs = vec!["sda".to_string()];
        let sampler = Sampler::start_with_path(&path, &devs, Duration::from_millis(100)).unwrap();
        // Advance the counters after the first snapshot.
        let (_, cur) = prev_cur();
        let line = format!(
            "   8       0 sda {} {} {} {} {} {} {} {} 0 {} {}\n",
            cur.reads_completed,
            cur.reads_merged,
            cur.sectors_read,
            cur.ms_reading,
            cur.writes_completed,
            cur.writes_merged,
            cur.sectors_written,
            cur.ms_writing,
            cur.ms_doing_io,
            cur.weighted_ms_doing_io
        );
        let tmp = dir.path().join("diskstats.new");
        std::fs::write(&tmp, line).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        std::thread::sleep(Duration::from_millis(350));
        assert!(sampler.last_error().is_none());
        let live = sampler.samples();
        assert!(!live.is_empty());
        let samples = sampler.stop();
        assert!(samples.len() >= 3, "{samples:?}");
        assert!(samples.iter().all(|s| s.device == "sda"));
        // Total reads over all samples = the 200 we added (nothing else changed).
        let reads: f64 = samples.iter().map(|s| s.r_s * s.interval_s).sum();
        assert!((reads - 200.0).abs() < 1e-6, "{reads}");
        let t: Vec<f64> = samples.iter().map(|s| s.t_s).collect();
        assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
        assert!(samples
            .iter()
            .all(|s| s.interval_s > 0.0 && s.interval_s < 0.3));
    }

    #[test]
    fn sampler_errors() {
        assert!(
            Sampler::start_with_path("/nonexistent/diskstats", &[], Duration::from_secs(1))
                .is_err()
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diskstats");
        std::fs::write(&path, K4_14).unwrap();
        assert!(Sampler::start_with_path(&path, &[], Duration::ZERO).is_err());
        // Empty device list = every device; file vanishing is recorded, not fatal.
        let s = Sampler::start_with_path(&path, &[], Duration::from_millis(50)).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::thread::sleep(Duration::from_millis(120));
        assert!(s.last_error().is_some());
        drop(s);
    }

    #[test]
    fn snapshot_reads_proc_when_present() {
        if Path::new(PROC_DISKSTATS).exists() {
            let v = snapshot(PROC_DISKSTATS).unwrap();
            assert!(v.iter().all(|(n, _)| !n.is_empty()));
        }
    }

    pub(crate) fn sample(r_s: f64, w_s: f64, rareq_kb: f64, util: f64) -> DeviceSample {
        DeviceSample {
            device: "sdb".into(),
            interval_s: 1.0,
            r_s,
            w_s,
            rareq_sz_kb: rareq_kb,
            util_pct: util,
            ..DeviceSample::default()
        }
    }

    #[test]
    fn average_weights_by_time_and_requests() {
        let mut a = sample(100.0, 0.0, 4.0, 10.0);
        a.r_await_ms = 1.0;
        let mut b = sample(300.0, 0.0, 8.0, 30.0);
        b.r_await_ms = 3.0;
        b.interval_s = 3.0;
        let m = average(&[a, b]);
        assert!(close(m.interval_s, 4.0));
        assert!(close(m.r_s, 250.0));
        assert!(close(m.util_pct, 25.0));
        // 100 reads at 1 ms + 900 reads at 3 ms.
        assert!(close(m.r_await_ms, 2.8));
        assert!(close(m.rareq_sz_kb, 7.6));
    }

    #[test]
    fn device_sample_has_a_schema_and_serializes() {
        let schema = schemars::schema_for!(DeviceSample);
        let text = format!("{:?}", schema);
        assert!(text.contains("util_pct"));
        fn is_ser<T: Serialize>() {}
        is_ser::<DeviceSample>();
        is_ser::<DiskCounters>();
    }

    #[test]
    fn device_of_path_is_sane() {
        // Either a block device name that appears in /proc/diskstats, or None.
        if let Some(dev) = device_of_path(".") {
            if let Ok(all) = snapshot(PROC_DISKSTATS) {
                assert!(all.iter().any(|(n, _)| *n == dev), "{dev}");
            }
        }
        assert!(device_of_path("/nonexistent/x").is_none());
    }
}

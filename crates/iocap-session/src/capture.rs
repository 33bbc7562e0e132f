//! `iocap capture`: a device's block requests recorded to a trace file (described afterwards
//! from the file, by [`characterise`], like any trace). The kernel side is `iocap-capture`'s, the file `iocap-trace`'s, the description
//! `iocap-assess`'s; this is the loop between them: poll the ring buffer, write each record,
//! hand the file a chunk each second (so a capture killed with -9 keeps every whole second), and
//! stop at the duration or at Ctrl-C with the file complete.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use iocap_assess::workload::TraceFacts;
use iocap_capture::{Capture, CaptureConfig, CaptureStats};
use iocap_trace::{DevId, DeviceInfo, IoRecord, TraceMeta, TraceSummary, TraceWriter};

/// What the user asked to capture.
#[derive(Debug, Clone, Default)]
pub struct CaptureRequest {
    /// A block device or a path on one.
    pub target: String,
    /// How long; `None`: until Ctrl-C.
    pub duration_s: Option<f64>,
    /// The trace file; `None`: `iocap-DEV-YYYYMMDD-HHMMSS.iotrace` in the current directory.
    pub out: Option<PathBuf>,
    pub comm: Option<String>,
    pub pid: Option<u32>,
}

/// Where a capture stands, once a second.
#[derive(Debug, Clone, Copy, Default)]
pub struct CaptureTick {
    pub elapsed_s: f64,
    pub records: u64,
    pub lost: u64,
}

/// A finished capture.
#[derive(Debug)]
pub struct CaptureOutcome {
    pub path: PathBuf,
    pub meta: TraceMeta,
    pub summary: TraceSummary,
    pub stats: CaptureStats,
    /// Ctrl-C (or SIGTERM) ended it before its duration.
    pub stopped: bool,
}

/// The disks under `target`, as a trace names them.
pub fn capture_devices(target: &str) -> Result<Vec<DeviceInfo>> {
    let disks = iocap_audit::disks_under(&iocap_audit::Root::system(), target)
        .map_err(anyhow::Error::msg)?;
    Ok(disks
        .into_iter()
        .map(|d| DeviceInfo {
            dev: DevId {
                major: d.major,
                minor: d.minor,
            },
            name: d.name,
            size_bytes: Some(d.size_bytes),
        })
        .collect())
}

/// The default trace file: the first device's name and the start time, from the run's
/// RFC 3339 `started_at` (`iocap-vda-20261126-221500.iotrace`).
pub fn default_trace_path(devices: &[DeviceInfo], started_at: &str) -> PathBuf {
    let dev = devices.first().map_or("dev", |d| d.name.as_str());
    let digits: String = started_at
        .chars()
        .filter(char::is_ascii_digit)
        .take(14)
        .collect();
    let (day, time) = digits.split_at(digits.len().min(8));
    PathBuf::from(format!("iocap-{dev}-{day}-{time}.iotrace"))
}

/// The trace file, and the first error writing it.
struct Sinks {
    writer: TraceWriter,
    failed: Option<iocap_trace::TraceError>,
}

impl Sinks {
    fn take(&mut self, r: &IoRecord) {
        if self.failed.is_none() {
            if let Err(e) = self.writer.push(r) {
                self.failed = Some(e);
            }
        }
    }
}

/// Records `req.target`'s disks until the duration passes or `stop` is raised, into the file
/// `open` makes at the trace's path, once the kernel accepted the capture. The file is
/// complete whichever ended it.
pub fn capture(
    req: &CaptureRequest,
    started_at: &str,
    stop: &AtomicBool,
    open: &mut dyn FnMut(&std::path::Path) -> Result<std::fs::File>,
    tick: &mut dyn FnMut(&CaptureTick),
) -> Result<CaptureOutcome> {
    if req.duration_s.is_some_and(|d| !(d > 0.0 && d.is_finite())) {
        bail!("--duration must be more than 0 s");
    }
    let devices = capture_devices(&req.target)?;
    let path = req
        .out
        .clone()
        .unwrap_or_else(|| default_trace_path(&devices, started_at));
    let meta = TraceMeta {
        source: iocap_trace::meta::source::CAPTURE.into(),
        started_at: started_at.into(),
        host: iocap_engine::host::host_info().hostname,
        devices: devices.clone(),
        target: req.target.clone(),
        filters: filters(req),
        duration_s: None,
    };
    let config = CaptureConfig {
        devices: devices.iter().map(|d| d.dev).collect(),
        comm: req.comm.clone(),
        pid: req.pid,
        ..CaptureConfig::default()
    };
    // the kernel side first: a host that refuses BPF leaves no empty file behind
    let mut cap = Capture::start(&config)?;
    // the file is opened by the caller's rule for files iocap writes (never over the user's)
    let writer = TraceWriter::new(open(&path)?, &path, &meta)?;
    let mut sinks = Sinks {
        writer,
        failed: None,
    };
    let t0 = Instant::now();
    let mut next_tick = 1.0;
    let stopped = loop {
        let elapsed = t0.elapsed().as_secs_f64();
        if stop.load(Ordering::Relaxed) {
            break true;
        }
        if req.duration_s.is_some_and(|d| elapsed >= d) {
            break false;
        }
        let wait = req
            .duration_s
            .map_or(0.1, |d| (d - elapsed).clamp(0.001, 0.1));
        cap.poll(Duration::from_secs_f64(wait), &mut |r| sinks.take(r))?;
        if elapsed >= next_tick {
            next_tick = elapsed.floor() + 1.0;
            let s = cap.stats();
            sinks.writer.set_lost(s.lost_ring_full, lost_other(&s));
            sinks.writer.flush_chunk()?;
            tick(&CaptureTick {
                elapsed_s: elapsed,
                records: s.records,
                lost: s.lost_ring_full + lost_other(&s),
            });
        }
    };
    let stats = cap.finish(&mut |r| sinks.take(r))?;
    if let Some(e) = sinks.failed {
        return Err(e).context(format!("writing the trace {}", path.display()));
    }
    let mut writer = sinks.writer;
    writer.set_lost(stats.lost_ring_full, lost_other(&stats));
    writer.set_duration_ns(t0.elapsed().as_nanos() as u64);
    let summary = writer.finish()?;
    Ok(CaptureOutcome {
        path,
        meta,
        summary,
        stats,
        stopped,
    })
}

/// Events lost for another cause than a full ring buffer: the kernel's table of requests in
/// flight was full, or the kernel skipped a program run.
fn lost_other(s: &CaptureStats) -> u64 {
    s.lost_map_full + s.skipped_by_kernel
}

fn filters(req: &CaptureRequest) -> Vec<String> {
    let mut f = Vec::new();
    if let Some(c) = &req.comm {
        f.push(format!("comm={c}"));
    }
    if let Some(p) = req.pid {
        f.push(format!("pid={p}"));
    }
    f
}

/// A trace of any known format described: its records read through once, in bounded memory.
/// A trace that ends early (damaged, cut) is described up to there, and says so.
pub fn characterise(paths: &[PathBuf]) -> Result<iocap_model::workload::Workload> {
    let mut source = iocap_trace::open_trace(paths)?;
    let mut c = iocap_assess::workload::Characteriser::new();
    let mut read_error = None;
    for r in source.by_ref() {
        match r {
            Ok(r) => c.push(&r),
            Err(e) => {
                read_error = Some(e.to_string());
                break;
            }
        }
    }
    let meta = source.meta().clone();
    let lost = source.lost();
    let facts = TraceFacts {
        source: meta.source.clone(),
        files: paths.iter().map(|p| p.display().to_string()).collect(),
        devices: device_names(&meta),
        target: meta.target.clone(),
        filters: meta.filters.clone(),
        complete: source.complete() && read_error.is_none(),
        read_error,
        lost_ring_full: lost.ring_full,
        lost_other: lost.other,
        duration_s: meta.duration_s,
    };
    Ok(c.finish(facts))
}

fn device_names(meta: &TraceMeta) -> Vec<String> {
    meta.devices
        .iter()
        .map(|d| {
            if d.name.is_empty() {
                d.dev.to_string()
            } else {
                d.name.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_trace_is_named_for_its_disk_and_start() {
        let d = DeviceInfo {
            dev: DevId {
                major: 254,
                minor: 0,
            },
            name: "vda".into(),
            size_bytes: None,
        };
        assert_eq!(
            default_trace_path(&[d], "2026-11-26T22:15:00Z"),
            PathBuf::from("iocap-vda-20261126-221500.iotrace")
        );
        assert_eq!(
            default_trace_path(&[], ""),
            PathBuf::from("iocap-dev--.iotrace")
        );
    }
}

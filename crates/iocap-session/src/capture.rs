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
use iocap_trace::filemap::scan::{DirSpec, Scanner};
use iocap_trace::{DevId, DeviceInfo, FileMap, IoRecord, TraceMeta, TraceSummary, TraceWriter};

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
    /// Directories whose files' extents go into the trace (`--files`): read at the start,
    /// each second for files that appear or change, and at the end.
    pub files: Vec<DirSpec>,
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
        host: iocap_platform::host::host_info().hostname,
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
    let mut files = match req.files.is_empty() {
        true => None,
        false => Some(FileMapper::new(&req.files)?),
    };
    let mut cap = Capture::start(&config)?;
    // the file is opened by the caller's rule for files iocap writes (never over the user's)
    let mut writer = TraceWriter::new(open(&path)?, &path, &meta)?;
    if let Some(f) = files.as_mut() {
        f.write(&mut writer)?;
    }
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
            // the records released, then those still held back to be put in issue order
            // (the window, at the file's tail): a capture killed keeps every whole second
            sinks.writer.write_window(cap.window())?;
            if let Some(f) = files.as_mut() {
                f.tick(&mut sinks.writer)?;
            }
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
    if let Some(f) = files.as_mut() {
        f.write(&mut writer)?;
    }
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

/// The file map of a capture (`--files`): the whole map at the start, then each second the
/// files that appeared or changed, then at the end. A scan that takes long (a tree of many
/// thousands of files) is made less often: at most a twentieth of the capture's time goes to it.
struct FileMapper {
    scanner: Scanner,
    next: Instant,
}

impl FileMapper {
    fn new(dirs: &[DirSpec]) -> Result<FileMapper> {
        Ok(FileMapper {
            scanner: Scanner::new(dirs.to_vec()).map_err(anyhow::Error::msg)?,
            next: Instant::now(),
        })
    }

    /// Scans now and writes what changed.
    fn write(&mut self, w: &mut TraceWriter) -> Result<()> {
        let t = Instant::now();
        let map = self.scanner.scan();
        self.next = Instant::now() + (t.elapsed() * 20).max(Duration::from_millis(900));
        if !map.files.is_empty() || !map.dirs.is_empty() || !map.skipped.is_empty() {
            w.write_map(&map.to_json())?;
        }
        Ok(())
    }

    /// Scans when due.
    fn tick(&mut self, w: &mut TraceWriter) -> Result<()> {
        if Instant::now() >= self.next {
            self.write(w)?;
        }
        Ok(())
    }
}

/// Requests of the recorded devices lost for another cause than a full ring buffer: the
/// kernel's table of requests in flight was full, or their issue or completion was not seen.
/// The program runs the kernel skipped are not among them: those may be any device's.
fn lost_other(s: &CaptureStats) -> u64 {
    s.lost_other()
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
/// A trace that ends early (damaged, cut) is described up to there, and says so. Its requests
/// are attributed to files by the trace's own file map (a capture with `--files`), laid over
/// by the extents of the files under `files` read now, if any.
pub fn characterise(
    paths: &[PathBuf],
    files: &[DirSpec],
) -> Result<iocap_model::workload::Workload> {
    let (map, read_by, note) = file_map(paths, files)?;
    let mut source = iocap_trace::open_trace(paths)?;
    let mut c = match &map {
        Some(m) => iocap_assess::workload::Characteriser::with_files(m),
        None => iocap_assess::workload::Characteriser::new(),
    };
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
        file_map_read_by: read_by,
        file_map_note: note,
        duration_s: meta.duration_s,
    };
    Ok(c.finish(facts))
}

/// The file map to describe a trace with: the trace's own (iocap's file), then the files under
/// `dirs` read now; with who read it, or why there is none.
fn file_map(
    paths: &[PathBuf],
    dirs: &[DirSpec],
) -> Result<(Option<FileMap>, Option<String>, Option<String>)> {
    let mut map: Option<FileMap> = None;
    let own = match paths {
        [one] if is_iocap(one) => iocap_trace::read_maps(one)?,
        _ => vec![],
    };
    for payload in own {
        if let Some(m) = FileMap::from_json(&payload) {
            map.get_or_insert_with(FileMap::default).merge(m);
        }
    }
    let mut read_by = map.as_ref().map(|_| "capture".to_string());
    if !dirs.is_empty() {
        let mut scanner = Scanner::new(dirs.to_vec()).map_err(anyhow::Error::msg)?;
        let now = scanner.scan();
        if now.files.is_empty() {
            let why = now.skipped.first().cloned().unwrap_or_default();
            bail!("--files: no file under the directories could be mapped {why}");
        }
        map.get_or_insert_with(FileMap::default).merge(now);
        read_by = Some(match read_by {
            Some(_) => "capture, then characterise".into(),
            None => "characterise".into(),
        });
    }
    let note = match &map {
        Some(_) => None,
        None if paths.len() == 1 && is_iocap(&paths[0]) => Some(
            "no file map: the capture was made without --files (give --files DIR to \
                 characterise to read one now)"
                .into(),
        ),
        None => Some(
            "no file map: this trace's format carries none (give --files DIR to read one now)"
                .into(),
        ),
    };
    Ok((map, read_by, note))
}

fn is_iocap(p: &std::path::Path) -> bool {
    iocap_trace::detect_file(p).ok() == Some(iocap_trace::TraceFormat::Iocap)
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

//! blktrace's binary output (`blktrace -d DEV` writes `DEV.blktrace.CPU`, one file per CPU)
//! as records.
//!
//! Each file is a sequence of events, each a `struct blk_io_trace` (the kernel's
//! include/uapi/linux/blktrace_api.h) followed by `pdu_len` bytes of payload. The integers are
//! the recording host's; the magic tells which byte order (blkparse does the same).
//!
//! ```text
//! version 7 (48 bytes)                      version 8, blk_io_trace2 (64 bytes)
//!  0 u32 magic  0x65617400 | 7               0 u32 magic  0x65617400 | 8
//!  4 u32 sequence (per CPU)                  4 u32 sequence
//!  8 u64 time, ns (kernel monotonic)         8 u64 time
//! 16 u64 sector                             16 u64 sector
//! 24 u32 bytes                              24 u32 bytes
//! 28 u32 action                             28 u32 pid
//! 32 u32 pid                                32 u64 action
//! 36 u32 device (dev_t: major << 20 | minor) 40 u32 device
//! 40 u32 cpu                                44 u32 cpu
//! 44 u16 error (negative errno, truncated)  48 u16 error
//! 46 u16 pdu_len                            50 u16 pdu_len, then 12 bytes of padding
//! ```
//!
//! `action`'s low 16 bits are the action (`__BLK_TA_*`; for notes `__BLK_TN_*`), bit 8 saying
//! that the payload starts with an 8-byte cgroup id; the bits from 16 up are the categories
//! (`BLK_TC_*`: read, write, flush, sync, FUA, discard, ...; version 8 adds write-zeroes and
//! the zone operations above bit 31).
//!
//! What is taken: the issue to the driver (`D`, `__BLK_TA_ISSUE`), after the block layer's
//! merges, so one record is one request the device saw; its completion (`C`,
//! `__BLK_TA_COMPLETE`); requeues (`R`), which withdraw an issue; and the process notes
//! (`BLK_TN_PROCESS`: a pid and its name in the payload), which give the records their `comm`.
//! The queue-side events (Q, G, I, M, F, P, U) are left: they describe bios, not requests. A
//! request's pid is the task that was running when it was issued to the driver, as blkparse
//! shows on `D` lines. A flush request (a flush category and no data) is [`Op::Flush`]; a
//! flush category on a request with data is a preflush ([`IoFlags::PREFLUSH`]). Times are ns
//! from the first event of all files.
//!
//! The files are merged in time order (`merge`) and paired (`pair`). Memory: one event per
//! file, and the pairing window. A file that stops at a truncated or damaged event ends there;
//! the other files are read to their end, and the error (naming the file and the event's byte
//! offset) comes after all the records. A single stream piped from `blktrace -o -` interleaves
//! the CPUs' buffers out of time order: give blktrace's per-CPU files instead.
//!
//! [`Op::Flush`]: crate::record::Op::Flush
//! [`IoFlags::PREFLUSH`]: crate::record::IoFlags::PREFLUSH

mod event;
mod merge;
mod pair;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use crate::error::TraceError;
use crate::meta::{source, DeviceInfo, TraceMeta};
use crate::record::{DevId, IoRecord};
use crate::{TraceFormat, TraceSource};
use event::{BlkFile, EventError};

pub const MAGIC: u32 = 0x6561_7400;

pub(crate) const TC_WRITE: u64 = 1 << 1;
pub(crate) const TC_FLUSH: u64 = 1 << 2;
pub(crate) const TC_SYNC: u64 = 1 << 3;
pub(crate) const TC_PC: u64 = 1 << 9;
pub(crate) const TC_NOTIFY: u64 = 1 << 10;
pub(crate) const TC_AHEAD: u64 = 1 << 11;
pub(crate) const TC_META: u64 = 1 << 12;
pub(crate) const TC_DISCARD: u64 = 1 << 13;
pub(crate) const TC_FUA: u64 = 1 << 15;
/// Version 8: zone reset, reset-all, finish, open, close.
pub(crate) const TC_ZONE_MGMT: u64 = 0x1f << 17;
/// Version 8.
pub(crate) const TC_WRITE_ZEROES: u64 = 1 << 22;

pub(crate) const TA_REQUEUE: u64 = 6;
pub(crate) const TA_ISSUE: u64 = 7;
pub(crate) const TA_COMPLETE: u64 = 8;
pub(crate) const TA_CGROUP: u64 = 1 << 8;
pub(crate) const TN_PROCESS: u64 = 0;
pub(crate) const TN_TIMESTAMP: u64 = 1;

/// (big-endian, version) when `first` starts with blktrace's magic.
pub fn magic_endian(first: &[u8]) -> Option<(bool, u8)> {
    let b: [u8; 4] = first.get(..4)?.try_into().ok()?;
    [
        (false, u32::from_le_bytes(b)),
        (true, u32::from_be_bytes(b)),
    ]
    .into_iter()
    .find(|&(_, m)| m & 0xffff_ff00 == MAGIC)
    .map(|(be, m)| (be, m as u8))
}

/// blktrace's per-CPU files for a base name as `blkparse -i` takes it (`dir/sda` or
/// `dir/sda.blktrace.`): `dir/sda.blktrace.N` for every N there, in CPU order.
pub fn per_cpu_files(base: &Path) -> Result<Vec<PathBuf>, TraceError> {
    let name = base.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = name.unwrap_or_default();
    let prefix = match name.ends_with(".blktrace.") {
        true => name,
        false => format!("{name}.blktrace."),
    };
    let dir = match base.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut found = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let file = e.file_name();
            let cpu = file.to_str().and_then(|f| f.strip_prefix(&prefix));
            if let Some(cpu) = cpu.and_then(|c| c.parse::<u32>().ok()) {
                found.push((cpu, e.path()));
            }
        }
    }
    if found.is_empty() {
        return Err(TraceError::NotFound {
            path: base.into(),
            prefix,
        });
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

/// blktrace's files as a trace.
pub struct BlktraceReader {
    meta: TraceMeta,
    merger: merge::Merger,
    pairer: pair::Pairer,
    pdu: Vec<u8>,
    ended: bool,
    records: u64,
}

impl BlktraceReader {
    /// Opens blktrace's files (one device's per-CPU files, or several devices').
    pub fn open(paths: &[PathBuf]) -> Result<BlktraceReader, TraceError> {
        let open = |p: &PathBuf| {
            let meta = std::fs::metadata(p).map_err(|e| TraceError::io(p, e))?;
            if !meta.is_file() {
                let e = std::io::Error::other("not a regular file, so not read as a trace");
                return Err(TraceError::io(p, e));
            }
            BlkFile::open(p).map_err(|e| TraceError::io(p, e))
        };
        let files = paths.iter().map(open).collect::<Result<Vec<_>, _>>()?;
        let merger = merge::Merger::new(files);
        let base_ns = merger.heads().map(|(ev, _, _)| ev.time_ns).min();
        let base_ns = base_ns.unwrap_or(0);
        let meta = meta_from_heads(&merger, base_ns, paths);
        Ok(BlktraceReader {
            meta,
            merger,
            pairer: pair::Pairer::new(base_ns),
            pdu: Vec::new(),
            ended: false,
            records: 0,
        })
    }

    /// Completions whose issue came before the trace began, so no record has them.
    pub fn unmatched_completions(&self) -> u64 {
        self.pairer.unmatched
    }

    fn error(&self, file: usize, e: EventError) -> TraceError {
        let path = self.merger.files[file].path.clone();
        match e {
            EventError::Truncated {
                offset,
                expected,
                left,
            } => TraceError::Truncated {
                path,
                what: "event",
                offset,
                expected,
                left,
                records: self.records,
            },
            EventError::Corrupt { offset, why } => TraceError::Corrupt {
                path,
                what: "event",
                offset,
                why,
                records: self.records,
            },
            EventError::Io(e) => TraceError::io(path, e),
        }
    }
}

/// The devices (named after their files), the target and the start time, from each file's
/// first event: blktrace notes the wall clock (`BLK_TN_TIMESTAMP`) as it starts.
fn meta_from_heads(merger: &merge::Merger, base_ns: u64, paths: &[PathBuf]) -> TraceMeta {
    let mut meta = TraceMeta {
        source: source::BLKTRACE.into(),
        ..TraceMeta::default()
    };
    for (ev, pdu, file) in merger.heads() {
        let name = file.path.file_name().unwrap_or_default().to_string_lossy();
        let name = name
            .split(".blktrace.")
            .next()
            .unwrap_or_default()
            .to_string();
        let dev = DevId::from_kernel(ev.device);
        if !meta.devices.iter().any(|d| d.dev == dev) {
            let size_bytes = None;
            meta.devices.push(DeviceInfo {
                dev,
                name,
                size_bytes,
            });
        }
        let note = (ev.action >> 16) & TC_NOTIFY != 0 && ev.action & 0xff == TN_TIMESTAMP;
        if note && pdu.len() >= 8 {
            let word = |at: usize| {
                let b = [pdu[at], pdu[at + 1], pdu[at + 2], pdu[at + 3]];
                match file.big_endian() {
                    true => u32::from_be_bytes(b),
                    false => u32::from_le_bytes(b),
                }
            };
            let wall_ns = i128::from(word(0)) * 1_000_000_000 + i128::from(word(4));
            let start = wall_ns - i128::from(ev.time_ns - base_ns);
            // to the second, as every time iocap records
            let s = start.div_euclid(1_000_000_000).max(0);
            meta.started_at = iocap_model::rfc3339_utc(s as u64);
        }
    }
    let names: Vec<&str> = meta.devices.iter().map(|d| d.name.as_str()).collect();
    meta.target = match names.is_empty() {
        true => paths
            .first()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        false => names.join(","),
    };
    meta
}

impl Iterator for BlktraceReader {
    type Item = Result<IoRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.pairer.pop(self.ended) {
                self.records += 1;
                return Some(Ok(r));
            }
            if self.ended {
                let (file, e) = self.merger.take_error()?;
                return Some(Err(self.error(file, e)));
            }
            match self.merger.next(&mut self.pdu) {
                Some(ev) => self.pairer.feed(&ev, &self.pdu),
                None => self.ended = true,
            }
        }
    }
}

impl TraceSource for BlktraceReader {
    fn format(&self) -> TraceFormat {
        TraceFormat::Blktrace
    }
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }
}

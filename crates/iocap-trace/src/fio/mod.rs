//! fio's iolog: the text trace fio writes with `--write_iolog` and replays with
//! `--read_iolog` (fio's HOWTO, "Trace file format", and iolog.c, which this follows where
//! the two differ).
//!
//! ```text
//! fio version 2 iolog                     fio version 3 iolog
//! /data/f add                             18 /data/f add
//! /data/f open                            134 /data/f open
//! /data/f read 61440 4096                 138 /data/f read 61440 4096
//! /data/f wait 250                        884 /data/f sync 892928 0
//! /data/f close                           1765 /data/f close
//! ```
//!
//! A line is `[timestamp] filename action [offset length]`, fields apart by blanks (so a file
//! name holds none). Actions: `add`, `open`, `close` on a file; `read`, `write`, `trim`,
//! `sync`, `datasync`, and in version 2 `wait`. Version 3's timestamp is in microseconds since
//! fio started logging (iolog.c writes `utime_since_now(&td->io_log_start_time)`, and replays
//! the differences as µs delays); fio 3.31 and later write version 3. Version 2 has no times:
//! its records share the current time, which `wait N` moves to N ms after the start, as
//! iolog.c's replay does (`ipo->delay = offset`, then a sleep until `mtime_since_genesis()`
//! reaches it; the HOWTO's "µs, relative to the previous wait" is not what fio does). fio
//! ignores `wait` in version 3, and so does iocap.
//!
//! As records: `read` and `write` as they are, `sync` and `datasync` as [`Op::Flush`] (no
//! bytes, sector 0), `trim` as [`Op::Discard`]. There are no completions (`complete_ns`
//! `None`), pids or names. Each file becomes a device `0:N`, N its order of appearance, named
//! in the metadata. Offsets must be whole 512-byte sectors, as a record keeps sectors. An I/O
//! on a file with no `add` line before it is taken (fio would fail it). Memory: one line.

mod export;

pub use export::export_fio_iolog;

use std::fs::File;
use std::io::{BufRead, BufReader, Seek};
use std::path::{Path, PathBuf};

use crate::error::TraceError;
use crate::meta::{source, DeviceInfo, TraceMeta};
use crate::record::{DevId, IoFlags, IoRecord, Op, COMM_LEN};
use crate::{TraceFormat, TraceSource};

pub const V2_LINE: &str = "fio version 2 iolog";
pub const V3_LINE: &str = "fio version 3 iolog";

/// fio's iolog as a trace.
pub struct FioIologReader {
    path: PathBuf,
    lines: BufReader<File>,
    line_no: u64,
    version: u8,
    meta: TraceMeta,
    now_ns: u64,
    line: String,
    records: u64,
    done: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Act {
    Add,
    Open,
    Close,
    Read,
    Write,
    Trim,
    Sync,
    Wait,
}

/// One line: its time (version 3), file, action and numbers; `None` for a blank line.
struct Line<'a> {
    time_us: Option<u64>,
    name: &'a str,
    act: Act,
    numbers: Option<(u64, u64)>,
}

impl FioIologReader {
    /// Opens the iolog; the files it adds before its first I/O are named in the metadata
    /// (fio writes them all there), found by a first look at the top of the file.
    pub fn open(path: &Path) -> Result<FioIologReader, TraceError> {
        let file = File::open(path).map_err(|e| TraceError::io(path, e))?;
        let mut r = FioIologReader {
            path: path.into(),
            lines: BufReader::new(file),
            line_no: 0,
            version: 0,
            meta: TraceMeta {
                target: path.display().to_string(),
                ..TraceMeta::default()
            },
            now_ns: 0,
            line: String::new(),
            records: 0,
            done: false,
        };
        r.version = r.version_line()?;
        r.meta.source = match r.version {
            2 => source::FIO_IOLOG_V2.into(),
            _ => source::FIO_IOLOG_V3.into(),
        };
        while r.read_line()? {
            match r.parse()? {
                Some(l) if l.act == Act::Add => {
                    let name = l.name.to_string();
                    r.file_index(&name);
                }
                Some(l) if !matches!(l.act, Act::Open | Act::Close) => break,
                _ => {}
            }
        }
        r.lines.rewind().map_err(|e| TraceError::io(path, e))?;
        r.line_no = 0;
        r.version_line()?;
        Ok(r)
    }

    fn version_line(&mut self) -> Result<u8, TraceError> {
        self.read_line()?;
        match self.line.trim_end() {
            l if l.starts_with(V2_LINE) => Ok(2),
            l if l.starts_with(V3_LINE) => Ok(3),
            _ => Err(self.error(format!(
                "not fio's iolog: the first line is not `{V2_LINE}` or `{V3_LINE}`"
            ))),
        }
    }

    /// The next line into `self.line`; `false` at the end.
    fn read_line(&mut self) -> Result<bool, TraceError> {
        self.line.clear();
        self.line_no += 1;
        let n = self.lines.read_line(&mut self.line);
        let n = n.map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => self.error("it is not text (UTF-8)".into()),
            _ => TraceError::io(&self.path, e),
        })?;
        Ok(n > 0)
    }

    fn error(&self, why: String) -> TraceError {
        TraceError::Line {
            path: self.path.clone(),
            line: self.line_no,
            why,
            records: self.records,
        }
    }

    fn number(&self, field: &str, what: &str) -> Result<u64, TraceError> {
        field.parse().map_err(|_| {
            let field = iocap_model::text::printable_bytes(field.as_bytes());
            self.error(format!("the {what} `{field}` is not a whole number"))
        })
    }

    fn parse(&self) -> Result<Option<Line<'_>>, TraceError> {
        let mut f = self.line.split_ascii_whitespace();
        let Some(first) = f.next() else {
            return Ok(None);
        };
        let (time, name) = match self.version {
            3 => (Some(first), f.next().unwrap_or_default()),
            _ => (None, first),
        };
        let rest: Vec<&str> = f.collect();
        let (action, numbers) = match rest.as_slice() {
            [a] => (*a, None),
            [a, off, len] => (*a, Some((*off, *len))),
            _ => {
                return Err(self.error(format!(
                    "expected `{}FILE ACTION [OFFSET LENGTH]`",
                    if time.is_some() { "TIME " } else { "" }
                )))
            }
        };
        let time_us = match time {
            Some(t) => Some(self.number(t, "timestamp (µs)")?),
            None => None,
        };
        let act = match action {
            "add" => Act::Add,
            "open" => Act::Open,
            "close" => Act::Close,
            "read" => Act::Read,
            "write" => Act::Write,
            "trim" => Act::Trim,
            "sync" | "datasync" => Act::Sync,
            "wait" => Act::Wait,
            _ => {
                return Err(self.error(format!(
                    "unknown action `{}`; fio's iolog has add, open, close, read, write, \
                     sync, datasync, trim and wait",
                    iocap_model::text::printable_bytes(action.as_bytes())
                )))
            }
        };
        let numbers = match (act, numbers) {
            (Act::Add | Act::Open | Act::Close, Some(_)) => {
                return Err(self.error(format!("`{action}` takes no offset or length")))
            }
            (Act::Read | Act::Write | Act::Trim | Act::Wait, None) => {
                return Err(self.error(format!("`{action}` needs an offset and a length")))
            }
            (_, Some((off, len))) => {
                Some((self.number(off, "offset")?, self.number(len, "length")?))
            }
            (_, None) => None,
        };
        Ok(Some(Line {
            time_us,
            name,
            act,
            numbers,
        }))
    }

    fn file_index(&mut self, name: &str) -> u32 {
        let devices = &mut self.meta.devices;
        match devices.iter().position(|d| d.name == name) {
            Some(i) => i as u32,
            None => {
                let dev = DevId {
                    major: 0,
                    minor: devices.len() as u32,
                };
                let name = name.to_string();
                devices.push(DeviceInfo {
                    dev,
                    name,
                    size_bytes: None,
                });
                dev.minor
            }
        }
    }

    /// The record on the current line, if it has one.
    fn record(&mut self) -> Result<Option<IoRecord>, TraceError> {
        let Some(line) = self.parse()? else {
            return Ok(None);
        };
        let (act, numbers, time_us) = (line.act, line.numbers, line.time_us);
        let name = line.name.to_string();
        if let Some(us) = time_us {
            let ns = us.checked_mul(1000);
            let too_far = || self.error(format!("the timestamp {us} µs is too far away"));
            self.now_ns = ns.ok_or_else(too_far)?;
        }
        let (offset, len) = numbers.unwrap_or((0, 0));
        let (op, sector, bytes) = match act {
            Act::Add => {
                self.file_index(&name);
                return Ok(None);
            }
            Act::Open | Act::Close => return Ok(None),
            Act::Wait if self.version == 3 => return Ok(None),
            Act::Wait => {
                self.now_ns = self.now_ns.max(offset.saturating_mul(1_000_000));
                return Ok(None);
            }
            Act::Sync => (Op::Flush, 0, 0),
            Act::Read | Act::Write | Act::Trim => {
                let op = match act {
                    Act::Read => Op::Read,
                    Act::Write => Op::Write,
                    _ => Op::Discard,
                };
                if offset % 512 != 0 {
                    let why = format!("the offset {offset} is not a multiple of 512 bytes");
                    return Err(self.error(why + " (a trace keeps 512-byte sectors)"));
                }
                let bytes = u32::try_from(len)
                    .map_err(|_| self.error(format!("the length {len} is over 4 GiB")))?;
                (op, offset / 512, bytes)
            }
        };
        let minor = self.file_index(&name);
        Ok(Some(IoRecord {
            issue_ns: self.now_ns,
            complete_ns: None,
            dev: DevId { major: 0, minor },
            sector,
            bytes,
            op,
            flags: IoFlags(0),
            error: 0,
            pid: 0,
            comm: [0; COMM_LEN],
        }))
    }
}

impl Iterator for FioIologReader {
    type Item = Result<IoRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let step = match self.read_line() {
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Ok(true) => self.record(),
                Err(e) => Err(e),
            };
            match step {
                Ok(Some(r)) => {
                    self.records += 1;
                    return Some(Ok(r));
                }
                Ok(None) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

impl TraceSource for FioIologReader {
    fn format(&self) -> TraceFormat {
        match self.version {
            2 => TraceFormat::FioIologV2,
            _ => TraceFormat::FioIologV3,
        }
    }
    fn meta(&self) -> &TraceMeta {
        &self.meta
    }
}

#[cfg(test)]
mod tests;

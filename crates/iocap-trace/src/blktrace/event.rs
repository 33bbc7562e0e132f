//! One per-CPU blktrace file, read event by event (the layout is in [`super`]).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::{magic_endian, MAGIC, TA_CGROUP};

/// One event, in the host's integers, without its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawEvent {
    pub time_ns: u64,
    pub sector: u64,
    pub bytes: u32,
    /// Low 16 bits: the action (`__BLK_TA_*`, `__BLK_TN_*`); above: the categories.
    pub action: u64,
    pub pid: u32,
    pub device: u32,
    pub error: u16,
}

/// Why a file stopped before its end.
#[derive(Debug)]
pub enum EventError {
    Truncated {
        offset: u64,
        expected: u64,
        left: u64,
    },
    Corrupt {
        offset: u64,
        why: String,
    },
    Io(std::io::Error),
}

pub struct BlkFile {
    pub path: PathBuf,
    file: BufReader<File>,
    offset: u64,
    /// (big-endian, version), from the first event; `None` for an empty file.
    form: Option<(bool, u8)>,
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Field readers in the file's byte order.
struct Fields<'a>(&'a [u8], bool);

impl Fields<'_> {
    fn u16(&self, at: usize) -> u16 {
        let b = [self.0[at], self.0[at + 1]];
        if self.1 {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    }
    fn u32(&self, at: usize) -> u32 {
        let b = [self.0[at], self.0[at + 1], self.0[at + 2], self.0[at + 3]];
        if self.1 {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }
    fn u64(&self, at: usize) -> u64 {
        let (a, b) = (u64::from(self.u32(at)), u64::from(self.u32(at + 4)));
        if self.1 {
            a << 32 | b
        } else {
            b << 32 | a
        }
    }
}

impl BlkFile {
    pub fn open(path: &Path) -> std::io::Result<BlkFile> {
        let mut file = BufReader::with_capacity(64 << 10, File::open(path)?);
        // a peek: the bytes stay in the buffer for the first event
        let first = file.fill_buf()?;
        let form = magic_endian(&first[..first.len().min(4)]);
        Ok(BlkFile {
            path: path.into(),
            file,
            offset: 0,
            form,
        })
    }

    /// Whether the file's integers are big-endian.
    pub fn big_endian(&self) -> bool {
        self.form.is_some_and(|(be, _)| be)
    }

    /// The next event, its payload (after any cgroup id) in `pdu`; `None` at the end.
    pub fn next(&mut self, pdu: &mut Vec<u8>) -> Result<Option<RawEvent>, EventError> {
        let at = self.offset;
        let mut h = [0u8; 64];
        let Some((be, version)) = self.form else {
            let n = read_full(&mut self.file, &mut h[..4]).map_err(EventError::Io)?;
            return match n {
                0 => Ok(None),
                _ => Err(self.no_magic(at, &h[..n])),
            };
        };
        let len = if version == 8 { 64 } else { 48 };
        let n = read_full(&mut self.file, &mut h[..len]).map_err(EventError::Io)?;
        if n == 0 {
            return Ok(None);
        }
        if n < len {
            let (expected, left) = (len as u64, n as u64);
            return Err(EventError::Truncated {
                offset: at,
                expected,
                left,
            });
        }
        let f = Fields(&h, be);
        if f.u32(0) != MAGIC | u32::from(version) {
            return Err(self.no_magic(at, &h[..4]));
        }
        let (ev, pdu_len) = if version == 8 {
            let ev = RawEvent {
                time_ns: f.u64(8),
                sector: f.u64(16),
                bytes: f.u32(24),
                pid: f.u32(28),
                action: f.u64(32),
                device: f.u32(40),
                error: f.u16(48),
            };
            (ev, f.u16(50))
        } else {
            let ev = RawEvent {
                time_ns: f.u64(8),
                sector: f.u64(16),
                bytes: f.u32(24),
                action: u64::from(f.u32(28)),
                pid: f.u32(32),
                device: f.u32(36),
                error: f.u16(44),
            };
            (ev, f.u16(46))
        };
        pdu.clear();
        pdu.resize(usize::from(pdu_len), 0);
        let got = read_full(&mut self.file, pdu).map_err(EventError::Io)?;
        if got < pdu.len() {
            let (expected, left) = ((len + pdu.len()) as u64, (len + got) as u64);
            return Err(EventError::Truncated {
                offset: at,
                expected,
                left,
            });
        }
        if ev.action & TA_CGROUP != 0 && pdu.len() >= 8 {
            pdu.drain(..8);
        }
        self.offset += (len + usize::from(pdu_len)) as u64;
        Ok(Some(ev))
    }

    fn no_magic(&self, offset: u64, seen: &[u8]) -> EventError {
        let why = match self.form {
            Some((_, v)) if v != 7 && v != 8 => {
                format!("blktrace format version {v}; iocap reads versions 7 and 8")
            }
            _ => format!(
                "it starts with \"{}\", not blktrace's magic",
                iocap_model::text::printable_bytes(seen)
            ),
        };
        EventError::Corrupt { offset, why }
    }
}

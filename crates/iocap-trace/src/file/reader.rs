//! Reads iocap's trace file chunk by chunk (see [`super`] for the layout). A truncated or
//! damaged chunk ends the records with one error naming its offset; every record of the whole
//! chunks before it has come out first. A file without its trailer (a capture killed) reads as
//! far as it goes and says [`TraceReader::complete`] `false`.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::codec;
use super::{
    u32_at, u64_at, ChunkHeader, CHUNK_HEADER_LEN, MAGIC, MAX_META_LEN, TRAILER_LEN, VERSION,
};
use crate::error::TraceError;
use crate::meta::{LostCounts, TraceMeta};
use crate::record::IoRecord;
use iocap_model::text::printable_bytes;

pub struct TraceReader {
    path: PathBuf,
    file: BufReader<File>,
    meta: TraceMeta,
    offset: u64,
    records_read: u64,
    chunk: Vec<IoRecord>,
    pos: usize,
    lost: LostCounts,
    complete: bool,
    done: bool,
    stored: Vec<u8>,
    raw: Vec<u8>,
    col: Vec<i64>,
}

/// Reads until `buf` is full or the file ends; how many bytes came.
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

impl TraceReader {
    /// Opens `path` and reads its header.
    pub fn open(path: &Path) -> Result<TraceReader, TraceError> {
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        let mut r = TraceReader {
            path: path.into(),
            file: BufReader::with_capacity(1 << 20, f),
            meta: TraceMeta::default(),
            offset: 0,
            records_read: 0,
            chunk: Vec::new(),
            pos: 0,
            lost: LostCounts::default(),
            complete: false,
            done: false,
            stored: Vec::new(),
            raw: Vec::new(),
            col: Vec::new(),
        };
        r.meta = r.header()?;
        Ok(r)
    }

    pub fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    /// The lost-event counts of the last whole chunk or the trailer read so far.
    pub fn lost(&self) -> LostCounts {
        self.lost
    }

    /// Whether the trailer was read: the writer finished. `false` before the end is reached,
    /// and for a capture that was killed.
    pub fn complete(&self) -> bool {
        self.complete
    }

    fn header(&mut self) -> Result<TraceMeta, TraceError> {
        let mut h = [0u8; 16];
        let n = self.read(&mut h)?;
        let magic = n.min(8);
        if n == 0 || h[..magic] != MAGIC[..magic] {
            return Err(TraceError::UnknownFormat {
                path: self.path.clone(),
                first_bytes: printable_bytes(&h[..n]),
            });
        }
        if n < 16 {
            return Err(self.truncated("the header", 0, 16, n));
        }
        let version = u16::from_le_bytes([h[8], h[9]]);
        if version > VERSION {
            let path = self.path.clone();
            return Err(TraceError::NewerVersion { path, version });
        }
        let len = u32_at(&h, 12) as usize;
        if len > MAX_META_LEN {
            let why = format!("its metadata claims {len} bytes");
            return Err(self.corrupt("the header", 0, why));
        }
        let mut rest = vec![0u8; len + 4];
        let got = self.read(&mut rest)?;
        if got < rest.len() {
            return Err(self.truncated("the header", 0, 20 + len, 16 + got));
        }
        let mut all = h.to_vec();
        all.extend_from_slice(&rest[..len]);
        let (stored, computed) = (u32_at(&rest, len), crc32c::crc32c(&all));
        if stored != computed {
            let why = format!("its CRC32C is {stored:#010x}, its bytes give {computed:#010x}");
            return Err(self.corrupt("the header", 0, why));
        }
        self.offset = (20 + len) as u64;
        serde_json::from_slice(&rest[..len]).map_err(|e| {
            let why = format!("its metadata is not the JSON iocap writes: {e}");
            self.corrupt("the header", 0, why)
        })
    }

    fn read(&mut self, buf: &mut [u8]) -> Result<usize, TraceError> {
        read_full(&mut self.file, buf).map_err(|e| TraceError::io(&self.path, e))
    }

    fn truncated(
        &self,
        what: &'static str,
        offset: u64,
        expected: usize,
        left: usize,
    ) -> TraceError {
        TraceError::Truncated {
            path: self.path.clone(),
            what,
            offset,
            expected: expected as u64,
            left: left as u64,
            records: self.records_read,
        }
    }

    fn corrupt(&self, what: &'static str, offset: u64, why: String) -> TraceError {
        TraceError::Corrupt {
            path: self.path.clone(),
            what,
            offset,
            why,
            records: self.records_read,
        }
    }

    /// Reads the next chunk into `self.chunk`; `false` at the end of the records.
    fn next_chunk(&mut self) -> Result<bool, TraceError> {
        let at = self.offset;
        let mut hb = [0u8; CHUNK_HEADER_LEN];
        let n = self.read(&mut hb)?;
        if n == 0 {
            return Ok(false);
        }
        if n < CHUNK_HEADER_LEN {
            return Err(self.truncated("chunk", at, CHUNK_HEADER_LEN, n));
        }
        let h = match ChunkHeader::decode(&hb) {
            Ok(h) => h,
            Err(why) => return Err(self.corrupt("chunk", at, why)),
        };
        let len = h.stored_len as usize;
        self.stored.resize(len, 0);
        let mut stored = std::mem::take(&mut self.stored);
        let got = self.read(&mut stored);
        self.stored = stored;
        let got = got?;
        if got < len {
            let (expected, left) = (CHUNK_HEADER_LEN + len, CHUNK_HEADER_LEN + got);
            return Err(self.truncated("chunk", at, expected, left));
        }
        let crc = crc32c::crc32c(&self.stored);
        if crc != h.payload_crc {
            let why = format!(
                "its payload's CRC32C is {:#010x}, its bytes give {crc:#010x}",
                h.payload_crc
            );
            return Err(self.corrupt("chunk", at, why));
        }
        self.offset += (CHUNK_HEADER_LEN + len) as u64;
        if h.end {
            return self.trailer(h).map(|_| false);
        }
        self.raw.clear();
        self.raw.resize(h.raw_len as usize, 0);
        let decoded = match lz4_flex::block::decompress_into(&self.stored, &mut self.raw) {
            Ok(k) if k == self.raw.len() => codec::decode(
                &self.raw,
                h.records as usize,
                h.first_issue_ns,
                &mut self.col,
                &mut self.chunk,
            ),
            Ok(k) => Err(format!("it decompresses to {k} bytes, not {}", h.raw_len)),
            Err(e) => Err(format!("its payload does not decompress: {e}")),
        };
        if let Err(why) = decoded {
            return Err(self.corrupt("chunk", at, why));
        }
        self.pos = 0;
        self.records_read += self.chunk.len() as u64;
        self.lost = h.lost;
        Ok(true)
    }

    fn trailer(&mut self, h: ChunkHeader) -> Result<(), TraceError> {
        let p = &self.stored[..TRAILER_LEN];
        let (duration_ns, records) = (u64_at(p, 0), u64_at(p, 8));
        let at = self.offset - (CHUNK_HEADER_LEN + TRAILER_LEN) as u64;
        if records != self.records_read {
            let why = format!(
                "the trailer counts {records} records, the chunks before it hold {}",
                self.records_read
            );
            return Err(self.corrupt("trailer", at, why));
        }
        self.lost = h.lost;
        self.complete = true;
        self.meta.duration_s = Some(duration_ns as f64 / 1e9);
        let mut extra = [0u8; 1];
        if self.read(&mut extra)? > 0 {
            let why = "bytes follow the trailer".to_string();
            return Err(self.corrupt("the end", self.offset, why));
        }
        Ok(())
    }
}

impl Iterator for TraceReader {
    type Item = Result<IoRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.chunk.get(self.pos) {
                self.pos += 1;
                return Some(Ok(*r));
            }
            if self.done {
                return None;
            }
            match self.next_chunk() {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    self.done = true;
                    self.chunk.clear();
                    return Some(Err(e));
                }
            }
        }
    }
}

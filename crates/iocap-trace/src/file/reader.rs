//! Reads iocap's trace file chunk by chunk (see [`super`] for the layout). A truncated or
//! damaged chunk ends the records with one error naming its offset; every record of the whole
//! chunks before it has come out first. A file without its trailer (a capture killed) reads as
//! far as it goes and says [`TraceReader::complete`] `false`; its last window chunk's records
//! issued after every record read come out before that end (or before the error). Maps and
//! pads are skipped; [`read_maps`] reads the maps.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::codec;
use super::{
    u32_at, u64_at, ChunkHeader, Kind, CHUNK_HEADER_LEN, MAGIC, MAX_META_LEN, TRAILER_LEN, VERSION,
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
    /// The newest window chunk's records (IWIN), let out only if the trailer never comes.
    window: Vec<IoRecord>,
    /// The latest issue of the records read so far.
    max_issue: Option<u64>,
    /// The error that ends the records, once the window's records before it are out.
    ending: Option<TraceError>,
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
        TraceReader::open_with(path, 1 << 20)
    }

    /// Opens `path` with a read buffer of `buffer` bytes.
    fn open_with(path: &Path, buffer: usize) -> Result<TraceReader, TraceError> {
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        let mut r = TraceReader {
            path: path.into(),
            file: BufReader::with_capacity(buffer, f),
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
            window: Vec::new(),
            max_issue: None,
            ending: None,
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
            return Err(TraceError::NewerVersion {
                path,
                version,
                newest: VERSION,
            });
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

    /// The next chunk's header, at `self.offset`; `None` where the file ends there.
    fn chunk_header(&mut self) -> Result<Option<ChunkHeader>, TraceError> {
        let at = self.offset;
        let mut hb = [0u8; CHUNK_HEADER_LEN];
        let n = self.read(&mut hb)?;
        if n == 0 {
            return Ok(None);
        }
        if n < CHUNK_HEADER_LEN {
            return Err(self.truncated("chunk", at, CHUNK_HEADER_LEN, n));
        }
        match ChunkHeader::decode(&hb) {
            Ok(h) => Ok(Some(h)),
            Err(why) => Err(self.corrupt("chunk", at, why)),
        }
    }

    /// Reads the payload of the chunk at `self.offset` whose header `h` was just read into
    /// `self.stored` and checks its CRC; moves `self.offset` past it.
    fn payload(&mut self, h: &ChunkHeader) -> Result<(), TraceError> {
        let at = self.offset;
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
        Ok(())
    }

    /// Moves past the payload of the chunk whose header `h` was just read, unread.
    fn skip_payload(&mut self, h: &ChunkHeader) -> Result<(), TraceError> {
        let at = self.offset;
        let len = h.stored_len as u64;
        let file_len = (self.file.get_ref().metadata())
            .map_err(|e| TraceError::io(&self.path, e))?
            .len();
        let end = at + (CHUNK_HEADER_LEN as u64) + len;
        if end > file_len {
            let left = file_len.saturating_sub(at) as usize;
            let expected = CHUNK_HEADER_LEN + len as usize;
            return Err(self.truncated("chunk", at, expected, left));
        }
        self.file
            .seek_relative(len as i64)
            .map_err(|e| TraceError::io(&self.path, e))?;
        self.offset = end;
        Ok(())
    }

    /// The records of the chunk whose payload is in `self.stored`, into `self.chunk` (or, for
    /// a window, `self.window`).
    fn records(&mut self, h: &ChunkHeader, at: u64) -> Result<(), TraceError> {
        self.raw.clear();
        self.raw.resize(h.raw_len as usize, 0);
        let out = match h.kind {
            Kind::Window => &mut self.window,
            _ => &mut self.chunk,
        };
        let decoded = match lz4_flex::block::decompress_into(&self.stored, &mut self.raw) {
            Ok(k) if k == self.raw.len() => codec::decode(
                &self.raw,
                h.records as usize,
                h.first_issue_ns,
                &mut self.col,
                out,
            ),
            Ok(k) => Err(format!("it decompresses to {k} bytes, not {}", h.raw_len)),
            Err(e) => Err(format!("its payload does not decompress: {e}")),
        };
        match decoded {
            Ok(()) => Ok(()),
            Err(why) => {
                out.clear();
                Err(self.corrupt("chunk", at, why))
            }
        }
    }

    /// Reads the next chunk of records into `self.chunk`, past maps, pads and windows;
    /// `false` at the end of the records.
    fn next_chunk(&mut self) -> Result<bool, TraceError> {
        loop {
            let at = self.offset;
            let Some(h) = self.chunk_header()? else {
                return Ok(false);
            };
            match h.kind {
                Kind::Map | Kind::Pad => {
                    self.skip_payload(&h)?;
                    continue;
                }
                Kind::End => {
                    self.payload(&h)?;
                    return self.trailer(h).map(|_| false);
                }
                Kind::Window => {
                    self.payload(&h)?;
                    self.records(&h, at)?;
                    continue;
                }
                Kind::Records => {
                    self.payload(&h)?;
                    self.records(&h, at)?;
                }
            }
            self.pos = 0;
            self.records_read += self.chunk.len() as u64;
            let newest = self.chunk.iter().map(|r| r.issue_ns).max();
            self.max_issue = self.max_issue.max(newest);
            self.lost = h.lost;
            return Ok(true);
        }
    }

    /// The trace ended before its trailer: the window's records issued after every record
    /// read so far go out last (the others are in the chunks already read).
    fn let_out_window(&mut self) {
        let after = self.max_issue;
        let mut window = std::mem::take(&mut self.window);
        window.retain(|r| after.is_none_or(|m| r.issue_ns > m));
        self.chunk = window;
        self.pos = 0;
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
        self.window = Vec::new(); // a finished trace holds every record in its chunks
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
                return self.ending.take().map(Err);
            }
            match self.next_chunk() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    if !self.complete {
                        self.let_out_window();
                    }
                }
                Err(e) => {
                    self.done = true;
                    self.ending = Some(e);
                    self.let_out_window();
                }
            }
        }
    }
}

/// Every map chunk's payload (IMAP, [`TraceWriter::write_map`](super::TraceWriter::write_map))
/// in `path`, in file order: one quick pass over the chunk headers that seeks past the other
/// payloads. A chunk that is torn or damaged ends the pass without an error (the maps before
/// it are returned; reading the records names the damage). An error: the file cannot be
/// opened or read, or its header is not a trace's.
pub fn read_maps(path: &Path) -> Result<Vec<Vec<u8>>, TraceError> {
    let mut r = TraceReader::open_with(path, 4096)?;
    let mut maps = Vec::new();
    loop {
        let step = match r.chunk_header() {
            Ok(Some(h)) if h.kind == Kind::End => break,
            Ok(Some(h)) if h.kind == Kind::Map => r.payload(&h).map(|_| {
                maps.push(std::mem::take(&mut r.stored));
            }),
            Ok(Some(h)) => r.skip_payload(&h),
            Ok(None) => break,
            Err(e) => Err(e),
        };
        match step {
            Ok(()) => {}
            Err(TraceError::Io { path, source }) => return Err(TraceError::Io { path, source }),
            Err(_) => break,
        }
    }
    Ok(maps)
}

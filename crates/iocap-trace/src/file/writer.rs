//! Writes iocap's trace file as records come (see [`super`] for the layout).

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::codec::Encoder;
use super::{
    ChunkHeader, Kind, CHUNK_HEADER_LEN, MAGIC, MAX_CHUNK_RECORDS, MAX_MAP_LEN, MAX_WINDOW_RECORDS,
    TRAILER_LEN, VERSION,
};
use crate::error::TraceError;
use crate::meta::{LostCounts, TraceMeta, TraceSummary};
use crate::record::IoRecord;

/// A trace being written. `push` costs no allocation: the chunk's buffers are made once.
/// Dropped without [`TraceWriter::finish`] (an error in the caller), it still writes the records
/// it holds, as a chunk without the trailer: the file reads as incomplete.
///
/// The file is written at its end, except for the window chunk ([`TraceWriter::write_window`]),
/// which stays at the tail and is written over, with every write after it, by what comes next
/// (see [`super`]).
pub struct TraceWriter {
    path: PathBuf,
    file: File,
    records: Vec<IoRecord>,
    encoder: Encoder,
    raw: Vec<u8>,
    out: Vec<u8>,
    /// The window chunk, header and payload, as it is at the tail; empty when there is none.
    window: Vec<u8>,
    lost: LostCounts,
    lost_written: LostCounts,
    total_records: u64,
    chunks: u64,
    /// Where the chunks that stay end: the next chunk's offset.
    end: u64,
    /// How far the file has been written (the window and pads lie between `end` and here).
    file_len: u64,
    /// The file's position after the last write.
    pos: u64,
    last_ns: u64,
    duration_ns: Option<u64>,
    finished: bool,
}

impl TraceWriter {
    /// A new file at `path`, never over an existing one (O_EXCL), and its header. Where the
    /// user may say `--force`, the caller opens the file by its own rule and hands it to
    /// [`TraceWriter::new`].
    pub fn create_new(path: &Path, meta: &TraceMeta) -> Result<TraceWriter, TraceError> {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => TraceError::Exists { path: path.into() },
                _ => TraceError::io(path, e),
            })?;
        TraceWriter::new(file, path, meta)
    }

    /// Writes the header into `file`, newly opened (or emptied) for writing; `path` names it
    /// in errors.
    pub fn new(file: File, path: &Path, meta: &TraceMeta) -> Result<TraceWriter, TraceError> {
        let json = serde_json::to_vec(meta).map_err(|e| TraceError::io(path, e.into()))?;
        let mut header = Vec::with_capacity(20 + json.len());
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&VERSION.to_le_bytes());
        header.extend_from_slice(&0u16.to_le_bytes());
        header.extend_from_slice(&(json.len() as u32).to_le_bytes());
        header.extend_from_slice(&json);
        let crc = crc32c::crc32c(&header);
        header.extend_from_slice(&crc.to_le_bytes());
        let mut w = TraceWriter {
            path: path.into(),
            file,
            records: Vec::with_capacity(MAX_CHUNK_RECORDS),
            encoder: Encoder::default(),
            raw: Vec::new(),
            out: Vec::new(),
            window: Vec::new(),
            lost: LostCounts::default(),
            lost_written: LostCounts::default(),
            total_records: 0,
            chunks: 0,
            end: 0,
            file_len: 0,
            pos: 0,
            last_ns: 0,
            duration_ns: None,
            finished: false,
        };
        w.write_kept(&mut header)?;
        Ok(w)
    }

    /// Adds a record; a full chunk is written.
    pub fn push(&mut self, r: &IoRecord) -> Result<(), TraceError> {
        self.records.push(*r);
        self.last_ns = self.last_ns.max(r.issue_ns).max(r.complete_ns.unwrap_or(0));
        if self.records.len() >= MAX_CHUNK_RECORDS {
            self.write_chunk()?;
        }
        Ok(())
    }

    /// The events lost so far (cumulative), kept with the next chunk.
    pub fn set_lost(&mut self, ring_full: u64, other: u64) {
        self.lost = LostCounts { ring_full, other };
    }

    /// The trace's length for the trailer; without it, the last record's issue or completion.
    pub fn set_duration_ns(&mut self, duration_ns: u64) {
        self.duration_ns = Some(duration_ns);
    }

    /// Writes the records held as a chunk (the capture calls it each second); nothing when
    /// there are none and the lost counts did not change.
    pub fn flush_chunk(&mut self) -> Result<(), TraceError> {
        if self.records.is_empty() && self.lost == self.lost_written {
            return Ok(());
        }
        self.write_chunk()
    }

    /// Writes the records held so far as a chunk (so the order is kept), then `payload` as a
    /// map chunk (IMAP): opaque bytes, stored as they are and CRC'd, at most
    /// [`MAX_MAP_LEN`](super::MAX_MAP_LEN). The record reader skips maps;
    /// [`read_maps`](super::read_maps) reads them back in order.
    pub fn write_map(&mut self, payload: &[u8]) -> Result<(), TraceError> {
        if payload.len() > MAX_MAP_LEN {
            let why = format!(
                "writing a map: {} bytes, more than a map may hold ({MAX_MAP_LEN})",
                payload.len()
            );
            return Err(TraceError::io(&self.path, std::io::Error::other(why)));
        }
        if !self.records.is_empty() || self.lost != self.lost_written {
            self.write_chunk()?;
        }
        let h = ChunkHeader {
            kind: Kind::Map,
            records: 0,
            raw_len: payload.len() as u32,
            stored_len: payload.len() as u32,
            first_issue_ns: self.last_ns,
            lost: self.lost,
            payload_crc: crc32c::crc32c(payload),
        };
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        out.extend_from_slice(&h.encode());
        out.extend_from_slice(payload);
        let written = self.write_kept(&mut out);
        self.out = out;
        written
    }

    /// Writes the records held so far as a chunk, then `held` (the records a capture still
    /// holds back to put them in issue order, sorted by issue) as the window chunk (IWIN) at
    /// the file's tail, in place of the one before: a trace whose writer dies before its
    /// trailer keeps them (see [`super`]). The first
    /// [`MAX_WINDOW_RECORDS`](super::MAX_WINDOW_RECORDS) are kept. The window is the
    /// caller's to give each time: the records held go on to be pushed as usual.
    pub fn write_window(&mut self, held: &[IoRecord]) -> Result<(), TraceError> {
        let held = &held[..held.len().min(MAX_WINDOW_RECORDS)];
        let had_window = !self.window.is_empty();
        let mut window = std::mem::take(&mut self.window);
        window.clear();
        if !held.is_empty() {
            let encoded = self.encode(Kind::Window, held, &mut window);
            if let Err(e) = encoded {
                self.window = window;
                return Err(e);
            }
        }
        self.window = window;
        if !self.records.is_empty() || self.lost != self.lost_written {
            return self.write_chunk();
        }
        if had_window || !self.window.is_empty() {
            // nothing to keep: the window alone, or a pad over the old one
            let mut none = std::mem::take(&mut self.out);
            none.clear();
            let written = self.write_kept(&mut none);
            self.out = none;
            return written;
        }
        Ok(())
    }

    /// Writes the last chunk and the trailer, and syncs the file once.
    pub fn finish(mut self) -> Result<TraceSummary, TraceError> {
        // the window's records have all been pushed by now: the trailer takes its place
        self.window.clear();
        self.flush_chunk()?;
        if self.file_len > self.end {
            // the old window and pads go first: a death here leaves a file that ends cleanly
            self.file
                .set_len(self.end)
                .map_err(|e| TraceError::io(&self.path, e))?;
            self.file_len = self.end;
        }
        let duration_ns = self.duration_ns.unwrap_or(self.last_ns);
        let mut payload = [0u8; TRAILER_LEN];
        payload[0..8].copy_from_slice(&duration_ns.to_le_bytes());
        payload[8..16].copy_from_slice(&self.total_records.to_le_bytes());
        payload[16..24].copy_from_slice(&self.chunks.to_le_bytes());
        let h = ChunkHeader {
            kind: Kind::End,
            records: 0,
            raw_len: TRAILER_LEN as u32,
            stored_len: TRAILER_LEN as u32,
            first_issue_ns: 0,
            lost: self.lost,
            payload_crc: crc32c::crc32c(&payload),
        };
        let mut out = h.encode().to_vec();
        out.extend_from_slice(&payload);
        self.write_kept(&mut out)?;
        self.finished = true;
        self.file
            .sync_all()
            .map_err(|e| TraceError::io(&self.path, e))?;
        Ok(TraceSummary {
            records: self.total_records,
            chunks: self.chunks,
            file_bytes: self.end,
            duration_ns,
            lost: self.lost,
        })
    }

    /// `recs` as a chunk of `kind` (header and lz4 payload) in `out`, cleared first.
    fn encode(
        &mut self,
        kind: Kind,
        recs: &[IoRecord],
        out: &mut Vec<u8>,
    ) -> Result<(), TraceError> {
        let first_issue_ns = recs.first().map_or(0, |r| r.issue_ns);
        self.encoder.encode(recs, first_issue_ns, &mut self.raw);
        let max = lz4_flex::block::get_maximum_output_size(self.raw.len());
        out.clear();
        out.resize(CHUNK_HEADER_LEN + max, 0);
        let stored = lz4_flex::block::compress_into(&self.raw, &mut out[CHUNK_HEADER_LEN..])
            .map_err(|e| TraceError::io(&self.path, std::io::Error::other(e)))?;
        out.truncate(CHUNK_HEADER_LEN + stored);
        let h = ChunkHeader {
            kind,
            records: recs.len() as u32,
            raw_len: self.raw.len() as u32,
            stored_len: stored as u32,
            first_issue_ns,
            lost: self.lost,
            payload_crc: crc32c::crc32c(&out[CHUNK_HEADER_LEN..]),
        };
        out[..CHUNK_HEADER_LEN].copy_from_slice(&h.encode());
        Ok(())
    }

    fn write_chunk(&mut self) -> Result<(), TraceError> {
        let records = std::mem::take(&mut self.records);
        let mut chunk = std::mem::take(&mut self.out);
        let mut written = self.encode(Kind::Records, &records, &mut chunk);
        if written.is_ok() {
            written = self.write_kept(&mut chunk);
        }
        self.out = chunk;
        self.records = records;
        written?;
        self.total_records += self.records.len() as u64;
        self.chunks += 1;
        self.lost_written = self.lost;
        self.records.clear();
        Ok(())
    }

    /// Writes `kept` (whole chunks, or the header) at the end of the chunks that stay, the
    /// window chunk after it and, where the tail written before reaches further, a pad over
    /// the rest: one `write_all`, so the file is never left with a stale chunk's bytes where a
    /// header is looked for. `kept` is as it was on return.
    fn write_kept(&mut self, kept: &mut Vec<u8>) -> Result<(), TraceError> {
        let n = kept.len();
        kept.extend_from_slice(&self.window);
        let tail_end = self.end + kept.len() as u64;
        if tail_end < self.file_len {
            let payload = (self.file_len - tail_end).saturating_sub(CHUNK_HEADER_LEN as u64);
            let pad = ChunkHeader {
                kind: Kind::Pad,
                records: 0,
                raw_len: payload as u32,
                stored_len: payload as u32,
                first_issue_ns: 0,
                lost: self.lost,
                payload_crc: 0,
            };
            kept.extend_from_slice(&pad.encode());
        }
        let at = self.end;
        let written = self.write_at(at, kept);
        kept.truncate(n);
        written?;
        self.end += n as u64;
        Ok(())
    }

    /// One `write_all` at `at`: the bytes reach the OS whole or, if the process dies in it,
    /// torn at the end of what was written, where the reader finds it.
    fn write_at(&mut self, at: u64, bytes: &[u8]) -> Result<(), TraceError> {
        if self.pos != at {
            self.file
                .seek(SeekFrom::Start(at))
                .map_err(|e| TraceError::io(&self.path, e))?;
            self.pos = at;
        }
        if let Err(e) = self.file.write_all(bytes) {
            self.pos = u64::MAX; // where the file stands is not known: seek the next time
            return Err(TraceError::io(&self.path, e));
        }
        self.pos = at + bytes.len() as u64;
        self.file_len = self.file_len.max(self.pos);
        Ok(())
    }
}

impl Drop for TraceWriter {
    fn drop(&mut self) {
        if !self.finished && !self.records.is_empty() {
            let _ = self.write_chunk();
        }
    }
}

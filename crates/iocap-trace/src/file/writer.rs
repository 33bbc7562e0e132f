//! Writes iocap's trace file as records come (see [`super`] for the layout).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::codec::Encoder;
use super::{ChunkHeader, MAGIC, MAX_CHUNK_RECORDS, TRAILER_LEN, VERSION};
use crate::error::TraceError;
use crate::meta::{LostCounts, TraceMeta, TraceSummary};
use crate::record::IoRecord;

/// A trace being written. `push` costs no allocation: the chunk's buffers are made once.
/// Dropped without [`TraceWriter::finish`] (an error in the caller), it still writes the records
/// it holds, as a chunk without the trailer: the file reads as incomplete.
pub struct TraceWriter {
    path: PathBuf,
    file: File,
    records: Vec<IoRecord>,
    encoder: Encoder,
    raw: Vec<u8>,
    out: Vec<u8>,
    lost: LostCounts,
    lost_written: LostCounts,
    total_records: u64,
    chunks: u64,
    file_bytes: u64,
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
            lost: LostCounts::default(),
            lost_written: LostCounts::default(),
            total_records: 0,
            chunks: 0,
            file_bytes: 0,
            last_ns: 0,
            duration_ns: None,
            finished: false,
        };
        w.write(&header)?;
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

    /// Writes the last chunk and the trailer, and syncs the file once.
    pub fn finish(mut self) -> Result<TraceSummary, TraceError> {
        self.flush_chunk()?;
        let duration_ns = self.duration_ns.unwrap_or(self.last_ns);
        let mut payload = [0u8; TRAILER_LEN];
        payload[0..8].copy_from_slice(&duration_ns.to_le_bytes());
        payload[8..16].copy_from_slice(&self.total_records.to_le_bytes());
        payload[16..24].copy_from_slice(&self.chunks.to_le_bytes());
        let h = ChunkHeader {
            end: true,
            records: 0,
            raw_len: TRAILER_LEN as u32,
            stored_len: TRAILER_LEN as u32,
            first_issue_ns: 0,
            lost: self.lost,
            payload_crc: crc32c::crc32c(&payload),
        };
        let mut out = h.encode().to_vec();
        out.extend_from_slice(&payload);
        self.write(&out)?;
        self.finished = true;
        self.file
            .sync_all()
            .map_err(|e| TraceError::io(&self.path, e))?;
        Ok(TraceSummary {
            records: self.total_records,
            chunks: self.chunks,
            file_bytes: self.file_bytes,
            duration_ns,
            lost: self.lost,
        })
    }

    fn write_chunk(&mut self) -> Result<(), TraceError> {
        let first_issue_ns = self.records.first().map_or(0, |r| r.issue_ns);
        self.encoder
            .encode(&self.records, first_issue_ns, &mut self.raw);
        let max = lz4_flex::block::get_maximum_output_size(self.raw.len());
        let out = &mut self.out;
        out.clear();
        out.resize(super::CHUNK_HEADER_LEN + max, 0);
        let stored = lz4_flex::block::compress_into(&self.raw, &mut out[super::CHUNK_HEADER_LEN..])
            .map_err(|e| TraceError::io(&self.path, std::io::Error::other(e)))?;
        out.truncate(super::CHUNK_HEADER_LEN + stored);
        let h = ChunkHeader {
            end: false,
            records: self.records.len() as u32,
            raw_len: self.raw.len() as u32,
            stored_len: stored as u32,
            first_issue_ns,
            lost: self.lost,
            payload_crc: crc32c::crc32c(&out[super::CHUNK_HEADER_LEN..]),
        };
        out[..super::CHUNK_HEADER_LEN].copy_from_slice(&h.encode());
        let chunk = std::mem::take(&mut self.out);
        let written = self.write(&chunk);
        self.out = chunk;
        written?;
        self.total_records += self.records.len() as u64;
        self.chunks += 1;
        self.lost_written = self.lost;
        self.records.clear();
        Ok(())
    }

    /// One `write_all`: the chunk reaches the OS whole or, if the process dies in it, torn at
    /// the end of the file, where the reader finds it.
    fn write(&mut self, bytes: &[u8]) -> Result<(), TraceError> {
        self.file
            .write_all(bytes)
            .map_err(|e| TraceError::io(&self.path, e))?;
        self.file_bytes += bytes.len() as u64;
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

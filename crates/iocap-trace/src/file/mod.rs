//! iocap's own trace file: a header, then self-contained compressed chunks, then a trailer.
//!
//! ```text
//! header   0  8  magic "IOCAPTRC"
//!          8  2  format version, u16 little-endian (2; version 1 has no IMAP, IWIN or IPAD)
//!         10  2  0 (reserved)
//!         12  4  n: length of the metadata, u32
//!         16  n  TraceMeta as JSON
//!       16+n  4  CRC32C of bytes 0 .. 16+n
//! chunk    0  4  its kind: "ICHK" (records), "IEND" (the trailer), "IMAP" (a map: opaque
//!                bytes a caller keeps beside the records), "IWIN" (the capture's reorder
//!                window, records) or "IPAD" (padding, skipped)
//!          4  4  records in the chunk, u32 (0 in IEND, IMAP and IPAD)
//!          8  4  payload length uncompressed, u32
//!         12  4  payload length as stored, u32
//!         16  8  the first record's issue_ns, u64 (IMAP: the newest issue_ns written before
//!                it; IEND and IPAD: 0)
//!         24  8  events lost so far because the ring buffer was full, u64
//!         32  8  events lost so far for another reason, u64
//!         40  4  CRC32C of the stored payload (IPAD: 0, its payload is not checked)
//!         44  4  CRC32C of bytes 0 .. 44 of this chunk header
//!         48     the payload: an lz4 block of the records (`codec`) in ICHK and IWIN; the
//!                trailer's is stored as it is: duration_ns, records, data chunks (three u64);
//!                a map's as it was given; a pad's is whatever bytes were there before
//! ```
//! All integers are little-endian.
//!
//! Why so:
//! - Chunks of at most [`MAX_CHUNK_RECORDS`] records, or what a second brings (the capture
//!   calls `flush_chunk` each second), each written with one `write` and not synced: a capture
//!   killed with -9 leaves every whole chunk in the page cache, and a reader takes them all and
//!   names the offset of the torn one. Memory is one chunk on either side, whatever the trace's
//!   length (64 Ki records: under 10 MiB for the writer's records and its buffers).
//! - The lost-event counts are cumulative in every chunk, so a trace cut short still says what
//!   it missed up to its last whole chunk.
//! - A CRC32C on the chunk header as well as the payload: a damaged length field reads as
//!   corruption, not as a truncation at a wrong place.
//! - Columns packed near their entropy (`codec`, `pack`), then lz4 over the chunk. lz4, not
//!   zstd: it is the compressor already in the tree and costs little on the capture's one
//!   core; the columns do most of the packing (lz4 adds a few per cent), where zstd's entropy
//!   coder would have had to do it at several times the CPU. Measured with
//!   `examples/trace_bench.rs` (release build, one core of this 2-core VM): 8 KiB random reads
//!   at queue depth 4 with ns times take 7.4 bytes a record, 128 KiB log writes with flushes
//!   3.9, a mixed four-process stream 9.2; the writer takes 7 to 13 million records a second,
//!   the reader 4 to 5 million, against the 100K+ a second a capture needs.
//! - The reorder window survives a kill (version 2). A capture holds each record up to 2 s
//!   (3 s under load) before it is in issue order and written; a capture killed with -9 would
//!   lose those seconds. So each second the writer puts the records still held in an IWIN
//!   chunk at the file's end, after the chunks that stay, and overwrites it with the next
//!   second's chunks and window: one IWIN at most is in the file at any time, the file does
//!   not grow by the window each second (a window is about 2 s of records: appending it every
//!   second would triple the file), and the trailer takes its place when the capture ends. A
//!   shorter window than the one it overwrites is followed by an IPAD chunk that covers the
//!   rest, so the file never holds a stale chunk's bytes where a chunk header is looked for.
//!   The reader keeps the newest IWIN; when the file ends without its trailer it lets out the
//!   window's records issued after every record already read, so a killed capture keeps
//!   every record it had seen, to the last second. An IWIN holds at most
//!   [`MAX_WINDOW_RECORDS`] records, the earliest issued (the window holds 2 s of records:
//!   more only above about 130,000 requests a second, and then a kill loses the rest).
//! - Maps (IMAP, version 2): opaque bytes the caller writes between the records (a file map
//!   taken once a second), CRC'd and stored as given, at most [`MAX_MAP_LEN`] bytes each.
//!   The record reader skips them; [`read_maps`] reads them in one quick pass over the
//!   chunk headers.
//! - The metadata as JSON: the same form as every other file iocap writes, readable with any
//!   tool, and a newer iocap may add fields without a new format version.

mod codec;
mod pack;
mod reader;
mod writer;

pub use reader::{read_maps, TraceReader};
pub use writer::TraceWriter;

/// The file's first bytes.
pub const MAGIC: &[u8; 8] = b"IOCAPTRC";
/// The format version this iocap writes; it reads this one and every one before it.
pub const VERSION: u16 = 2;
/// Records in a chunk at most.
pub const MAX_CHUNK_RECORDS: usize = 64 * 1024;
/// Records in a window chunk (IWIN) at most: 256 Ki, about 2 MiB in the file at the 7 to 9
/// bytes a record takes, and 18 MiB held while it is encoded.
pub const MAX_WINDOW_RECORDS: usize = 4 * MAX_CHUNK_RECORDS;
/// A map's payload at most.
pub const MAX_MAP_LEN: usize = 64 << 20;

const CHUNK: &[u8; 4] = b"ICHK";
const END: &[u8; 4] = b"IEND";
const MAP: &[u8; 4] = b"IMAP";
const WINDOW: &[u8; 4] = b"IWIN";
const PAD: &[u8; 4] = b"IPAD";
const CHUNK_HEADER_LEN: usize = 48;
const TRAILER_LEN: usize = 24;
/// The metadata at most (a bound for a damaged length field).
const MAX_META_LEN: usize = 1 << 20;
/// A chunk's uncompressed payload at most: 64 Ki records of 9 columns of at most 8 bytes and
/// the block headers, and the tables, fit well within.
const MAX_RAW_LEN: usize = 16 << 20;
/// A window chunk's, for four times the records.
const MAX_WINDOW_RAW_LEN: usize = 4 * MAX_RAW_LEN;

/// What a chunk holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Records,
    End,
    Map,
    Window,
    Pad,
}

impl Kind {
    fn magic(self) -> &'static [u8; 4] {
        match self {
            Kind::Records => CHUNK,
            Kind::End => END,
            Kind::Map => MAP,
            Kind::Window => WINDOW,
            Kind::Pad => PAD,
        }
    }

    fn of(m: &[u8]) -> Option<Kind> {
        [Kind::Records, Kind::End, Kind::Map, Kind::Window, Kind::Pad]
            .into_iter()
            .find(|k| k.magic() == m)
    }
}

/// The largest a pad's payload can be: a window chunk stored at its largest, and a header.
fn max_pad_len() -> usize {
    lz4_flex::block::get_maximum_output_size(MAX_WINDOW_RAW_LEN) + CHUNK_HEADER_LEN
}

use crate::meta::LostCounts;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ChunkHeader {
    kind: Kind,
    records: u32,
    raw_len: u32,
    stored_len: u32,
    first_issue_ns: u64,
    lost: LostCounts,
    payload_crc: u32,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

impl ChunkHeader {
    fn encode(&self) -> [u8; CHUNK_HEADER_LEN] {
        let mut h = [0u8; CHUNK_HEADER_LEN];
        h[0..4].copy_from_slice(self.kind.magic());
        h[4..8].copy_from_slice(&self.records.to_le_bytes());
        h[8..12].copy_from_slice(&self.raw_len.to_le_bytes());
        h[12..16].copy_from_slice(&self.stored_len.to_le_bytes());
        h[16..24].copy_from_slice(&self.first_issue_ns.to_le_bytes());
        h[24..32].copy_from_slice(&self.lost.ring_full.to_le_bytes());
        h[32..40].copy_from_slice(&self.lost.other.to_le_bytes());
        h[40..44].copy_from_slice(&self.payload_crc.to_le_bytes());
        let crc = crc32c::crc32c(&h[..44]);
        h[44..48].copy_from_slice(&crc.to_le_bytes());
        h
    }

    fn decode(h: &[u8; CHUNK_HEADER_LEN]) -> Result<ChunkHeader, String> {
        let Some(kind) = Kind::of(&h[0..4]) else {
            let seen = iocap_model::text::printable_bytes(&h[0..4]);
            return Err(format!("it starts with \"{seen}\", not a chunk's magic"));
        };
        let (stored, computed) = (u32_at(h, 44), crc32c::crc32c(&h[..44]));
        if stored != computed {
            return Err(format!(
                "its header's CRC32C is {stored:#010x}, its bytes give {computed:#010x}"
            ));
        }
        let c = ChunkHeader {
            kind,
            records: u32_at(h, 4),
            raw_len: u32_at(h, 8),
            stored_len: u32_at(h, 12),
            first_issue_ns: u64_at(h, 16),
            lost: LostCounts {
                ring_full: u64_at(h, 24),
                other: u64_at(h, 32),
            },
            payload_crc: u32_at(h, 40),
        };
        let (raw, stored) = (c.raw_len as usize, c.stored_len as usize);
        let records_in = |max_records: usize, max_raw: usize| {
            c.records as usize > max_records
                || raw > max_raw
                || stored > lz4_flex::block::get_maximum_output_size(max_raw)
        };
        let bad = match kind {
            Kind::End => c.records != 0 || raw != TRAILER_LEN || stored != TRAILER_LEN,
            Kind::Records => records_in(MAX_CHUNK_RECORDS, MAX_RAW_LEN),
            Kind::Window => records_in(MAX_WINDOW_RECORDS, MAX_WINDOW_RAW_LEN),
            Kind::Map => c.records != 0 || raw != stored || stored > MAX_MAP_LEN,
            Kind::Pad => c.records != 0 || raw != stored || stored > max_pad_len(),
        };
        if bad {
            return Err(format!(
                "it claims {} records in {raw} bytes stored as {stored}",
                c.records
            ));
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests;

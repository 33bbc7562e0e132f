//! The journal of acknowledged writes: what the storage promised, kept outside it, so a check
//! after a crash can tell a lost acknowledged write from a write that was merely in flight.
//!
//! A 512-byte header (magic, version, file id, page size, pages, seed, the generation every page
//! was acknowledged at after the initial fill, target path, CRC32C) and then fixed 16-byte
//! records: page (u64), generation (u32), CRC32C of those 12 bytes (u32). A record is appended
//! with one write(2) on an O_APPEND descriptor only after the page write it names was durable
//! (RWF_DSYNC), so it survives `kill -9` through the page cache. For a power cut the journal
//! needs its own fdatasync: the run does one every 100 ms and at the end, so a power cut can
//! lose the last 100 ms of records. A lost record can only make the check weaker (that page is
//! then held to an older generation), never produce a false FAIL. The reader stops at the first
//! record that does not check out: a torn tail.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

pub const MAGIC: [u8; 8] = *b"IOCAPVJ1";
pub const VERSION: u32 = 1;
pub const HEADER_BYTES: usize = 512;
pub const RECORD_BYTES: usize = 16;
const MAX_PATH: usize = 508 - 50;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalHeader {
    pub file_id: u64,
    pub page_bytes: u32,
    /// Every page was durable at this generation before the first record.
    pub initial_generation: u32,
    pub pages: u64,
    pub seed: u64,
    pub target: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub page: u64,
    pub generation: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    pub header: JournalHeader,
    pub records: Vec<Record>,
    /// Bytes after the last valid record.
    pub torn_tail_bytes: u64,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JournalError {
    #[error("not an iocap verify journal (no valid header)")]
    NoHeader,
    #[error("journal version {0} is not one this iocap reads")]
    Version(u32),
}

impl JournalHeader {
    pub fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut h = [0u8; HEADER_BYTES];
        h[..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&(HEADER_BYTES as u32).to_le_bytes());
        h[16..24].copy_from_slice(&self.file_id.to_le_bytes());
        h[24..28].copy_from_slice(&self.page_bytes.to_le_bytes());
        h[28..32].copy_from_slice(&self.initial_generation.to_le_bytes());
        h[32..40].copy_from_slice(&self.pages.to_le_bytes());
        h[40..48].copy_from_slice(&self.seed.to_le_bytes());
        // a longer path is cut at a character boundary: it is for people, the file id decides
        let mut n = self.target.len().min(MAX_PATH);
        while !self.target.is_char_boundary(n) {
            n -= 1;
        }
        h[48..50].copy_from_slice(&(n as u16).to_le_bytes());
        h[50..50 + n].copy_from_slice(&self.target.as_bytes()[..n]);
        let crc = crc32c::crc32c(&h[..508]);
        h[508..].copy_from_slice(&crc.to_le_bytes());
        h
    }

    pub fn decode(h: &[u8]) -> Result<Self, JournalError> {
        if h.len() < HEADER_BYTES || h[..8] != MAGIC {
            return Err(JournalError::NoHeader);
        }
        let u32_at = |a: usize| u32::from_le_bytes(h[a..a + 4].try_into().unwrap());
        let u64_at = |a: usize| u64::from_le_bytes(h[a..a + 8].try_into().unwrap());
        if crc32c::crc32c(&h[..508]) != u32_at(508) {
            return Err(JournalError::NoHeader);
        }
        if u32_at(8) != VERSION {
            return Err(JournalError::Version(u32_at(8)));
        }
        let n = (u16::from_le_bytes([h[48], h[49]]) as usize).min(MAX_PATH);
        Ok(JournalHeader {
            file_id: u64_at(16),
            page_bytes: u32_at(24),
            initial_generation: u32_at(28),
            pages: u64_at(32),
            seed: u64_at(40),
            target: String::from_utf8_lossy(&h[50..50 + n]).into_owned(),
        })
    }
}

impl Record {
    pub fn encode(self) -> [u8; RECORD_BYTES] {
        let mut r = [0u8; RECORD_BYTES];
        r[..8].copy_from_slice(&self.page.to_le_bytes());
        r[8..12].copy_from_slice(&self.generation.to_le_bytes());
        let crc = crc32c::crc32c(&r[..12]);
        r[12..].copy_from_slice(&crc.to_le_bytes());
        r
    }

    pub fn decode(r: &[u8]) -> Option<Self> {
        let crc = u32::from_le_bytes(r.get(12..16)?.try_into().ok()?);
        (crc32c::crc32c(&r[..12]) == crc).then(|| Record {
            page: u64::from_le_bytes(r[..8].try_into().unwrap()),
            generation: u32::from_le_bytes(r[8..12].try_into().unwrap()),
        })
    }
}

/// Parses a whole journal; never panics, whatever the bytes.
pub fn parse(bytes: &[u8]) -> Result<Journal, JournalError> {
    let header = JournalHeader::decode(bytes)?;
    let body = &bytes[HEADER_BYTES..];
    let mut records = Vec::with_capacity(body.len() / RECORD_BYTES);
    for chunk in body.chunks(RECORD_BYTES) {
        match Record::decode(chunk) {
            Some(r) => records.push(r),
            None => break,
        }
    }
    let torn_tail_bytes = (body.len() - records.len() * RECORD_BYTES) as u64;
    Ok(Journal {
        header,
        records,
        torn_tail_bytes,
    })
}

/// Reads and parses the journal at `path`.
pub fn read(path: &Path) -> io::Result<Journal> {
    let bytes = iocap_engine::input::read_bytes(path)?;
    parse(&bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// The appending side, shared by every writer thread (each record is one write(2)).
pub struct JournalWriter {
    file: File,
}

impl JournalWriter {
    /// Creates the journal (never over an existing file) and makes its header durable.
    pub fn create(path: &Path, header: &JournalHeader) -> io::Result<Self> {
        let w = Self::create_empty(path)?;
        w.start(header)?;
        Ok(w)
    }

    /// Creates the journal empty, so a path that cannot be written fails before the fill; a
    /// journal left empty (a crash during the fill) has nothing to check.
    pub fn create_empty(path: &Path) -> io::Result<Self> {
        let file = iocap_engine::safety::no_follow(
            OpenOptions::new().append(true).create_new(true),
            false,
        )
        .open(path)?;
        Ok(Self { file })
    }

    /// Writes the header, once every page is durable at its initial generation.
    pub fn start(&self, header: &JournalHeader) -> io::Result<()> {
        (&self.file).write_all(&header.encode())?;
        self.file.sync_all()
    }

    /// Records that (page, generation) is durable. Called only after the write was.
    pub fn append(&self, r: Record) -> io::Result<()> {
        let bytes = r.encode();
        // one write(2) on an O_APPEND descriptor (Windows: one WriteFile on a handle with append
        // access only): records from several threads never interleave
        let n = (&self.file).write(&bytes)?;
        if n != bytes.len() {
            return Err(io::Error::other("short write to the journal"));
        }
        Ok(())
    }

    /// Makes the records so far survive a power cut.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn header() -> JournalHeader {
        JournalHeader {
            file_id: 99,
            page_bytes: 8192,
            initial_generation: 1,
            pages: 1000,
            seed: 5,
            target: "/tmp/x/iocap-verify.testfile".into(),
        }
    }

    fn journal(records: &[Record]) -> Vec<u8> {
        let mut b = header().encode().to_vec();
        for r in records {
            b.extend_from_slice(&r.encode());
        }
        b
    }

    #[test]
    fn header_round_trip_and_damage() {
        let h = header();
        assert_eq!(JournalHeader::decode(&h.encode()), Ok(h.clone()));
        let mut b = h.encode();
        b[30] ^= 1;
        assert_eq!(JournalHeader::decode(&b), Err(JournalError::NoHeader));
    }

    #[test]
    fn writer_and_reader_agree() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("j");
        let w = JournalWriter::create(&p, &header()).unwrap();
        w.append(Record {
            page: 3,
            generation: 2,
        })
        .unwrap();
        w.sync().unwrap();
        let j = read(&p).unwrap();
        assert_eq!(j.records.len(), 1);
        assert!(
            JournalWriter::create(&p, &header()).is_err(),
            "never over a file"
        );
    }

    /// The case count: `PROPTEST_CASES` for a longer run (bench/fuzz.sh), else 2000.
    fn cases(default: u32) -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases(2000)))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let _ = parse(&bytes);
            let mut j = header().encode().to_vec();
            j.extend_from_slice(&bytes);
            let parsed = parse(&j).unwrap();
            prop_assert!(parsed.records.len() * RECORD_BYTES + parsed.torn_tail_bytes as usize == bytes.len());
        }

        #[test]
        fn records_round_trip_and_truncation_gives_a_prefix(
            recs in proptest::collection::vec((any::<u64>(), any::<u32>()), 0..100),
            cut in any::<usize>(),
        ) {
            let recs: Vec<Record> = recs.into_iter().map(|(page, generation)| Record { page, generation }).collect();
            let bytes = journal(&recs);
            let j = parse(&bytes).unwrap();
            prop_assert_eq!(&j.records, &recs);
            prop_assert_eq!(j.torn_tail_bytes, 0);
            let cut = HEADER_BYTES + cut % (bytes.len() - HEADER_BYTES + 1);
            let t = parse(&bytes[..cut]).unwrap();
            prop_assert_eq!(&t.records[..], &recs[..t.records.len()]);
            prop_assert_eq!(t.records.len(), (cut - HEADER_BYTES) / RECORD_BYTES);
        }
    }
}

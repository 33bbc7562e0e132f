//! The self-describing page: a header naming the file, page and generation, and a body any
//! generation of which can be regenerated from the seed, so nothing written needs to be kept.
//!
//! Every 512 B sector identifies itself too (the header for sector 0, a 16-byte stamp for the
//! others, each with its own CRC32C), and each sector's body is derived from
//! (seed, file id, page, generation, sector) alone. That is what lets a torn page be read
//! sector by sector: which pieces are the new write, which the old, and which are neither.
//!
//! Layout (little-endian; docs/verify.md has the table):
//! sector 0: `0..8` magic, `8..10` version, `10..12` reserved, `12..16` page bytes,
//! `16..24` file id, `24..32` page, `32..40` generation, `40..48` timestamp ns, `48..56` seed,
//! `56..60` page CRC32C (whole page, this field zero), `60..64` sector-0 CRC32C (sector 0, both
//! CRC fields zero), `64..512` body.
//! sector i > 0: `0..8` page, `8..12` generation, `12..16` sector CRC32C (the sector, this
//! field zero), `16..512` body.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

pub const MAGIC: [u8; 8] = *b"IOCAPVPG";
pub const VERSION: u16 = 1;
pub const SECTOR: usize = 512;
pub const HEADER_BYTES: usize = 64;
pub const STAMP_BYTES: usize = 16;
pub const DEFAULT_PAGE_BYTES: usize = 8192;

const TS: std::ops::Range<usize> = 40..48;
const PAGE_CRC: std::ops::Range<usize> = 56..60;
const SECTOR0_CRC: std::ops::Range<usize> = 60..64;

/// What identifies every page of one verify file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdent {
    pub file_id: u64,
    pub seed: u64,
    pub page_bytes: usize,
}

/// Whether `n` is a page size iocap can verify: a power of two from 4 KiB to 64 KiB.
pub fn valid_page_bytes(n: u64) -> bool {
    n.is_power_of_two() && (4096..=65536).contains(&n)
}

/// The fields of a page header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u16,
    pub page_bytes: u32,
    pub file_id: u64,
    pub page: u64,
    pub generation: u64,
    pub timestamp_ns: u64,
    pub seed: u64,
    pub page_crc: u32,
    pub sector0_crc: u32,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// The header of `page`, if it starts with the magic.
pub fn header(page: &[u8]) -> Option<Header> {
    if page.len() < HEADER_BYTES || page[..8] != MAGIC {
        return None;
    }
    Some(Header {
        version: u16::from_le_bytes([page[8], page[9]]),
        page_bytes: u32_at(page, 12),
        file_id: u64_at(page, 16),
        page: u64_at(page, 24),
        generation: u64_at(page, 32),
        timestamp_ns: u64_at(page, 40),
        seed: u64_at(page, 48),
        page_crc: u32_at(page, 56),
        sector0_crc: u32_at(page, 60),
    })
}

fn mix(mut z: u64) -> u64 {
    // SplitMix64's finaliser: every input bit reaches every output bit.
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of one sector's body.
fn sector_seed(id: &FileIdent, page: u64, generation: u64, sector: usize) -> u64 {
    let mut h = mix(id.seed ^ 0x1CAF_E5EE_D000_0001);
    for v in [id.file_id, page, generation, sector as u64] {
        h = mix(h ^ v);
    }
    h
}

/// Fills `out` (one sector's body) with the bytes of (page, generation, sector).
fn fill_body(out: &mut [u8], id: &FileIdent, page: u64, generation: u64, sector: usize) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(sector_seed(id, page, generation, sector));
    let mut chunks = out.chunks_exact_mut(8);
    for c in &mut chunks {
        c.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let last = rng.next_u64().to_le_bytes();
    rest.copy_from_slice(&last[..rest.len()]);
}

/// Writes sector `s` of (page, generation) into `out` (512 bytes). Sector 0 gets the header
/// without its CRCs and timestamp; [`seal`] finishes the page.
fn encode_sector(out: &mut [u8], id: &FileIdent, page: u64, generation: u64, s: usize) {
    if s == 0 {
        out[..8].copy_from_slice(&MAGIC);
        out[8..10].copy_from_slice(&VERSION.to_le_bytes());
        out[10..12].fill(0);
        out[12..16].copy_from_slice(&(id.page_bytes as u32).to_le_bytes());
        out[16..24].copy_from_slice(&id.file_id.to_le_bytes());
        out[24..32].copy_from_slice(&page.to_le_bytes());
        out[32..40].copy_from_slice(&generation.to_le_bytes());
        out[TS].fill(0);
        out[48..56].copy_from_slice(&id.seed.to_le_bytes());
        out[56..64].fill(0);
        fill_body(&mut out[HEADER_BYTES..SECTOR], id, page, generation, 0);
    } else {
        out[..8].copy_from_slice(&page.to_le_bytes());
        out[8..12].copy_from_slice(&(generation as u32).to_le_bytes());
        out[12..16].fill(0);
        fill_body(&mut out[STAMP_BYTES..SECTOR], id, page, generation, s);
        let crc = crc32c::crc32c(out);
        out[12..16].copy_from_slice(&crc.to_le_bytes());
    }
}

fn sector0_crc(sector0: &[u8]) -> u32 {
    let mut c = crc32c::crc32c(&sector0[..PAGE_CRC.start]);
    c = crc32c::crc32c_append(c, &[0u8; 8]);
    crc32c::crc32c_append(c, &sector0[SECTOR0_CRC.end..SECTOR])
}

fn page_crc(page: &[u8]) -> u32 {
    let c = crc32c::crc32c(&page[..PAGE_CRC.start]);
    let c = crc32c::crc32c_append(c, &[0u8; 4]);
    crc32c::crc32c_append(c, &page[PAGE_CRC.end..])
}

/// Sets the timestamp and both CRCs of an encoded page.
fn seal(out: &mut [u8], timestamp_ns: u64) {
    out[TS].copy_from_slice(&timestamp_ns.to_le_bytes());
    let s0 = sector0_crc(&out[..SECTOR]);
    out[SECTOR0_CRC].copy_from_slice(&s0.to_le_bytes());
    let pc = page_crc(out);
    out[PAGE_CRC].copy_from_slice(&pc.to_le_bytes());
}

/// Writes the whole page (page, generation) into `out` (`id.page_bytes` long). No allocation.
pub fn encode(out: &mut [u8], id: &FileIdent, page: u64, generation: u64, timestamp_ns: u64) {
    debug_assert_eq!(out.len(), id.page_bytes);
    for (s, sec) in out.chunks_exact_mut(SECTOR).enumerate() {
        encode_sector(sec, id, page, generation, s);
    }
    seal(out, timestamp_ns);
}

/// Whether the page's own checksum holds (and its header names a page of this size).
pub fn checksum_ok(page: &[u8]) -> bool {
    match header(page) {
        Some(h) => {
            h.page_bytes as usize == page.len()
                && h.version == VERSION
                && h.page_crc == page_crc(page)
        }
        None => false,
    }
}

/// Which generation sector `s` of `data` (one 512 B sector found at page `page`) is a valid,
/// exact sector of, if any: its CRC holds, it names `page`, and its body is that generation's.
pub fn sector_generation(data: &[u8], id: &FileIdent, page: u64, s: usize) -> Option<u64> {
    let mut want = [0u8; SECTOR];
    let generation = if s == 0 {
        let h = header(data)?;
        if h.file_id != id.file_id || h.page != page || h.sector0_crc != sector0_crc(data) {
            return None;
        }
        h.generation
    } else {
        if u64_at(data, 0) != page {
            return None;
        }
        let mut d = [0u8; SECTOR];
        d.copy_from_slice(&data[..SECTOR]);
        d[12..16].fill(0);
        if crc32c::crc32c(&d) != u32_at(data, 12) {
            return None;
        }
        u64::from(u32_at(data, 8))
    };
    encode_sector(&mut want, id, page, generation, s);
    let same = if s == 0 {
        // the timestamp and the CRCs depend on the whole write, not on the sector
        want[..TS.start] == data[..TS.start]
            && want[TS.end..PAGE_CRC.start] == data[TS.end..PAGE_CRC.start]
            && want[HEADER_BYTES..] == data[HEADER_BYTES..SECTOR]
    } else {
        want[..] == data[..SECTOR]
    };
    same.then_some(generation)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn id() -> FileIdent {
        FileIdent {
            file_id: 0xF11E,
            seed: 42,
            page_bytes: 8192,
        }
    }

    #[test]
    fn encode_decode_round_trip() {
        let id = id();
        let mut p = vec![0u8; 8192];
        encode(&mut p, &id, 7, 3, 123);
        let h = header(&p).unwrap();
        assert_eq!(
            (h.file_id, h.page, h.generation, h.timestamp_ns, h.seed),
            (0xF11E, 7, 3, 123, 42)
        );
        assert!(checksum_ok(&p));
        for s in 0..16 {
            assert_eq!(sector_generation(&p[s * 512..], &id, 7, s), Some(3), "{s}");
            assert_eq!(sector_generation(&p[s * 512..], &id, 8, s), None);
        }
        // deterministic apart from the timestamp
        let mut q = vec![0u8; 8192];
        encode(&mut q, &id, 7, 3, 999);
        assert_eq!(p[64..], q[64..]);
        encode(&mut q, &id, 7, 4, 123);
        assert_ne!(p[64..], q[64..]);
        // one flipped bit anywhere breaks the page checksum
        p[5000] ^= 1;
        assert!(!checksum_ok(&p));
        assert_eq!(sector_generation(&p[4608..], &id, 7, 9), None);
    }

    #[test]
    fn sizes() {
        assert!(valid_page_bytes(4096) && valid_page_bytes(65536));
        assert!(!valid_page_bytes(2048) && !valid_page_bytes(12288));
    }
}

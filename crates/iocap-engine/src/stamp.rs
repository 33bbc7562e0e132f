//! What every write carries: bytes no array can shrink ([`whiten`], [`fill_random`]) and a
//! stamp per 4 KiB block that says where and when it was written ([`stamp_write`]). Apart from
//! the slots (`buffers`) and the data shapes (`datashape`), which both use them.

use rand_core::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Bytes whitened with one key: a sector, the granularity at which arrays deduplicate.
pub const WHITEN_SECTOR: usize = 512;

/// Makes `buf` differ, at every byte, from what it held before and from every other buffer
/// whitened with another key, in one pass that costs about a memory copy: each 512-byte sector
/// is XORed with its own 64-bit word, drawn from `key` and the sector's place by a bijective
/// mixer. Over random bytes (every slot starts random) the result is random again, so a write is
/// neither a repeat of an earlier write nor of another sector, at any offset: a deduplicating
/// array finds no equal 512-byte sector, and a compressor, whatever its window, finds no match
/// to copy (it sees only byte-equal runs). Fresh bytes from the PRNG for every write would give
/// the same, at several times the cost (docs/PERFORMANCE.md, issue 23).
#[inline]
pub fn whiten(buf: &mut [u8], key: u64) {
    for (n, sector) in buf.chunks_mut(WHITEN_SECTOR).enumerate() {
        let k = mix64(key.wrapping_add((n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        let mut words = sector.chunks_exact_mut(8);
        for w in &mut words {
            // always 8 bytes (`chunks_exact`); the `if let` only spares a panic path
            if let Ok(w) = <&mut [u8; 8]>::try_from(w) {
                *w = (u64::from_ne_bytes(*w) ^ k).to_ne_bytes();
            }
        }
        for (b, kb) in words.into_remainder().iter_mut().zip(k.to_ne_bytes()) {
            *b ^= kb;
        }
    }
}

/// SplitMix64's finaliser: a bijection on u64 whose outputs for nearby inputs look unrelated.
#[inline]
fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Fills `buf` with pseudo-random bytes: incompressible and, per 4 KiB block, unique.
pub fn fill_random(buf: &mut [u8], rng: &mut Xoshiro256PlusPlus) {
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        c.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let last = rng.next_u64().to_le_bytes();
    let n = rest.len();
    rest.copy_from_slice(&last[..n]);
}

/// Magic at the start of every write stamp ("IOCAPWR1").
pub const WRITE_STAMP_MAGIC: u64 = u64::from_le_bytes(*b"IOCAPWR1");
/// Size of the blocks that carry a write stamp.
pub const STAMP_BLOCK: usize = 4096;
/// Bytes of one stamp: magic, offset, sequence number, I/O length (little-endian u64s).
pub const STAMP_BYTES: usize = 32;

/// Stamps a write of `buf.len()` bytes meant for file offset `offset`: at the start of the I/O
/// and at every 4 KiB boundary of the file inside it, each stamp holding the magic, the file
/// offset it sits at, the sequence number `seq` and the I/O's length. Every 4 KiB block iocap
/// writes is then unique, so arrays that deduplicate or compress cannot flatter the result, and
/// a test can prove where writes landed, also for lengths and offsets that are multiples of
/// 512 B but not of 4 KiB (a stamp at a 4 KiB boundary of the file starts its block; the I/O's
/// own start is stamped wherever it is).
#[inline]
pub fn stamp_write(buf: &mut [u8], offset: u64, seq: u64) {
    let len = buf.len() as u64;
    let mut pos = 0usize;
    while pos + STAMP_BYTES <= buf.len() {
        stamp_one(&mut buf[pos..], offset + pos as u64, seq, len);
        pos = next_stamp(offset, pos);
    }
}

/// Writes one stamp at the start of `b` (if it holds one): for file offset `at` of the `seq`-th
/// write, `len` bytes long.
#[inline]
pub fn stamp_one(b: &mut [u8], at: u64, seq: u64, len: u64) {
    if b.len() < STAMP_BYTES {
        return;
    }
    b[0..8].copy_from_slice(&WRITE_STAMP_MAGIC.to_le_bytes());
    b[8..16].copy_from_slice(&at.to_le_bytes());
    b[16..24].copy_from_slice(&seq.to_le_bytes());
    b[24..32].copy_from_slice(&len.to_le_bytes());
}

/// Where the stamp after the one at `pos` of a write at `offset` goes: the next 4 KiB boundary
/// of the file.
#[inline]
fn next_stamp(offset: u64, pos: usize) -> usize {
    pos + STAMP_BLOCK - ((offset + pos as u64) % STAMP_BLOCK as u64) as usize
}

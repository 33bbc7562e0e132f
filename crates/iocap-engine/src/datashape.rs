//! What the written data looks like: `--compressible PCT` and `--dedupe PCT`, as fio's
//! `buffer_compress_percentage` and `dedupe_percentage`.
//!
//! By default every 4 KiB block iocap writes is random and stamped, so an array that compresses
//! or deduplicates cannot shrink it: the figure is the media's, as a page after database
//! encryption or compression looks. Most tables look otherwise, and arrays that compress and
//! deduplicate are faster and hold more on them. These two settings make that measurable:
//!
//! - with `dedupe_pct`, each 4 KiB block of the file a write covers is, with that probability, a
//!   copy of one of [`POOL_BLOCKS`] fixed blocks (made once per worker from its seed), with no
//!   stamp, so it duplicates blocks written elsewhere; the choice hashes the write's sequence
//!   number and the block's place, so it is the same for a given seed and run;
//! - every other block is fresh random bytes with its stamp at its start, and with
//!   `compressible_pct` the last that share of each 4 KiB block of the file is zeros, so a
//!   compressor saves about that share (the pool blocks have the same zero tail).
//!
//! When either is set, every write's blocks are made anew: one pass of the PRNG over the buffer,
//! about 0.5 µs per 4 KiB here. The default path is untouched. Nothing here allocates after
//! [`Shaper::new`] or makes a system call.

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::aligned::AlignedBuf;
use crate::stamp::{fill_random, STAMP_BLOCK};

/// Distinct blocks the duplicates are copies of.
pub const POOL_BLOCKS: usize = 16;

/// Makes the bytes of shaped writes for one worker.
pub struct Shaper {
    compressible_pct: u8,
    dedupe_pct: u8,
    pool: AlignedBuf,
    rng: Xoshiro256PlusPlus,
    salt: u64,
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl Shaper {
    /// A shaper for the given shares (each 0 to 100), or `None` when both are 0: the default
    /// data needs none.
    pub fn new(compressible_pct: u8, dedupe_pct: u8, seed: u64) -> std::io::Result<Option<Self>> {
        if compressible_pct == 0 && dedupe_pct == 0 {
            return Ok(None);
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(mix(seed ^ 0x0DA7_A5E7));
        let mut pool = AlignedBuf::new(POOL_BLOCKS * STAMP_BLOCK)?;
        fill_random(pool.as_mut_slice(), &mut rng);
        let zeros = Self::zeros(compressible_pct);
        for b in pool.as_mut_slice().chunks_exact_mut(STAMP_BLOCK) {
            b[STAMP_BLOCK - zeros..].fill(0);
        }
        Ok(Some(Self {
            compressible_pct: compressible_pct.min(100),
            dedupe_pct: dedupe_pct.min(100),
            pool,
            rng,
            salt: mix(seed),
        }))
    }

    /// Zero bytes at the end of each 4 KiB block.
    fn zeros(pct: u8) -> usize {
        STAMP_BLOCK * usize::from(pct.min(100)) / 100
    }

    /// Fills `buf`, a write of its length at `offset`, the `seq`-th of its worker, block by
    /// block of the file (a block cut by the write's ends is shaped in part).
    pub fn fill(&mut self, buf: &mut [u8], offset: u64, seq: u64) {
        let zeros = Self::zeros(self.compressible_pct);
        let len = buf.len() as u64;
        let mut pos = 0usize;
        while pos < buf.len() {
            let at = offset + pos as u64;
            let in_block = (at % STAMP_BLOCK as u64) as usize;
            let end = (pos + STAMP_BLOCK - in_block).min(buf.len());
            let chunk = &mut buf[pos..end];
            let h = mix(self.salt ^ seq.rotate_left(17) ^ (at / STAMP_BLOCK as u64));
            if h % 100 < u64::from(self.dedupe_pct) {
                let k = ((h >> 32) as usize) % POOL_BLOCKS;
                let from = k * STAMP_BLOCK + in_block;
                chunk.copy_from_slice(&self.pool.as_slice()[from..from + chunk.len()]);
            } else {
                fill_random(chunk, &mut self.rng);
                // the zero tail of this block of the file, where the write covers it
                let tail = (STAMP_BLOCK - zeros).saturating_sub(in_block);
                if tail < chunk.len() {
                    chunk[tail..].fill(0);
                }
                crate::stamp::stamp_one(chunk, at, seq, len);
            }
            pos = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_needs_no_shaper() {
        assert!(Shaper::new(0, 0, 1).unwrap().is_none());
    }

    #[test]
    fn compressible_blocks_end_in_zeros_after_their_stamp() {
        let mut s = Shaper::new(50, 0, 1).unwrap().unwrap();
        let mut buf = vec![0xAAu8; 8192];
        s.fill(&mut buf, 1 << 20, 5);
        for b in buf.chunks(4096) {
            assert!(b[2048..].iter().all(|x| *x == 0));
            assert!(b[32..2048].iter().any(|x| *x != 0));
            assert_eq!(&b[..8], &crate::buffers::WRITE_STAMP_MAGIC.to_le_bytes());
        }
        // a write that starts inside a block: zeros where the file's block ends
        let mut buf = vec![0xAAu8; 4096];
        s.fill(&mut buf, 1024, 6);
        // file bytes 1024..4096 then 4096..5120: zeros from file byte 2048 and 6144
        assert!(buf[1024..3072].iter().all(|x| *x == 0));
        assert!(
            buf[3072..3104].iter().any(|x| *x != 0),
            "the second block's stamp"
        );
    }

    #[test]
    fn duplicates_are_pool_copies_and_the_rest_is_unique() {
        let mut s = Shaper::new(0, 100, 1).unwrap().unwrap();
        let mut buf = vec![0u8; 4096 * 64];
        s.fill(&mut buf, 0, 1);
        let pool: Vec<&[u8]> = s.pool.as_slice().chunks(4096).collect();
        assert!(buf.chunks(4096).all(|b| pool.contains(&b)));
        let mut s = Shaper::new(0, 1, 1).unwrap().unwrap();
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        s.fill(&mut a, 0, 1);
        s.fill(&mut b, 0, 2);
        assert_ne!(a, b, "a rewrite of the same block is new data");
    }
}

//! Where each I/O goes and whether it reads or writes.
//!
//! Random offsets are uniform over every `align`-aligned position where a whole block fits in
//! the target range (Lemire's multiply-shift: no division, bias below 2^-24 for any range under
//! 1 PiB). Sequential streams of different threads start at evenly spread offsets and wrap at the
//! end of the range, so N threads never read the same blocks in lock step. Every offset is
//! checked against the range by construction: `offset + bs <= range`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A sequential stream shared by the contexts of one logical thread (the psync engine emulates a
/// queue depth of N with N contexts that must still walk one stream).
pub type SeqCursor = Arc<AtomicU64>;

pub struct OffsetGen {
    random: bool,
    bs: u64,
    align: u64,
    /// Random: number of aligned positions. Sequential: number of whole blocks.
    positions: u64,
    start_block: u64,
    cursor: SeqCursor,
    write_threshold: u64,
    rng: Xoshiro256PlusPlus,
}

impl OffsetGen {
    /// `stream` of `streams`: this thread's index among the target's threads.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        random: bool,
        range: u64,
        bs: u64,
        align: u64,
        write_pct: u8,
        seed: u64,
        stream: u64,
        streams: u64,
        cursor: SeqCursor,
    ) -> Self {
        assert!(
            bs > 0 && align > 0 && range >= bs,
            "validated by the planner"
        );
        let positions = if random {
            (range - bs) / align + 1
        } else {
            range / bs
        };
        let start_block = if random {
            0
        } else {
            positions * stream / streams.max(1)
        };
        // write if the top 32 bits of a draw, scaled to 0..100, fall below write_pct
        let write_threshold = (u64::from(write_pct) << 32) / 100;
        Self {
            random,
            bs,
            align,
            positions,
            start_block,
            cursor,
            write_threshold,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// The next offset, in bytes.
    #[inline]
    pub fn next_offset(&mut self) -> u64 {
        if self.random {
            let k = ((u128::from(self.rng.next_u64()) * u128::from(self.positions)) >> 64) as u64;
            k * self.align
        } else {
            let n = self.cursor.fetch_add(1, Ordering::Relaxed);
            ((self.start_block + n) % self.positions) * self.bs
        }
    }

    /// Whether the next I/O writes, for the configured write share.
    #[inline]
    pub fn next_is_write(&mut self) -> bool {
        match self.write_threshold {
            0 => false,
            t if t >= 1 << 32 => true,
            t => (self.rng.next_u64() >> 32) < t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(random: bool, range: u64, bs: u64, align: u64, stream: u64, streams: u64) -> OffsetGen {
        OffsetGen::new(
            random,
            range,
            bs,
            align,
            0,
            42,
            stream,
            streams,
            Arc::default(),
        )
    }

    #[test]
    fn random_offsets_stay_aligned_and_inside() {
        let (range, bs, align) = (10 * 4096 + 100, 8192, 4096);
        let mut g = gen(true, range, bs, align, 0, 1);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let o = g.next_offset();
            assert_eq!(o % align, 0);
            assert!(o + bs <= range, "{o}");
            seen.insert(o);
        }
        // positions 0..=8 (9 of them): all reached
        assert_eq!(seen.len(), 9);
    }

    #[test]
    fn random_offsets_are_uniform() {
        let mut g = gen(true, 100 * 4096, 4096, 4096, 0, 1);
        let mut counts = [0u32; 100];
        let n = 200_000;
        for _ in 0..n {
            counts[(g.next_offset() / 4096) as usize] += 1;
        }
        let expect = n as f64 / 100.0;
        let chi2: f64 = counts
            .iter()
            .map(|c| (*c as f64 - expect).powi(2) / expect)
            .sum();
        // 99 degrees of freedom: the 99.9th percentile is about 148
        assert!(chi2 < 148.0, "chi2 {chi2}");
    }

    #[test]
    fn sequential_streams_spread_and_wrap() {
        let range = 8 * 65536;
        let mut a = gen(false, range, 65536, 65536, 0, 2);
        let mut b = gen(false, range, 65536, 65536, 1, 2);
        assert_eq!(a.next_offset(), 0);
        assert_eq!(b.next_offset(), 4 * 65536);
        let seq: Vec<u64> = (0..8).map(|_| a.next_offset() / 65536).collect();
        assert_eq!(seq, vec![1, 2, 3, 4, 5, 6, 7, 0]);
    }

    #[test]
    fn shared_cursor_walks_one_stream() {
        let cursor = SeqCursor::default();
        let mut a = OffsetGen::new(false, 1 << 20, 4096, 4096, 0, 1, 0, 1, cursor.clone());
        let mut b = OffsetGen::new(false, 1 << 20, 4096, 4096, 0, 2, 0, 1, cursor);
        let offs = [
            a.next_offset(),
            b.next_offset(),
            a.next_offset(),
            b.next_offset(),
        ];
        assert_eq!(offs, [0, 4096, 8192, 12288]);
    }

    #[test]
    fn write_share_matches() {
        for pct in [0u8, 30, 70, 100] {
            let mut g = OffsetGen::new(true, 1 << 20, 4096, 4096, pct, 5, 0, 1, Arc::default());
            let w = (0..100_000).filter(|_| g.next_is_write()).count();
            let share = w as f64 / 1000.0;
            assert!((share - f64::from(pct)).abs() < 1.0, "{pct}: {share}");
        }
    }
}

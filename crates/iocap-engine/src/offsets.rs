//! Where each I/O goes, how long it is and whether it reads or writes.
//!
//! Sizes: a fixed block size, or a block-size mix from which each I/O draws its length by
//! weight (a cumulative table built once, when the generator is made; a draw is one PRNG step and
//! a scan of a few entries). A fixed size draws nothing, so its offsets are the same as ever for
//! a given seed.
//!
//! Random offsets are uniform over every `align`-aligned position where the whole I/O fits in
//! the target range, per size (Lemire's multiply-shift: no division, bias below 2^-24 for any
//! range under 1 PiB). Sequential streams walk a byte cursor that advances by each I/O's own
//! length, so a stream of mixed sizes (a database log) is contiguous; an I/O that would cross the
//! end of the range starts again at 0 instead. Streams of different threads start at evenly
//! spread offsets, so N threads never read the same blocks in lock step. DiskSpd's streams
//! ([`iocap_model::SeqStreams`]) differ in three ways, each a parameter of the same walk: a
//! fixed step (`-s<stride>`), thread `k` starting at `k × -T`, and the start again at the
//! thread's first offset modulo the step; `-si`'s threads share one cursor. Every offset is
//! inside the range by construction: `offset + len <= range`.
//!
//! DiskSpd's other patterns are variants chosen when the generator is made ([`Pattern`]), so
//! the random and sequential paths are what they were: `-rs` (each I/O random with a
//! probability, else following the one before), `-p` (each queue slot walks the stream on its
//! own from the thread's first offset) and `-B` (every offset moved up by the base, added last:
//! the range the walk sees is the region's length, so an offset stays in `[base, base +
//! range)`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use iocap_model::{BsWeight, JobSpec};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The next byte offset of a sequential stream, shared by the contexts of one logical thread
/// (the psync engine emulates a queue depth of N with N contexts that must still walk one
/// stream). Make it with [`seq_cursor`].
pub type SeqCursor = Arc<AtomicU64>;

/// The sizes of a spec with their weights: its mix, or its one block size.
pub fn spec_sizes(spec: &JobSpec) -> Vec<BsWeight> {
    if spec.bs_split.is_empty() {
        vec![BsWeight {
            bs_bytes: spec.bs_bytes,
            weight: 1,
        }]
    } else {
        spec.bs_split.clone()
    }
}

/// The largest size every offset of a sequential stream of these sizes is a multiple of: their
/// greatest common divisor (each is a multiple of the O_DIRECT alignment, so the gcd is too).
pub fn granule(sizes: &[BsWeight]) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    sizes.iter().fold(0, |g, s| gcd(g, s.bs_bytes)).max(1)
}

/// A sequential cursor for stream `stream` of `streams` over `range` bytes: it starts at an
/// evenly spread offset, rounded down to `granule`.
pub fn seq_cursor(range: u64, granule: u64, stream: u64, streams: u64) -> SeqCursor {
    let spread = (u128::from(range) * u128::from(stream) / u128::from(streams.max(1))) as u64;
    let g = granule.max(1);
    Arc::new(AtomicU64::new(spread / g * g))
}

/// How a sequential stream walks: by each I/O's length from an evenly spread start (iocap's),
/// or by DiskSpd's fixed step from thread `k × -T`; and what the context does besides (the
/// base offset, DiskSpd's patterns, the think time), all decided by the planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Walk {
    /// The step between I/O starts; `None`: each I/O's own length.
    pub step: Option<u64>,
    /// Where an I/O that would cross the end of the range starts instead.
    pub wrap_to: u64,
    /// Added to every offset: where the target's test range starts (DiskSpd's `-B`).
    pub base: u64,
    pub pattern: Pattern,
    /// DiskSpd's `-i`/`-j` for the worker of this context: after this many completions, a
    /// pause of this many ns. It travels with the walk because the worker's configuration is
    /// built elsewhere from the plan; the worker reads it once, at its start.
    pub think: Option<(u32, u64)>,
}

/// DiskSpd's offset patterns beyond plain random and sequential.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pattern {
    #[default]
    Plain,
    /// `-rs<pct>`: each I/O random with this probability in percent, else following the one
    /// before by the step (the alignment).
    Mixed { random_pct: u8 },
    /// `-p`: each of `slots` queue slots walks the stream on its own from the first offset.
    Parallel { slots: u32 },
}

/// How `next_io` chooses an offset; fixed when the generator is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Random,
    Sequential,
    Mixed,
    Parallel,
}

/// `write_threshold` for writes every time (`write_pct` 100).
const ALWAYS: u64 = 1 << 32;
/// `write_threshold` of a `-rs` mix of reads and writes: a following I/O repeats the last.
const MIXED_RUNS: u64 = u64::MAX;

impl Walk {
    /// Thread `thread`'s walk and first offset under DiskSpd's `streams`.
    pub fn diskspd(s: &iocap_model::SeqStreams, thread: u64) -> (Walk, u64) {
        let start = if s.shared {
            0
        } else {
            thread.saturating_mul(s.thread_stride_bytes)
        };
        let step = s.stride_bytes.max(1);
        let walk = Walk {
            step: Some(step),
            wrap_to: start % step,
            ..Walk::default()
        };
        (walk, start)
    }
}

pub struct OffsetGen {
    mode: Mode,
    range: u64,
    align: u64,
    /// I/O length of each size of the mix.
    lens: Box<[u32]>,
    /// Running sum of the weights, for the draw.
    cum: Box<[u64]>,
    /// Random: the number of aligned positions where an I/O of each size fits.
    positions: Box<[u64]>,
    cursor: SeqCursor,
    walk: Walk,
    write_threshold: u64,
    rng: Xoshiro256PlusPlus,
    /// `-rs`: the threshold of a random I/O, the write share's own threshold (`write_threshold`
    /// is then [`MIXED_RUNS`]), whether the last random I/O wrote, and the kind of the next
    /// I/O when `next_is_write` has drawn it.
    random_threshold: u64,
    mixed_write_threshold: u64,
    last_write: bool,
    next_random: Option<bool>,
    /// `-p`: each slot's next offset, relative to the base.
    slots: Box<[u64]>,
}

impl OffsetGen {
    /// `sizes` must be non-empty with non-zero weights, every size at most `range` and at most
    /// `u32::MAX` (all validated by the planner).
    pub fn new(
        random: bool,
        range: u64,
        sizes: &[BsWeight],
        align: u64,
        write_pct: u8,
        seed: u64,
        cursor: SeqCursor,
    ) -> Self {
        assert!(
            !sizes.is_empty()
                && align > 0
                && sizes.iter().all(|s| s.bs_bytes > 0
                    && s.bs_bytes <= range
                    && s.bs_bytes <= u64::from(u32::MAX)
                    && s.weight > 0),
            "validated by the planner"
        );
        let lens: Box<[u32]> = sizes.iter().map(|s| s.bs_bytes as u32).collect();
        let cum: Box<[u64]> = sizes
            .iter()
            .scan(0u64, |acc, s| {
                *acc += u64::from(s.weight);
                Some(*acc)
            })
            .collect();
        let positions = sizes
            .iter()
            .map(|s| iocap_model::places::aligned_positions(range, s.bs_bytes, align))
            .collect();
        // write if the top 32 bits of a draw, scaled to 0..100, fall below write_pct
        let write_threshold = (u64::from(write_pct.min(100)) << 32) / 100;
        Self {
            mode: if random {
                Mode::Random
            } else {
                Mode::Sequential
            },
            range,
            align,
            lens,
            cum,
            positions,
            cursor,
            walk: Walk::default(),
            write_threshold,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            random_threshold: 0,
            mixed_write_threshold: 0,
            last_write: false,
            next_random: None,
            slots: Box::new([]),
        }
    }

    /// The same generator walking its sequential stream as `walk` says. A `-rs` mix starts its
    /// sequential part at a random offset, as DiskSpd does; `-p` starts every slot at the
    /// cursor's offset (the thread's first).
    pub fn with_walk(mut self, walk: Walk) -> Self {
        self.walk = walk;
        match walk.pattern {
            Pattern::Plain => {}
            Pattern::Mixed { random_pct } => {
                self.mode = Mode::Mixed;
                self.random_threshold = (u64::from(random_pct.min(100)) << 32) / 100;
                let start = self.random_offset(0);
                self.cursor.store(start, Ordering::Relaxed);
                if self.write_threshold != 0 && self.write_threshold < ALWAYS {
                    self.mixed_write_threshold = self.write_threshold;
                    self.write_threshold = MIXED_RUNS;
                    self.last_write = (self.rng.next_u64() >> 32) < self.mixed_write_threshold;
                }
            }
            Pattern::Parallel { slots } => {
                self.mode = Mode::Parallel;
                let start = self.cursor.load(Ordering::Relaxed);
                self.slots = vec![start; slots.max(1) as usize].into_boxed_slice();
            }
        }
        self
    }

    /// DiskSpd's `-i`/`-j` for this generator's worker (see [`Walk::think`]).
    pub fn think(&self) -> Option<(u32, u64)> {
        self.walk.think
    }

    /// The next I/O for queue slot `slot` (below the depth the walk was made for): its offset
    /// and length in bytes.
    #[inline]
    pub fn next_io(&mut self, slot: usize) -> (u64, u32) {
        let i = self.pick_size();
        let len = self.lens[i];
        let off = match self.mode {
            Mode::Random => self.random_offset(i),
            Mode::Sequential => self.advance(u64::from(len)),
            Mode::Mixed => self.mixed(i, u64::from(len)),
            Mode::Parallel => self.parallel(slot, u64::from(len)),
        };
        (self.walk.base + off, len)
    }

    /// A uniform aligned offset where an I/O of size `i` fits.
    #[inline]
    fn random_offset(&mut self, i: usize) -> u64 {
        let k = ((u128::from(self.rng.next_u64()) * u128::from(self.positions[i])) >> 64) as u64;
        k * self.align
    }

    /// `-rs`: random with its probability (drawn here unless `next_is_write` drew it), and
    /// the sequential part then goes on from there.
    #[inline(never)]
    fn mixed(&mut self, i: usize, len: u64) -> u64 {
        let random = match self.next_random.take() {
            Some(r) => r,
            None => self.draw_random(),
        };
        if !random {
            return self.advance(len);
        }
        let off = self.random_offset(i);
        let step = self.walk.step.unwrap_or(len);
        self.cursor.store(off + step, Ordering::Relaxed);
        off
    }

    fn draw_random(&mut self) -> bool {
        (self.rng.next_u64() >> 32) < self.random_threshold
    }

    /// `-p`: slot `slot`'s own walk; wraps as the stream does.
    #[inline(never)]
    fn parallel(&mut self, slot: usize, len: u64) -> u64 {
        let step = self.walk.step.unwrap_or(len);
        let last = self.slots.len() - 1;
        let next = self.slots[slot.min(last)];
        let off = if next.saturating_add(len) <= self.range {
            next
        } else {
            self.start_again(len)
        };
        self.slots[slot.min(last)] = off.saturating_add(step);
        off
    }

    #[inline]
    fn pick_size(&mut self) -> usize {
        if self.lens.len() == 1 {
            return 0;
        }
        let total = self.cum[self.cum.len() - 1];
        let x = ((u128::from(self.rng.next_u64()) * u128::from(total)) >> 64) as u64;
        // x < total = the last entry, so the scan always finds one
        self.cum.iter().position(|&c| x < c).unwrap_or(0)
    }

    /// Claims `len` bytes of the stream: at the cursor, or where the walk starts again when
    /// they would cross the end (at 0 if even that would); the cursor moves on by the step.
    #[inline]
    fn advance(&self, len: u64) -> u64 {
        let step = self.walk.step.unwrap_or(len);
        let mut cur = self.cursor.load(Ordering::Relaxed);
        loop {
            let off = if cur.saturating_add(len) <= self.range {
                cur
            } else {
                self.start_again(len)
            };
            match self.cursor.compare_exchange_weak(
                cur,
                off.saturating_add(step),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return off,
                Err(now) => cur = now,
            }
        }
    }

    /// Where an I/O of `len` bytes that would cross the end of the range starts instead: the
    /// walk's wrap point, or 0 if even that would cross it. Once per pass, so kept out of line.
    #[cold]
    fn start_again(&self, len: u64) -> u64 {
        if self.walk.wrap_to.saturating_add(len) <= self.range {
            self.walk.wrap_to
        } else {
            0
        }
    }

    /// Whether the next I/O writes, for the configured write share.
    #[inline]
    pub fn next_is_write(&mut self) -> bool {
        match self.write_threshold {
            0 => false,
            ALWAYS => true,
            t if t < ALWAYS => (self.rng.next_u64() >> 32) < t,
            _ => self.mixed_is_write(),
        }
    }

    /// `-rs` with reads and writes: the next I/O's kind is drawn first; a random one draws
    /// read or write, a following one repeats the last (DiskSpd keeps sequential runs of one
    /// kind).
    #[inline(never)]
    fn mixed_is_write(&mut self) -> bool {
        let random = self.draw_random();
        self.next_random = Some(random);
        if random {
            self.last_write = (self.rng.next_u64() >> 32) < self.mixed_write_threshold;
        }
        self.last_write
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(bs: u64) -> Vec<BsWeight> {
        vec![BsWeight {
            bs_bytes: bs,
            weight: 1,
        }]
    }

    fn gen(random: bool, range: u64, bs: u64, align: u64, stream: u64, streams: u64) -> OffsetGen {
        let cursor = seq_cursor(range, bs, stream, streams);
        OffsetGen::new(random, range, &one(bs), align, 0, 42, cursor)
    }

    fn off(g: &mut OffsetGen) -> u64 {
        g.next_io(0).0
    }

    #[test]
    fn random_offsets_stay_aligned_and_inside() {
        let (range, bs, align) = (10 * 4096 + 100, 8192, 4096);
        let mut g = gen(true, range, bs, align, 0, 1);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let (o, len) = g.next_io(0);
            assert_eq!(len, 8192);
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
            counts[(off(&mut g) / 4096) as usize] += 1;
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
        assert_eq!(off(&mut a), 0);
        assert_eq!(off(&mut b), 4 * 65536);
        let seq: Vec<u64> = (0..8).map(|_| off(&mut a) / 65536).collect();
        assert_eq!(seq, vec![1, 2, 3, 4, 5, 6, 7, 0]);
    }

    #[test]
    fn shared_cursor_walks_one_stream() {
        let cursor = seq_cursor(1 << 20, 4096, 0, 1);
        let mut a = OffsetGen::new(false, 1 << 20, &one(4096), 4096, 0, 1, cursor.clone());
        let mut b = OffsetGen::new(false, 1 << 20, &one(4096), 4096, 0, 2, cursor);
        let offs = [off(&mut a), off(&mut b), off(&mut a), off(&mut b)];
        assert_eq!(offs, [0, 4096, 8192, 12288]);
    }

    fn mix(parts: &[(u64, u32)]) -> Vec<BsWeight> {
        parts
            .iter()
            .map(|&(bs_bytes, weight)| BsWeight { bs_bytes, weight })
            .collect()
    }

    #[test]
    fn mixed_sizes_follow_their_weights_and_fit() {
        let sizes = mix(&[(8192, 70), (65536, 30)]);
        let range = 1 << 20;
        let mut g = OffsetGen::new(true, range, &sizes, 4096, 0, 3, seq_cursor(range, 1, 0, 1));
        let n = 100_000;
        let mut big = 0;
        for _ in 0..n {
            let (o, len) = g.next_io(0);
            assert!(len == 8192 || len == 65536);
            assert_eq!(o % 4096, 0);
            assert!(o + u64::from(len) <= range);
            big += usize::from(len == 65536);
        }
        let share = big as f64 / n as f64;
        assert!((share - 0.3).abs() < 0.01, "{share}");
    }

    #[test]
    fn mixed_sequential_stream_is_contiguous_and_wraps_inside() {
        let sizes = mix(&[(512, 10), (4096, 40), (61440, 50)]);
        assert_eq!(granule(&sizes), 512);
        let range = 1 << 20;
        let mut g = OffsetGen::new(
            false,
            range,
            &sizes,
            512,
            100,
            9,
            seq_cursor(range, 512, 0, 1),
        );
        let mut expect = 0;
        let mut wraps = 0;
        for _ in 0..10_000 {
            let (o, len) = g.next_io(0);
            let len = u64::from(len);
            if o != expect {
                // only a wrap breaks the stream, and only when the next I/O would not fit
                assert_eq!(o, 0);
                assert!(expect + len > range, "{expect} + {len}");
                wraps += 1;
            }
            assert!(o + len <= range);
            expect = o + len;
        }
        assert!(wraps > 5, "{wraps}");
    }

    #[test]
    fn stream_starts_respect_the_granule() {
        let c = seq_cursor(10 * 61440 + 512, 4096, 1, 3);
        assert_eq!(c.load(Ordering::Relaxed) % 4096, 0);
        assert_eq!(seq_cursor(1000, 512, 0, 4).load(Ordering::Relaxed), 0);
    }

    #[test]
    fn write_share_matches() {
        for pct in [0u8, 30, 70, 100] {
            let mut g = OffsetGen::new(
                true,
                1 << 20,
                &one(4096),
                4096,
                pct,
                5,
                seq_cursor(1 << 20, 4096, 0, 1),
            );
            let w = (0..100_000).filter(|_| g.next_is_write()).count();
            let share = w as f64 / 1000.0;
            assert!((share - f64::from(pct)).abs() < 1.0, "{pct}: {share}");
        }
    }

    /// Thread `k`'s generator under DiskSpd's `streams` over `range` bytes of `bs`-byte I/Os,
    /// on `cursor` when given (a shared `-si` stream), else on its own.
    fn diskspd_gen(
        streams: iocap_model::SeqStreams,
        k: u64,
        range: u64,
        bs: u64,
        cursor: Option<SeqCursor>,
    ) -> OffsetGen {
        let (walk, start) = Walk::diskspd(&streams, k);
        let cursor = cursor.unwrap_or_else(|| Arc::new(AtomicU64::new(start)));
        OffsetGen::new(false, range, &one(bs), 1, 0, 1, cursor).with_walk(walk)
    }

    fn offsets(g: &mut OffsetGen, n: usize) -> Vec<u64> {
        (0..n).map(|_| off(g)).collect()
    }

    fn streams(stride: u64, thread_stride: u64) -> iocap_model::SeqStreams {
        iocap_model::SeqStreams {
            stride_bytes: stride,
            thread_stride_bytes: thread_stride,
            shared: false,
        }
    }

    /// DiskSpd's own cases (its unit tests' facts), `-c3000 -b1000`: a thread stride smaller
    /// than the step (`-T250 -s500`), thread 1 starting again at its first offset; a larger one
    /// (`-T750`), starting again at 750 mod 500; and `-T500 -s250`, where thread 1 starts again
    /// at 0.
    #[test]
    fn diskspd_streams_start_at_k_times_t_and_start_again_at_it_modulo_the_step() {
        let g = |s, t, k| diskspd_gen(streams(s, t), k, 3000, 1000, None);
        assert_eq!(
            offsets(&mut g(500, 250, 0), 7),
            [0, 500, 1000, 1500, 2000, 0, 500]
        );
        assert_eq!(
            offsets(&mut g(500, 250, 1), 6),
            [250, 750, 1250, 1750, 250, 750]
        );
        assert_eq!(
            offsets(&mut g(500, 750, 1), 6),
            [750, 1250, 1750, 250, 750, 1250]
        );
        assert_eq!(
            offsets(&mut g(250, 500, 1), 9),
            [500, 750, 1000, 1250, 1500, 1750, 2000, 0, 250]
        );
    }

    /// `-si`: threads share one stream, so each takes the next block whoever took the last
    /// (DiskSpd's interlocked case: 1000-byte blocks every 500 bytes over 2000 bytes).
    #[test]
    fn an_interlocked_stream_is_shared_block_by_block() {
        let s = iocap_model::SeqStreams {
            shared: true,
            ..streams(500, 0)
        };
        let shared = Arc::new(AtomicU64::new(0));
        let mut a = diskspd_gen(s, 0, 2000, 1000, Some(shared.clone()));
        let mut b = diskspd_gen(s, 1, 2000, 1000, Some(shared));
        assert_eq!(
            [
                off(&mut a),
                off(&mut a),
                off(&mut b),
                off(&mut a),
                off(&mut b)
            ],
            [0, 500, 1000, 0, 500]
        );
    }

    /// `-F8 -T1b -s8b`: eight threads, each every eighth block from its own, cover every block
    /// of the range once per pass between them, and each keeps its own lane.
    #[test]
    fn the_thread_stride_interleave_covers_each_block_once_per_pass() {
        let (bs, range) = (4096u64, 64 * 4096);
        let mut seen = vec![0u32; 64];
        for k in 0..8 {
            let mut g = diskspd_gen(streams(8 * bs, bs), k, range, bs, None);
            for o in offsets(&mut g, 16) {
                assert_eq!(o / bs % 8, k, "thread {k} left its lane at {o}");
                seen[(o / bs) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 2), "{seen:?}");
    }

    /// `-B`: every offset of every pattern lies in `[base, base + range)`.
    #[test]
    fn a_base_moves_every_offset_into_the_region() {
        let (base, range, bs) = (1 << 20, 64 * 4096, 4096u64);
        let walk = |pattern| Walk {
            base,
            pattern,
            step: Some(bs),
            ..Walk::default()
        };
        for (random, pattern) in [
            (true, Pattern::Plain),
            (false, Pattern::Plain),
            (true, Pattern::Mixed { random_pct: 50 }),
            (false, Pattern::Parallel { slots: 4 }),
        ] {
            let mut g = OffsetGen::new(
                random,
                range,
                &one(bs),
                bs,
                0,
                3,
                seq_cursor(range, bs, 0, 1),
            )
            .with_walk(walk(pattern));
            for k in 0..1000 {
                let (o, len) = g.next_io(k % 4);
                assert!(
                    o >= base && o + u64::from(len) <= base + range,
                    "{pattern:?}: {o}"
                );
                assert_eq!((o - base) % bs, 0);
            }
        }
        // the sequential stream starts at the base
        let mut g = OffsetGen::new(
            false,
            range,
            &one(bs),
            bs,
            0,
            3,
            seq_cursor(range, bs, 0, 1),
        )
        .with_walk(walk(Pattern::Plain));
        assert_eq!(offsets(&mut g, 3), [base, base + bs, base + 2 * bs]);
    }

    fn mixed_gen(random_pct: u8, write_pct: u8, range: u64) -> OffsetGen {
        let walk = Walk {
            step: Some(4096),
            pattern: Pattern::Mixed { random_pct },
            ..Walk::default()
        };
        OffsetGen::new(
            true,
            range,
            &one(4096),
            4096,
            write_pct,
            11,
            seq_cursor(range, 1, 0, 1),
        )
        .with_walk(walk)
    }

    /// `-rs30`: about 30 % of I/Os land anywhere, the rest follow the one before by the step.
    #[test]
    fn a_random_share_follows_the_one_before_otherwise() {
        let range = 1 << 30;
        let mut g = mixed_gen(30, 0, range);
        let (mut prev, mut jumps) = (off(&mut g), 0);
        let n = 100_000;
        for _ in 0..n {
            let o = off(&mut g);
            assert!(o % 4096 == 0 && o + 4096 <= range);
            // a random I/O may land right after the one before, rarely on a 1 GiB range
            if o != prev + 4096 {
                jumps += 1;
            }
            prev = o;
        }
        let share = f64::from(jumps) / f64::from(n);
        assert!((share - 0.3).abs() < 0.01, "{share}");
        // -rs100 is all random; the sequential part starts again at 0 at the end
        let mut g = mixed_gen(100, 0, range);
        let o: Vec<u64> = offsets(&mut g, 100);
        assert!(o.windows(2).filter(|w| w[1] == w[0] + 4096).count() < 3);
        let mut g = mixed_gen(1, 0, 4 * 4096);
        assert!(offsets(&mut g, 100).iter().all(|&o| o < 4 * 4096));
    }

    /// `-rs` with writes: an I/O that follows the one before repeats its read or write, as
    /// DiskSpd keeps sequential runs of one kind; the write share holds over the random ones.
    #[test]
    fn a_following_io_repeats_the_kind_of_the_one_before() {
        let range = 1 << 30;
        let mut g = mixed_gen(20, 40, range);
        let (mut prev, mut prev_write) = (0u64, false);
        let (mut random, mut random_writes) = (0u32, 0u32);
        for k in 0..100_000 {
            let w = g.next_is_write();
            let o = off(&mut g);
            if k > 0 && o == prev + 4096 {
                assert_eq!(w, prev_write, "a following I/O changed kind at {o}");
            } else {
                random += 1;
                random_writes += u32::from(w);
            }
            (prev, prev_write) = (o, w);
        }
        let share = f64::from(random_writes) / f64::from(random);
        assert!((share - 0.4).abs() < 0.02, "{share}");
    }

    /// `-p`: every queue slot starts at the thread's first offset and walks on its own, so
    /// the slots' I/Os go to the same offsets together.
    #[test]
    fn parallel_slots_walk_the_stream_each_on_its_own() {
        let walk = Walk {
            step: Some(8192),
            pattern: Pattern::Parallel { slots: 3 },
            ..Walk::default()
        };
        let range = 4 * 8192;
        let mut g = OffsetGen::new(
            false,
            range,
            &one(8192),
            8192,
            0,
            1,
            Arc::new(AtomicU64::new(8192)),
        )
        .with_walk(walk);
        let round = |g: &mut OffsetGen| [0, 1, 2].map(|s| g.next_io(s).0);
        assert_eq!(round(&mut g), [8192; 3]);
        assert_eq!(round(&mut g), [16384; 3]);
        // slot 1 alone moves on
        assert_eq!(g.next_io(1).0, 24576);
        assert_eq!(
            g.next_io(1).0,
            0,
            "starts again at the first offset modulo the step"
        );
        assert_eq!(g.next_io(0).0, 24576);
    }

    #[test]
    fn think_time_travels_with_the_walk() {
        let walk = Walk {
            think: Some((8, 5_000_000)),
            ..Walk::default()
        };
        assert_eq!(
            gen(true, 1 << 20, 4096, 4096, 0, 1).with_walk(walk).think(),
            Some((8, 5_000_000))
        );
        assert_eq!(gen(true, 1 << 20, 4096, 4096, 0, 1).think(), None);
    }
}

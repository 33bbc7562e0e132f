//! Ownership of the memory the kernel reads into and writes from.
//!
//! Contract (the one every `unsafe` in the backends relies on): a [`SlotBuffers`] is allocated
//! once per worker before its first I/O, never resized or moved (the allocation is a raw,
//! page-aligned block, not a `Vec`), and its memory is freed only after every I/O submitted
//! from it has been reaped. I/O reaches the buffers only through an [`crate::IoQueue`], which
//! lends a slot's bytes only while it is idle and, dropped with I/O in flight (a failed
//! drain), marks the buffers [`SlotBuffers::never_free`]: their memory is leaked on purpose
//! rather than freed while the kernel may still write to it.

use std::mem::ManuallyDrop;

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

pub use crate::aligned::{AlignedBuf, BUF_ALIGN};
pub use crate::stamp::{fill_random, stamp_write, whiten, WRITE_STAMP_MAGIC};

/// A benchmark's switch, never a user's: set, writes are stamped but not whitened, and each
/// write test says so in a warning.
pub(crate) const STAMP_ONLY: &str = "IOCAP_BENCH_STAMP_ONLY";

/// `slots` buffers of `bs` bytes each, one per I/O that can be in flight.
pub struct SlotBuffers {
    /// Freed on drop unless [`SlotBuffers::never_free`] was called.
    mem: ManuallyDrop<AlignedBuf>,
    never_free: bool,
    bs: usize,
    slots: usize,
    /// With `--compressible` or `--dedupe`: makes every write's bytes anew.
    shaper: Option<crate::datashape::Shaper>,
    /// Draws each default write's whitening key (see [`whiten`]).
    keys: Xoshiro256PlusPlus,
    /// `IOCAP_BENCH_STAMP_ONLY` (a benchmark's switch, never a user's): writes are stamped
    /// but not whitened, so a slot's bytes repeat from write to write as fio's default data
    /// nearly does (bench/write-data.py, issue 36).
    stamp_only: bool,
}

impl SlotBuffers {
    /// Allocates the buffers and fills them with incompressible bytes from `seed`.
    pub fn new(slots: usize, bs: usize, seed: u64) -> std::io::Result<Self> {
        let stride = bs.div_ceil(BUF_ALIGN) * BUF_ALIGN;
        let size = stride
            .checked_mul(slots)
            .filter(|s| *s > 0)
            .ok_or_else(|| std::io::Error::other("buffer size overflow"))?;
        let mut me = Self {
            mem: ManuallyDrop::new(AlignedBuf::new(size)?),
            never_free: false,
            bs: stride,
            slots,
            shaper: None,
            keys: Xoshiro256PlusPlus::seed_from_u64(!seed),
            stamp_only: std::env::var_os(STAMP_ONLY).is_some(),
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        for s in 0..slots {
            fill_random(me.slot_mut(s), &mut rng);
        }
        me.bs = bs;
        Ok(me)
    }

    fn stride(&self) -> usize {
        self.bs.div_ceil(BUF_ALIGN) * BUF_ALIGN
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Raw pointer to slot `i`, for handing to the kernel.
    #[inline]
    pub fn ptr(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.slots);
        // SAFETY: i < slots, so the offset stays inside the allocation.
        unsafe { self.mem.as_mut_ptr().add(i * self.stride()) }
    }

    /// The bytes of one slot.
    pub fn slot_len(&self) -> usize {
        self.bs
    }

    /// Slot `i`'s bytes. Only for slots with no I/O in flight.
    #[inline]
    pub fn slot(&self, i: usize) -> &[u8] {
        assert!(i < self.slots);
        // SAFETY: inside the allocation (i < slots, each slot `bs` bytes within its stride);
        // the memory is initialised (filled at `new`); no I/O writes it (the caller's rule).
        unsafe { std::slice::from_raw_parts(self.ptr(i), self.bs) }
    }

    /// Keeps the memory allocated for the rest of the process, even once this value is
    /// dropped: the kernel may still read or write it (an I/O queue dropped with I/O in
    /// flight).
    pub fn never_free(&mut self) {
        self.never_free = true;
    }

    /// Whether [`SlotBuffers::never_free`] was called.
    pub fn is_never_freed(&self) -> bool {
        self.never_free
    }

    /// Slot `i` as a mutable slice. Only for slots with no I/O in flight.
    #[inline]
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        // SAFETY: inside the allocation; `&mut self` makes the access exclusive against this
        // process. Against the kernel: while a run holds the buffers, its `IoQueue` holds
        // `&mut self` and lends a slot only while it is idle; outside a run, an I/O is in
        // flight only if an `unsafe` `Backend::queue` call broke its contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(i), self.bs) }
    }

    /// Makes the first `len` bytes of slot `i` the data of a write at `offset`, the `seq`-th of
    /// its worker: by default the slot's bytes are whitened anew (see [`whiten`]) and stamped
    /// (see [`stamp_write`]); with a shape, made anew by the shaper. Whitening also turns every
    /// stamp a previous write left in the slot into noise, so no stale stamp is written to a
    /// place it does not name. Only for slots with no I/O in flight; no allocation.
    #[inline]
    pub fn stamp(&mut self, i: usize, len: usize, offset: u64, seq: u64) {
        if let Some(mut sh) = self.shaper.take() {
            // the whole write is made anew: no stale stamp can remain in it
            sh.fill(&mut self.slot_mut(i)[..len], offset, seq);
            self.shaper = Some(sh);
            return;
        }
        let key = self.keys.next_u64();
        let stamp_only = self.stamp_only;
        let buf = &mut self.slot_mut(i)[..len];
        if !stamp_only {
            whiten(buf, key);
        }
        stamp_write(buf, offset, seq);
    }

    /// Shapes every later write's data (`--compressible`, `--dedupe`; see `datashape`).
    /// Before the first I/O only.
    pub fn set_shape(
        &mut self,
        compressible_pct: u8,
        dedupe_pct: u8,
        seed: u64,
    ) -> std::io::Result<()> {
        self.shaper = crate::datashape::Shaper::new(compressible_pct, dedupe_pct, seed)?;
        Ok(())
    }

    /// One iovec per slot, for io_uring buffer registration.
    #[cfg(target_os = "linux")]
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.slots)
            .map(|i| libc::iovec {
                iov_base: self.ptr(i).cast(),
                iov_len: self.bs,
            })
            .collect()
    }
}

impl Drop for SlotBuffers {
    fn drop(&mut self) {
        if !self.never_free {
            // SAFETY: `mem` is dropped once, here, and not used after.
            unsafe { ManuallyDrop::drop(&mut self.mem) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stamp::WHITEN_SECTOR;

    #[test]
    fn aligned_buffers_are_zeroed_and_rounded_up_to_pages() {
        let b = AlignedBuf::new(8192).unwrap();
        assert_eq!(b.as_slice().as_ptr() as usize % BUF_ALIGN, 0);
        assert!(b.as_slice().iter().all(|x| *x == 0));
        assert_eq!(b.len(), 8192);
        assert_eq!(AlignedBuf::new(1).unwrap().len(), BUF_ALIGN);
        assert_eq!(AlignedBuf::new(0).unwrap().len(), BUF_ALIGN);
        assert!(
            AlignedBuf::new(usize::MAX).is_err(),
            "an error, not a panic"
        );
    }

    #[test]
    fn buffers_are_aligned_and_distinct() {
        let mut b = SlotBuffers::new(4, 8192, 7).unwrap();
        for i in 0..4 {
            assert_eq!(b.ptr(i) as usize % BUF_ALIGN, 0);
        }
        let a = b.slot_mut(0).to_vec();
        let c = b.slot_mut(1).to_vec();
        assert_ne!(a, c);
        assert!(a.iter().any(|x| *x != 0));
    }

    #[test]
    fn odd_sizes_keep_alignment() {
        let b = SlotBuffers::new(3, 512, 1).unwrap();
        assert_eq!(b.ptr(1) as usize - b.ptr(0) as usize, BUF_ALIGN);
        #[cfg(target_os = "linux")]
        assert_eq!(b.iovecs()[2].iov_len, 512);
    }

    #[test]
    fn stamps_every_block() {
        let mut buf = vec![0u8; 16384];
        stamp_write(&mut buf, 1 << 20, 9);
        for k in 0..4 {
            let b = &buf[k * 4096..];
            assert_eq!(
                u64::from_le_bytes(b[0..8].try_into().unwrap()),
                WRITE_STAMP_MAGIC
            );
            assert_eq!(
                u64::from_le_bytes(b[8..16].try_into().unwrap()),
                (1 << 20) + (k as u64) * 4096
            );
            assert_eq!(u64::from_le_bytes(b[24..32].try_into().unwrap()), 16384);
        }
    }

    #[test]
    fn stamps_unaligned_writes_at_their_start_and_at_file_blocks() {
        let stamp_at = |buf: &[u8], pos: usize| {
            (u64::from_le_bytes(buf[pos..pos + 8].try_into().unwrap()) == WRITE_STAMP_MAGIC)
                .then(|| u64::from_le_bytes(buf[pos + 8..pos + 16].try_into().unwrap()))
        };
        // 10 KiB at 3 KiB: the I/O's start, then the file's 4, 8 and 12 KiB boundaries
        let mut buf = vec![0u8; 10240];
        stamp_write(&mut buf, 3072, 1);
        let found: Vec<(usize, u64)> = (0..buf.len())
            .step_by(512)
            .filter_map(|p| stamp_at(&buf, p).map(|o| (p, o)))
            .collect();
        assert_eq!(
            found,
            [(0, 3072), (1024, 4096), (5120, 8192), (9216, 12288)]
        );
        // a single sector is stamped too
        let mut buf = vec![0u8; 512];
        stamp_write(&mut buf, 512, 2);
        assert_eq!(stamp_at(&buf, 0), Some(512));
    }

    #[test]
    fn a_reused_slot_keeps_no_stale_stamps() {
        let mut b = SlotBuffers::new(1, 65536, 3).unwrap();
        let stamps = |b: &mut SlotBuffers, len: usize| -> Vec<(usize, u64)> {
            let buf = &b.slot_mut(0)[..len];
            (0..len)
                .step_by(512)
                .filter(|&p| {
                    u64::from_le_bytes(buf[p..p + 8].try_into().unwrap()) == WRITE_STAMP_MAGIC
                })
                .map(|p| {
                    (
                        p,
                        u64::from_le_bytes(buf[p + 8..p + 16].try_into().unwrap()),
                    )
                })
                .collect()
        };
        b.stamp(0, 65536, 0, 1);
        assert_eq!(stamps(&mut b, 65536).len(), 16);
        b.stamp(0, 8192, 512, 2);
        assert_eq!(stamps(&mut b, 8192), [(0, 512), (3584, 4096), (7680, 8192)]);
        b.stamp(0, 4096, 1024, 3);
        assert_eq!(stamps(&mut b, 4096), [(0, 1024), (3072, 4096)]);
    }

    /// The default data: every write of a reused slot is new at every 512-byte sector, against
    /// every earlier write of any slot, while the stamps still name each write.
    #[test]
    fn a_reused_slot_never_repeats_a_sector() {
        let mut b = SlotBuffers::new(2, 8192, 11).unwrap();
        let mut seen = std::collections::HashSet::new();
        for seq in 0..1000u64 {
            let slot = (seq % 2) as usize;
            b.stamp(slot, 8192, seq * 8192, seq);
            let buf = b.slot_mut(slot);
            assert_eq!(&buf[..8], &WRITE_STAMP_MAGIC.to_le_bytes());
            assert_eq!(u64::from_le_bytes(buf[16..24].try_into().unwrap()), seq);
            for sector in buf.chunks(WHITEN_SECTOR) {
                assert!(seen.insert(sector.to_vec()), "write {seq} repeats a sector");
            }
        }
    }

    #[test]
    fn whitening_changes_every_byte_run_and_is_undone_by_its_key() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let mut buf = vec![0u8; 4096 + 100];
        fill_random(&mut buf, &mut rng);
        let before = buf.clone();
        whiten(&mut buf, 42);
        // no 8-byte word is left as it was (a repeat a compressor could copy)
        let same = buf
            .chunks(8)
            .zip(before.chunks(8))
            .filter(|(a, b)| a == b)
            .count();
        assert_eq!(same, 0);
        whiten(&mut buf, 42);
        assert_eq!(buf, before);
    }
}

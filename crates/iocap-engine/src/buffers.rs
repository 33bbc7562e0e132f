//! Ownership of the memory the kernel reads into and writes from.
//!
//! Contract (the one every `unsafe` in the backends relies on): a [`SlotBuffers`] is allocated
//! once per worker before its first I/O, never resized or moved (the allocation is a raw,
//! page-aligned block, not a `Vec`), and is dropped only after every I/O submitted from it has
//! been reaped. The worker loop guarantees the last part by draining before it returns; if a
//! drain fails the worker leaks the buffers on purpose rather than free memory the kernel may
//! still write to.

use std::alloc::{alloc_zeroed, dealloc, Layout};

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Alignment of every buffer: a page, which satisfies O_DIRECT on any logical block size.
pub const BUF_ALIGN: usize = 4096;

/// `slots` buffers of `bs` bytes each, one per I/O that can be in flight.
pub struct SlotBuffers {
    ptr: *mut u8,
    layout: Layout,
    bs: usize,
    slots: usize,
}

// SAFETY: the allocation is owned exclusively by this value; moving it to another thread moves
// that ownership.
unsafe impl Send for SlotBuffers {}

impl SlotBuffers {
    /// Allocates the buffers and fills them with incompressible bytes from `seed`.
    pub fn new(slots: usize, bs: usize, seed: u64) -> std::io::Result<Self> {
        let stride = bs.div_ceil(BUF_ALIGN) * BUF_ALIGN;
        let size = stride
            .checked_mul(slots)
            .filter(|s| *s > 0)
            .ok_or_else(|| std::io::Error::other("buffer size overflow"))?;
        let layout = Layout::from_size_align(size, BUF_ALIGN)
            .map_err(|_| std::io::Error::other("bad buffer layout"))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!("cannot allocate {size} bytes of I/O buffers"),
            ));
        }
        let mut me = Self {
            ptr,
            layout,
            bs: stride,
            slots,
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
        unsafe { self.ptr.add(i * self.stride()) }
    }

    /// Slot `i` as a mutable slice. Only for slots with no I/O in flight.
    #[inline]
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        // SAFETY: inside the allocation; `&mut self` and the no-I/O-in-flight rule make the
        // access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(i), self.bs) }
    }

    /// One iovec per slot, for io_uring buffer registration.
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
        // SAFETY: allocated in `new` with this layout; no I/O is in flight (module contract).
        unsafe { dealloc(self.ptr, self.layout) };
    }
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

/// Magic at the start of every 4 KiB block iocap writes during a test ("IOCAPWR1").
pub const WRITE_STAMP_MAGIC: u64 = u64::from_le_bytes(*b"IOCAPWR1");
/// Size of the blocks that carry a write stamp.
pub const STAMP_BLOCK: usize = 4096;

/// Stamps each 4 KiB block (or the whole buffer when smaller) with the magic, the file offset
/// it is meant for and a sequence number. Every block iocap writes is then unique, so arrays that
/// deduplicate or compress cannot flatter the result, and a test can prove where writes landed.
#[inline]
pub fn stamp_write(buf: &mut [u8], offset: u64, seq: u64) {
    let mut off = 0;
    while off < buf.len() {
        let b = &mut buf[off..];
        if b.len() < 24 {
            break;
        }
        b[0..8].copy_from_slice(&WRITE_STAMP_MAGIC.to_le_bytes());
        b[8..16].copy_from_slice(&(offset + off as u64).to_le_bytes());
        b[16..24].copy_from_slice(&seq.to_le_bytes());
        off += STAMP_BLOCK;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        }
    }
}

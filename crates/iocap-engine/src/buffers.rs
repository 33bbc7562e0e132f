//! Ownership of the memory the kernel reads into and writes from.
//!
//! Contract (the one every `unsafe` in the backends relies on): a [`SlotBuffers`] is allocated
//! once per worker before its first I/O, never resized or moved (the allocation is a raw,
//! page-aligned block, not a `Vec`), and is dropped only after every I/O submitted from it has
//! been reaped. The worker loop guarantees the last part by draining before it returns; if a
//! drain fails the worker leaks the buffers on purpose rather than free memory the kernel may
//! still write to.

use std::alloc::Layout;

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Alignment of every buffer: a page, which satisfies O_DIRECT on any logical block size.
pub const BUF_ALIGN: usize = 4096;

/// A zeroed, [`BUF_ALIGN`]-aligned block of memory, allocated once, never resized or moved,
/// freed on drop. Whoever hands it to the kernel keeps it alive until that I/O is reaped (and
/// `std::mem::forget`s it when it cannot know), as the module contract says.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the allocation is owned exclusively by this value; moving it to another thread moves
// that ownership.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes, rounded up to a whole number of [`BUF_ALIGN`] (at least
    /// one).
    pub fn new(len: usize) -> std::io::Result<Self> {
        let size = len
            .max(1)
            .checked_next_multiple_of(BUF_ALIGN)
            .ok_or_else(|| std::io::Error::other("buffer size overflow"))?;
        let layout = Layout::from_size_align(size, BUF_ALIGN)
            .map_err(|_| std::io::Error::other("bad buffer layout"))?;
        let ptr = sys_alloc(layout);
        if ptr.is_null() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!("cannot allocate {size} bytes of I/O buffers"),
            ));
        }
        Ok(Self { ptr, layout })
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// The start of the block, for handing to the kernel.
    #[inline]
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `size` initialised (zeroed at first) bytes while `self`
        // lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

/// A zeroed block of `layout`'s size and alignment, or null: the global allocator on Linux.
#[cfg(not(windows))]
fn sys_alloc(layout: Layout) -> *mut u8 {
    // SAFETY: the layout has a non-zero size.
    unsafe { std::alloc::alloc_zeroed(layout) }
}

/// On Windows, VirtualAlloc: committed, zeroed pages, aligned to the 64 KiB allocation
/// granularity and so to any sector size FILE_FLAG_NO_BUFFERING asks for, as DiskSpd allocates.
#[cfg(windows)]
fn sys_alloc(layout: Layout) -> *mut u8 {
    use windows_sys::Win32::System::Memory::{
        VirtualAlloc, MEM_COMMIT, MEM_RESERVE, PAGE_READWRITE,
    };
    // SAFETY: a fresh private allocation; no address is asked for.
    unsafe {
        VirtualAlloc(
            std::ptr::null(),
            layout.size(),
            MEM_COMMIT | MEM_RESERVE,
            PAGE_READWRITE,
        )
    }
    .cast()
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        #[cfg(not(windows))]
        // SAFETY: allocated in `new` with this layout; no I/O uses it any more (module
        // contract).
        unsafe {
            std::alloc::dealloc(self.ptr, self.layout)
        }
        #[cfg(windows)]
        // SAFETY: the whole region VirtualAlloc returned in `new`; no I/O uses it any more
        // (module contract).
        unsafe {
            windows_sys::Win32::System::Memory::VirtualFree(
                self.ptr.cast(),
                0,
                windows_sys::Win32::System::Memory::MEM_RELEASE,
            );
        }
    }
}

/// `slots` buffers of `bs` bytes each, one per I/O that can be in flight.
pub struct SlotBuffers {
    mem: AlignedBuf,
    bs: usize,
    slots: usize,
    /// With `--compressible` or `--dedupe`: makes every write's bytes anew.
    shaper: Option<crate::datashape::Shaper>,
    /// Draws each default write's whitening key (see [`whiten`]).
    keys: Xoshiro256PlusPlus,
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
            mem: AlignedBuf::new(size)?,
            bs: stride,
            slots,
            shaper: None,
            keys: Xoshiro256PlusPlus::seed_from_u64(!seed),
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

    /// Slot `i` as a mutable slice. Only for slots with no I/O in flight.
    #[inline]
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        // SAFETY: inside the allocation; `&mut self` and the no-I/O-in-flight rule make the
        // access exclusive.
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
        let buf = &mut self.slot_mut(i)[..len];
        whiten(buf, key);
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

#[cfg(test)]
mod tests {
    use super::*;

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

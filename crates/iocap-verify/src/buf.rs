//! Ownership of the memory the kernel reads into and writes from.
//!
//! O_DIRECT needs buffers aligned to the device's logical block; a `Vec<u8>` gives no such
//! promise, so each I/O slot owns one [`AlignedBuf`]: a raw, 4 KiB-aligned block allocated once
//! before the I/O loop, never resized or moved, freed on drop. The I/O here is synchronous
//! (pread/pwrite), so the kernel is done with a buffer when the call returns: no buffer can be
//! dropped while the kernel still uses it.

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Alignment of every buffer: a memory page, enough for O_DIRECT on any logical block size.
pub const BUF_ALIGN: usize = 4096;

pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the allocation is owned exclusively by this value; moving it moves that ownership.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (rounded up to [`BUF_ALIGN`]).
    pub fn new(len: usize) -> std::io::Result<Self> {
        let size = len.max(1).div_ceil(BUF_ALIGN) * BUF_ALIGN;
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
        Ok(Self { ptr, layout })
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `size` initialised (zeroed) bytes while `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout; synchronous I/O means no call still uses it.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn aligned_and_zeroed() {
        let b = super::AlignedBuf::new(8192).unwrap();
        assert_eq!(b.as_slice().as_ptr() as usize % super::BUF_ALIGN, 0);
        assert!(b.as_slice().iter().all(|x| *x == 0));
        assert_eq!(b.len(), 8192);
    }
}

//! Page-aligned memory the kernel reads into and writes from ([`AlignedBuf`]), under the
//! contract `buffers` states: allocated once, never moved, freed only when no I/O uses it.

use std::alloc::Layout;

/// Alignment of every buffer: a page, which satisfies O_DIRECT on any logical block size.
pub const BUF_ALIGN: usize = 4096;

/// A zeroed, [`BUF_ALIGN`]-aligned block of memory, allocated once, never resized or moved,
/// freed on drop. Whoever hands it to the kernel keeps it alive until that I/O is reaped (the
/// I/O queue leaves its slot buffers never freed when it cannot know), as the module contract
/// says.
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

//! The BPF ring buffer's consumer side: the kernel's producer writes records into a shared
//! data area; user space reads them in order and moves the consumer position on.
//!
//! Layout (kernel/bpf/ringbuf.c): the map's first page holds the consumer position (mapped
//! read-write), the next page the producer position, then the data area mapped twice in a
//! row (read-only), so a record that wraps reads as one contiguous slice. Each record starts
//! with an 8-byte header: its length in the low 30 bits, BUSY (bit 31: still being written)
//! and DISCARD (bit 30), the whole rounded up to 8 bytes.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

const BUSY: u32 = 1 << 31;
const DISCARD: u32 = 1 << 30;
const HEADER: usize = 8;

/// A mapped ring buffer.
pub struct RingBuf {
    _map: OwnedFd,
    consumer: *mut u8,
    producer: *mut u8,
    page: usize,
    size: usize,
}

// SAFETY: the mappings belong to this value alone and are only touched through `&mut self`
// (drain) or atomics; moving it to another thread moves that ownership with it.
unsafe impl Send for RingBuf {}

impl RingBuf {
    /// Maps `map`, a ring buffer map of `size` bytes (a power of two, pages).
    pub fn new(map: OwnedFd, size: usize) -> io::Result<RingBuf> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let fd = map.as_raw_fd();
        // SAFETY: mapping a ring buffer map's fd as the kernel documents: one read-write page
        // at offset 0, then read-only the producer page and twice the data size; the results
        // are checked before use.
        let (consumer, producer) = unsafe {
            let c = libc::mmap(
                std::ptr::null_mut(),
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            );
            if c == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            let p = libc::mmap(
                std::ptr::null_mut(),
                page + 2 * size,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd,
                page as libc::off_t,
            );
            if p == libc::MAP_FAILED {
                let e = io::Error::last_os_error();
                libc::munmap(c, page);
                return Err(e);
            }
            (c as *mut u8, p as *mut u8)
        };
        Ok(RingBuf {
            _map: map,
            consumer,
            producer,
            page,
            size,
        })
    }

    fn consumer_pos(&self) -> &AtomicU64 {
        // SAFETY: the first 8 bytes of the consumer page, 8-aligned (page-aligned mapping),
        // live as long as `self`; the kernel reads them atomically.
        unsafe { &*(self.consumer as *const AtomicU64) }
    }

    fn producer_pos(&self) -> &AtomicU64 {
        // SAFETY: as for the consumer position, on the producer page.
        unsafe { &*(self.producer as *const AtomicU64) }
    }

    /// Hands every whole record written so far to `each`, in order, and frees their space.
    /// Returns how many it handed.
    pub fn drain(&mut self, each: &mut dyn FnMut(&[u8])) -> usize {
        let mask = (self.size - 1) as u64;
        let data = self.page; // offset of the data area in the producer mapping
        let mut cons = self.consumer_pos().load(Ordering::Acquire);
        let prod = self.producer_pos().load(Ordering::Acquire);
        let mut n = 0;
        while cons < prod {
            let at = data + (cons & mask) as usize;
            // SAFETY: `at` is within the first copy of the data area (the mask keeps it
            // there) and 8-aligned, as every record header is.
            let header = unsafe { &*(self.producer.add(at) as *const AtomicU32) };
            let h = header.load(Ordering::Acquire);
            if h & BUSY != 0 {
                break;
            }
            let len = (h & !(BUSY | DISCARD)) as usize;
            if h & DISCARD == 0 {
                // SAFETY: the record's bytes follow its header; with the data area mapped
                // twice, `len` (< size) bytes from there are mapped even when the record
                // wraps, and the producer no longer writes them (BUSY is clear).
                let rec =
                    unsafe { std::slice::from_raw_parts(self.producer.add(at + HEADER), len) };
                each(rec);
                n += 1;
            }
            cons += ((len + HEADER + 7) & !7) as u64;
            self.consumer_pos().store(cons, Ordering::Release);
        }
        n
    }
}

impl Drop for RingBuf {
    fn drop(&mut self) {
        // SAFETY: the two mappings made in `new`, with their sizes, unmapped once.
        unsafe {
            libc::munmap(self.consumer as *mut libc::c_void, self.page);
            libc::munmap(
                self.producer as *mut libc::c_void,
                self.page + 2 * self.size,
            );
        }
    }
}

//! The tag table's user side ([`crate::program::tags`] says what it is): the array map, mapped into
//! the capture's memory so the sweep for requests whose completion the kernel did not run the
//! program for reads it in place, as it walks the hash map.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::program::tags::{PER_DEVICE, SECTOR};
use crate::program::VALUE_BYTES;
use crate::{decode, sys};

/// `BPF_F_MMAPABLE`: an array map user space can map.
const MMAPABLE: u32 = 1 << 10;

/// The table, mapped.
pub struct TagTable {
    map: OwnedFd,
    base: *mut u8,
    len: usize,
    /// The dev_t of each device's part, in order.
    devs: Vec<u32>,
}

// SAFETY: the mapping belongs to this value alone; moving it to another thread moves that
// ownership with it, and it is only read and written through atomics and copies.
unsafe impl Send for TagTable {}

impl TagTable {
    /// A table for `devs` (the order the programs number them in), mapped.
    pub fn new(devs: &[u32]) -> io::Result<TagTable> {
        let entries = devs.len() as u32 * PER_DEVICE;
        let map = sys::map_create_flags(sys::MAP_ARRAY, 4, VALUE_BYTES, entries, MMAPABLE)?;
        let len = entries as usize * VALUE_BYTES as usize;
        // SAFETY: mapping the whole of an mmapable array map's values, shared and writable as
        // the kernel allows for one; the result is checked before use and unmapped on drop.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                map.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(TagTable {
            map,
            base: base as *mut u8,
            len,
            devs: devs.to_vec(),
        })
    }

    /// The map's descriptor, for the programs.
    pub fn fd(&self) -> i32 {
        self.map.as_raw_fd()
    }

    fn issue_ns(&self, entry: usize) -> &AtomicU64 {
        // SAFETY: `entry` < entries (the callers' loop), so the entry's first 8 bytes lie in
        // the mapping, 8-aligned (a page-aligned mapping, 48-byte entries); they live as long
        // as `self`, and the programs write them with single aligned stores.
        unsafe { &*(self.base.add(entry * VALUE_BYTES as usize) as *const AtomicU64) }
    }

    /// Every entry in flight, as the in-flight map's walk gives them: those issued `age_ns` or
    /// more before `now` are freed (unless a program took the entry meanwhile) and returned
    /// in `stale`; with `end`, the others in `young`.
    pub fn sweep(&self, now: u64, age_ns: u64, end: bool) -> (Vec<decode::Raw>, Vec<decode::Raw>) {
        let (mut stale, mut young) = (Vec::new(), Vec::new());
        for entry in 0..self.len / VALUE_BYTES as usize {
            let issued = self.issue_ns(entry).load(Ordering::Acquire);
            if issued == 0 {
                continue;
            }
            let raw = self.read(entry);
            if raw.issue_ns != issued {
                continue; // taken by another request while it was read
            }
            if issued.saturating_add(age_ns) <= now {
                let freed = self.issue_ns(entry).compare_exchange(
                    issued,
                    0,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                );
                if freed.is_ok() {
                    stale.push(raw);
                }
            } else if end {
                young.push(raw);
            }
        }
        (stale, young)
    }

    /// Entry `entry` as the hash map's walk reads one: a key (device, sector) and a value.
    fn read(&self, entry: usize) -> decode::Raw {
        let mut value = [0u8; VALUE_BYTES as usize];
        let at = entry * VALUE_BYTES as usize;
        // Copied with volatile byte reads, as a program may write the entry meanwhile. Only
        // an entry taken by a new request while it is read (the issue of a request whose
        // completion was not seen, a minute old) can read torn, and the sweep counts it all
        // the same.
        for (i, b) in value.iter_mut().enumerate() {
            // SAFETY: the entry's 48 bytes lie in the mapping (entry < entries), which lives
            // as long as `self`.
            *b = unsafe { std::ptr::read_volatile(self.base.add(at + i)) };
        }
        let mut key = [0u8; 16];
        let dev = self.devs[entry / PER_DEVICE as usize];
        key[..4].copy_from_slice(&dev.to_ne_bytes());
        key[8..].copy_from_slice(&value[SECTOR..SECTOR + 8]);
        decode::in_flight(&key, &value)
    }
}

impl Drop for TagTable {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, with its length, unmapped once.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl TagTable {
        /// Puts a request in flight in `entry`, as the issue's program does.
        fn put(&self, entry: usize, issue_ns: u64, sector: u64, bytes: u32) {
            assert!(
                entry < self.len / VALUE_BYTES as usize,
                "entry {entry} past the table"
            );
            let at = entry * VALUE_BYTES as usize;
            // SAFETY: the entry lies in the mapping (asserted above); written before its
            // issue time, as the program writes it.
            unsafe {
                std::ptr::write_unaligned(self.base.add(at + SECTOR) as *mut u64, sector);
                std::ptr::write_unaligned(
                    self.base.add(at + crate::program::value::BYTES) as *mut u32,
                    bytes,
                );
            }
            self.issue_ns(entry).store(issue_ns, Ordering::Release);
        }
    }

    #[test]
    fn the_sweep_frees_a_stale_entry_and_lists_the_young_ones_at_the_end() {
        let dev = 7 << 20 | 3;
        let table = match TagTable::new(&[dev]) {
            Ok(t) => t,
            Err(e) => {
                // CI runs as root, where a BPF map can be made
                assert!(std::env::var_os("CI").is_none(), "no tag table: {e}");
                eprintln!("no tag table here ({e}): nothing to sweep");
                return;
            }
        };
        let minute = 60_000_000_000;
        table.put(5, 1_000, 4_242, 4096); // a minute and more before `now`
        table.put(65_000, 50_000_000_000, 99, 8192); // 11 s before it
        let now = minute + 1_000;
        // during the capture: the stale one freed and returned, the young one left
        let (stale, young) = table.sweep(now, minute, false);
        assert_eq!(stale.len(), 1);
        assert_eq!((stale[0].dev, stale[0].sector), (dev, 4_242));
        assert_eq!((stale[0].issue_ns, stale[0].bytes), (1_000, 4096));
        assert!(young.is_empty());
        assert_eq!(table.issue_ns(5).load(Ordering::Acquire), 0, "freed");
        // at the end: the one still in flight, once
        let (stale, young) = table.sweep(now, minute, true);
        assert!(stale.is_empty());
        assert_eq!(young.len(), 1);
        assert_eq!((young[0].sector, young[0].bytes), (99, 8192));
    }
}

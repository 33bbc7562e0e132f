//! What FIEMAP (`FS_IOC_FIEMAP`) gives, read purely: its extent record as the kernel lays it
//! out (`struct fiemap_extent`, linux/fiemap.h), and one call's extents sorted into those with
//! a place on the disk and those without; plus what tells a changed file at the next scan.
//! Tested on any system.

/// `FIEMAP_EXTENT_LAST`: the file's last extent.
const LAST: u32 = 0x1;
/// UNKNOWN, DELALLOC, DATA_INLINE, DATA_TAIL: no place of its own on the disk yet.
const NO_PLACE: u32 = 0x2 | 0x4 | 0x200 | 0x400;

/// `struct fiemap_extent`: 56 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FiemapExtent {
    pub logical: u64,
    pub physical: u64,
    pub length: u64,
    pub reserved64: [u64; 2],
    pub flags: u32,
    pub reserved: [u32; 3],
}

/// What one call's extents said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taken {
    /// Every extent had a place.
    pub whole: bool,
    /// The file's last extent was among them.
    pub last: bool,
    /// Where the next call starts: the end of the last extent given.
    pub next: u64,
}

/// Adds the placed extents of one call (`[physical, length]` on the file system's device) to
/// `out`; `extents` is what the call filled, not empty.
pub fn take(extents: &[FiemapExtent], out: &mut Vec<[u64; 2]>) -> Taken {
    let mut t = Taken {
        whole: true,
        last: false,
        next: 0,
    };
    for e in extents {
        if e.flags & NO_PLACE != 0 {
            t.whole = false;
        } else {
            out.push([e.physical, e.length]);
        }
        t.last |= e.flags & LAST != 0;
        t.next = e.logical + e.length;
    }
    t
}

/// What tells a file changed or moved since the last scan, beside its size: its file system's
/// device, its inode and its modification time in nanoseconds (0 where the system gives none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub mtime_ns: i128,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extent(logical: u64, physical: u64, length: u64, flags: u32) -> FiemapExtent {
        FiemapExtent {
            logical,
            physical,
            length,
            flags,
            ..FiemapExtent::default()
        }
    }

    #[test]
    fn the_kernel_s_record_is_56_bytes() {
        assert_eq!(std::mem::size_of::<FiemapExtent>(), 56);
    }

    #[test]
    fn placed_extents_are_kept_and_the_next_call_starts_after_the_last() {
        let mut out = Vec::new();
        let t = take(
            &[extent(0, 4096, 8192, 0), extent(8192, 65536, 4096, 0)],
            &mut out,
        );
        assert_eq!(out, [[4096, 8192], [65536, 4096]]);
        assert_eq!(
            t,
            Taken {
                whole: true,
                last: false,
                next: 12288
            }
        );
    }

    #[test]
    fn an_extent_without_a_place_is_left_out_and_said() {
        let mut out = Vec::new();
        let t = take(
            &[extent(0, 4096, 4096, 0), extent(4096, 0, 4096, 0x4 | LAST)],
            &mut out,
        );
        assert_eq!(out, [[4096, 4096]]);
        assert!(!t.whole && t.last);
    }
}

//! Linux: FS_IOC_FIEMAP, 512 extents a call, on a file opened without following a link nor
//! waiting (and without touching its access time where the caller owns it); the disk under a
//! file system's device from /sys/dev/block.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::parse::extents::{take, FiemapExtent, Stamp};

const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
const PER_CALL: usize = 512;

/// `struct fiemap` with room for [`PER_CALL`] extents.
#[repr(C)]
struct Request {
    start: u64,
    length: u64,
    flags: u32,
    mapped: u32,
    count: u32,
    reserved: u32,
    extents: [FiemapExtent; PER_CALL],
}

/// The file's device, inode and modification time.
pub fn stamp(m: &Metadata) -> Stamp {
    Stamp {
        dev: m.dev(),
        ino: m.ino(),
        mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    }
}

/// Read-only, never through a link nor waiting on a FIFO; O_NOATIME where the caller owns the
/// file (it is refused otherwise).
fn open(path: &Path) -> io::Result<File> {
    let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK;
    OpenOptions::new()
        .read(true)
        .custom_flags(flags | libc::O_NOATIME)
        .open(path)
        .or_else(|_| OpenOptions::new().read(true).custom_flags(flags).open(path))
}

/// The file's extents (`[physical, length]` on its file system's device) and whether every one
/// had a place.
pub fn extents(path: &Path) -> io::Result<(Vec<[u64; 2]>, bool)> {
    let f = open(path)?;
    let mut out = Vec::new();
    let mut whole = true;
    let mut req = Box::new(Request {
        start: 0,
        length: u64::MAX,
        flags: 0,
        mapped: 0,
        count: PER_CALL as u32,
        reserved: 0,
        extents: [FiemapExtent::default(); PER_CALL],
    });
    loop {
        req.mapped = 0;
        // SAFETY: `req` is a `struct fiemap` with room for `count` extents, as the ioctl
        // expects; the kernel writes at most `count` extents into it, and `f` is open.
        let rc = unsafe { libc::ioctl(f.as_raw_fd(), FS_IOC_FIEMAP, &mut *req) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let n = (req.mapped as usize).min(PER_CALL);
        if n == 0 {
            break;
        }
        let t = take(&req.extents[..n], &mut out);
        whole &= t.whole;
        if t.last {
            break;
        }
        req.start = t.next;
        req.length = u64::MAX - req.start;
    }
    Ok((out, whole))
}

/// The whole disk (major, minor) under a file system's device number, and the byte offset of
/// the device on it (a partition's start; 0 for a whole disk), from /sys/dev/block. A device
/// of no block device (major 0) or a stacked one (device-mapper, md) is refused with why.
pub fn disk_of(st_dev: u64) -> Result<((u32, u32), u64), String> {
    let (major, minor) = (libc::major(st_dev), libc::minor(st_dev));
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    if major == 0 {
        return Err(format!(
            "its file system has no block device of its own ({major}:{minor}: btrfs, tmpfs, \
             FUSE or a network file system)"
        ));
    }
    let real = std::fs::canonicalize(&sys).map_err(|e| format!("{}: {e}", sys.display()))?;
    let stacked = std::fs::read_dir(real.join("slaves"))
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    let name = real
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    if stacked {
        return Err(format!(
            "on a stacked device ({name}): its requests reach the disks below through a \
             mapping iocap does not read"
        ));
    }
    if real.join("partition").exists() {
        let start: u64 = std::fs::read_to_string(real.join("start"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| format!("{name}: its partition start cannot be read"))?;
        let parent = real.parent().ok_or("a partition without a disk")?;
        let disk = dev_at(parent).ok_or_else(|| format!("{name}: its disk cannot be read"))?;
        Ok((disk, start * 512))
    } else {
        Ok((dev_at(&real).unwrap_or((major, minor)), 0))
    }
}

/// The `major:minor` in the sysfs block device directory `p`'s `dev`.
fn dev_at(p: &Path) -> Option<(u32, u32)> {
    let t = std::fs::read_to_string(p.join("dev")).ok()?;
    let (a, b) = t.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_file_has_its_extents_or_says_why_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 64 << 10]).unwrap();
        let f = File::open(&path).unwrap();
        f.sync_all().unwrap();
        match extents(&path) {
            // placed (synced) extents cover the file, or an unplaced one says the map is partial
            Ok((ext, whole)) => {
                assert!(!whole || ext.iter().map(|e| e[1]).sum::<u64>() >= 64 << 10)
            }
            // tmpfs and some others have no FIEMAP
            Err(e) => assert!(
                matches!(
                    e.raw_os_error(),
                    Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY)
                ),
                "{e}"
            ),
        }
        let s = stamp(&f.metadata().unwrap());
        assert!(s.ino != 0 && s.mtime_ns > 0);
    }
}

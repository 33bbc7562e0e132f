//! What Windows says about a target's device: sizes and sector sizes from the disk ioctls,
//! free space, the file system, and whether a volume or disk is in use (a file system mounted on
//! it or on one of its volumes). Every function degrades to a safe answer when a value cannot be
//! read; where the answer is "in use" it errs towards refusing: a volume Windows will not
//! describe counts as in use, and so does a disk when a volume with a file system will not say
//! which disk it is on.

use std::fs::File;
use std::io;
use std::path::Path;

use super::win;
use crate::winstruct::{self, DevicePath, OnVolume};

/// Size of a volume or physical disk in bytes.
pub fn block_device_size(f: &File) -> io::Result<u64> {
    win::device_size(f)
}

/// Bytes per sector of a volume or physical disk.
pub fn block_device_logical_block(f: &File) -> Option<u64> {
    win::device_sector(f)
}

/// The alignment FILE_FLAG_NO_BUFFERING needs on a regular file: its volume's bytes per sector
/// (GetDiskFreeSpaceW), else 512.
pub fn file_dio_alignment(f: &File) -> u64 {
    win::final_path(f)
        .and_then(|p| win::volume_root(&p))
        .and_then(|root| win::sector_of_root(&root))
        .unwrap_or(512)
}

/// Bytes available to this user in the volume holding `dir`.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    win::free_bytes(dir)
}

/// Why writing to the volume at `root` (`what` names it) could destroy data, if it could: a
/// file system is mounted on it, or Windows would not say what it holds.
fn volume_in_use(root: &str, what: &str) -> Option<String> {
    match winstruct::on_volume(win::fs_at_root(root)) {
        OnVolume::FileSystem(fs) => Some(format!("{what} holds a mounted {fs} file system")),
        OnVolume::Nothing => None,
        OnVolume::Unknown(e) => Some(format!(
            "Windows would not say what {what} holds (error {e}; a locked or unreadable volume \
             may hold data)"
        )),
    }
}

/// Why the volume or disk at `path` must not be written, if it is in use: a volume with a file
/// system mounted, or a disk one of whose volumes has one. A disk whose volumes cannot be told
/// (the volume ioctls fail) is in use when its partition table lists any partition.
pub fn device_in_use(path: &Path) -> Option<String> {
    match winstruct::device_path(&path.to_string_lossy()) {
        DevicePath::Volume { root } => volume_in_use(&root, "the volume"),
        DevicePath::Disk { number } => disk_in_use(path, number),
        DevicePath::NotADevice => None,
    }
}

fn disk_in_use(path: &Path, number: u32) -> Option<String> {
    use windows_sys::Win32::Storage::FileSystem::IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS;
    use windows_sys::Win32::System::Ioctl::IOCTL_DISK_GET_DRIVE_LAYOUT_EX;
    let mut told = false;
    for vol in win::volumes() {
        let dev = vol.trim_end_matches('\\');
        let extents = win::open_query(dev).ok().and_then(|f| {
            win::ioctl(&f, IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, 4096)
                .ok()
                .and_then(|b| winstruct::disk_extents(&b))
        });
        let Some(extents) = extents else {
            // which disk it is on is not known: a file system on it may be on this one
            if let OnVolume::FileSystem(fs) = winstruct::on_volume(win::fs_at_root(&vol)) {
                return Some(format!(
                    "volume {vol} holds a mounted {fs} file system and Windows would not say \
                     which disk it is on"
                ));
            }
            continue;
        };
        told = true;
        if extents.iter().any(|e| e.disk == number) {
            if let Some(why) = volume_in_use(&vol, &format!("its volume {vol}")) {
                return Some(why);
            }
        }
    }
    if told {
        return None;
    }
    let layout = win::open_query(&path.to_string_lossy())
        .and_then(|f| win::ioctl(&f, IOCTL_DISK_GET_DRIVE_LAYOUT_EX, 64 * 1024))
        .ok()
        .and_then(|b| winstruct::drive_layout(&b));
    match layout {
        Some((_, parts)) if parts.is_empty() => None,
        Some((_, parts)) => Some(format!(
            "it holds {} partition(s) and Windows did not say which volumes are on it, so they \
             may be in use",
            parts.len()
        )),
        None => Some(
            "Windows would not say what is on it (its partition table and volumes could not be \
             read), so it may be in use"
                .into(),
        ),
    }
}

/// Whether [`device_and_fs`] names the block device under a file: never on Windows, so its
/// absence says nothing of the file system.
pub const NAMES_BLOCK_DEVICE: bool = false;

/// Where a target lives, for the host fingerprint: no block-device name (Windows has no
/// /proc/diskstats to sample by it) and the file system of a file (`NTFS`, `ReFS`).
pub fn device_and_fs(f: &File) -> (Option<String>, Option<String>) {
    let fs = match f.metadata() {
        Ok(m) if m.is_file() => win::fs_of(f).map(|(name, _)| name),
        _ => None,
    };
    (None, fs)
}

/// Whether a device spins: not known on Windows from a name.
pub fn rotational(_device: &str) -> Option<bool> {
    None
}

// IOCTL_DISK_PERFORMANCE's output is decoded by winstruct: its layout checked against
// windows-sys here.
const _: () = {
    use std::mem::{offset_of, size_of};
    use windows_sys::Win32::System::Ioctl::DISK_PERFORMANCE;
    assert!(size_of::<DISK_PERFORMANCE>() == winstruct::DISK_PERFORMANCE_SIZE);
    assert!(offset_of!(DISK_PERFORMANCE, IdleTime) == 32);
    assert!(offset_of!(DISK_PERFORMANCE, ReadCount) == 40);
    assert!(offset_of!(DISK_PERFORMANCE, SplitCount) == 52);
    assert!(offset_of!(DISK_PERFORMANCE, QueryTime) == 56);
    assert!(offset_of!(DISK_PERFORMANCE, StorageManagerName) == 68);
};

/// The cumulative counters of physical disk `number`, perfmon's PhysicalDisk source:
/// IOCTL_DISK_PERFORMANCE (FILE_ANY_ACCESS) on `\\.\PhysicalDriveN` opened with no access
/// rights, so it needs no elevation and disturbs nothing. It fails where the disk's performance
/// counters cannot be read; iocap never turns them on (IOCTL_DISK_PERFORMANCE_OFF and
/// `diskperf` change the system's state), so the caller says why there are none.
pub fn disk_performance(number: u32) -> io::Result<winstruct::DiskPerformance> {
    use windows_sys::Win32::System::Ioctl::IOCTL_DISK_PERFORMANCE;
    let path = format!(r"\\.\PhysicalDrive{number}");
    let f = win::open_query(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot open {path}: {e}")))?;
    let b = win::ioctl(&f, IOCTL_DISK_PERFORMANCE, winstruct::DISK_PERFORMANCE_SIZE)?;
    winstruct::disk_performance(&b).ok_or_else(|| {
        io::Error::other(format!(
            "IOCTL_DISK_PERFORMANCE answered {} bytes, not a DISK_PERFORMANCE",
            b.len()
        ))
    })
}

/// The physical disks that hold a target, by number: a disk itself, or the disks under a volume
/// or under the volume a file is on (IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS); why not, where
/// Windows will not say. `f` is the target opened.
pub fn disks_of(path: &Path, f: &File) -> Result<Vec<u32>, String> {
    use windows_sys::Win32::Storage::FileSystem::IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS;
    let root = match winstruct::device_path(&path.to_string_lossy()) {
        DevicePath::Disk { number } => return Ok(vec![number]),
        DevicePath::Volume { root } => root,
        DevicePath::NotADevice => win::final_path(f)
            .and_then(|p| win::volume_root(&p))
            .ok_or("Windows would not say which volume holds it (GetVolumePathNameW)")?,
    };
    let device = volume_name(&root)
        .or_else(|| winstruct::volume_device(&root))
        .ok_or_else(|| format!("Windows would not name the volume mounted at {root}"))?;
    let v =
        win::open_query(&device).map_err(|e| format!("cannot open its volume {device} ({e})"))?;
    let extents = win::ioctl(&v, IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, 4096).map_err(|e| {
        format!(
            "Windows would not say which disks hold its volume {device} \
                 (IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS: {e})"
        )
    })?;
    let disks = winstruct::disk_extents(&extents)
        .map(|e| winstruct::disks_of_extents(&e))
        .unwrap_or_default();
    if disks.is_empty() {
        return Err(format!("Windows listed no disk under its volume {device}"));
    }
    Ok(disks)
}

/// The volume mounted at `root` (a drive's root or a mount folder) as a device to open
/// (`\\?\Volume{...}`), from GetVolumeNameForVolumeMountPointW.
fn volume_name(root: &str) -> Option<String> {
    use windows_sys::Win32::Storage::FileSystem::GetVolumeNameForVolumeMountPointW;
    let w = win::wide(std::ffi::OsStr::new(root));
    let mut out = [0u16; 64];
    // SAFETY: `w` is NUL-terminated; `out` is writable for its stated length (a volume GUID path
    // is 49 characters and its NUL).
    let ok = unsafe {
        GetVolumeNameForVolumeMountPointW(w.as_ptr(), out.as_mut_ptr(), out.len() as u32)
    };
    if ok == 0 {
        return None;
    }
    let n = out.iter().position(|c| *c == 0).unwrap_or(out.len());
    winstruct::volume_device(&String::from_utf16_lossy(&out[..n]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_alignment_is_a_power_of_two() {
        let f = tempfile::tempfile().unwrap();
        let a = file_dio_alignment(&f);
        assert!(a.is_power_of_two() && (512..=65536).contains(&a), "{a}");
    }

    #[test]
    fn free_space_is_reported() {
        assert!(free_bytes(Path::new(".")).unwrap() > 0);
    }

    /// Wine or Windows: the disks under a file's volume, or a reason; a disk's counters, or an
    /// error; never a panic (Wine implements neither ioctl: docs/windows.md).
    #[test]
    fn the_disks_under_a_file_or_why_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.dat");
        let f = File::create(&p).unwrap();
        match disks_of(&p, &f) {
            Ok(disks) => {
                assert!(!disks.is_empty());
                for d in disks {
                    if let Err(e) = disk_performance(d) {
                        eprintln!("PhysicalDrive{d}: {e}");
                    }
                }
            }
            Err(why) => assert!(!why.is_empty()),
        }
        assert!(disk_performance(9999).is_err(), "no such disk");
    }

    #[test]
    fn files_are_not_devices() {
        assert_eq!(device_in_use(Path::new(r"C:\t.dat")), None);
    }
}

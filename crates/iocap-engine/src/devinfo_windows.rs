//! What Windows says about a target's device: sizes and sector sizes from the disk ioctls,
//! free space, the file system, and whether a volume or disk is in use (a file system mounted on
//! it or on one of its volumes). Every function degrades to a safe answer when a value cannot be
//! read; where the answer is "in use" it errs towards refusing: a volume Windows will not
//! describe counts as in use, and so does a disk when a volume with a file system will not say
//! which disk it is on.

use std::fs::File;
use std::io;
use std::path::Path;

use crate::win;
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

    #[test]
    fn files_are_not_devices() {
        assert_eq!(device_in_use(Path::new(r"C:\t.dat")), None);
    }
}

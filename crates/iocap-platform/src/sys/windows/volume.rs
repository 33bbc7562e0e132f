//! Windows: what the audit asks of a volume and its disks: the volume under a path (its mount
//! point, device path and file system), its cluster and free space (GetDiskFreeSpace(Ex)W),
//! and the volume and disk ioctls (partition, extents, cache, storage properties), whose
//! outputs `iocap-audit` decodes purely and tests on any system. Each failure is returned as
//! text naming the call and its error, for the checks to show as UNKNOWN, never a PASS.

use std::ffi::OsStr;
use std::fs::File;
use std::path::Path;

use windows_sys::Win32::Storage::FileSystem::{
    GetDiskFreeSpaceExW, GetDiskFreeSpaceW, GetVolumeNameForVolumeMountPointW,
    IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS,
};
use windows_sys::Win32::System::Ioctl::{
    IOCTL_DISK_GET_CACHE_INFORMATION, IOCTL_DISK_GET_PARTITION_INFO_EX,
    IOCTL_STORAGE_QUERY_PROPERTY,
};
use windows_sys::Win32::System::IO::DeviceIoControl;

use super::win;

/// The sizes of the structures these calls return, as windows-sys lays them out: a pure
/// decoder elsewhere (the audit's) checks its own against them when built for Windows.
pub mod size {
    use std::mem::size_of;
    use windows_sys::Win32::System::Ioctl::{
        DEVICE_SEEK_PENALTY_DESCRIPTOR, DEVICE_TRIM_DESCRIPTOR, DISK_CACHE_INFORMATION,
        DISK_EXTENT, PARTITION_INFORMATION_EX, STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR,
        STORAGE_DEVICE_DESCRIPTOR, STORAGE_PROPERTY_QUERY, STORAGE_WRITE_CACHE_PROPERTY,
    };

    pub const PARTITION_INFORMATION_EX: usize = size_of::<PARTITION_INFORMATION_EX>();
    pub const DISK_EXTENT: usize = size_of::<DISK_EXTENT>();
    pub const DISK_CACHE_INFORMATION: usize = size_of::<DISK_CACHE_INFORMATION>();
    pub const STORAGE_WRITE_CACHE_PROPERTY: usize = size_of::<STORAGE_WRITE_CACHE_PROPERTY>();
    pub const STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR: usize =
        size_of::<STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR>();
    pub const DEVICE_TRIM_DESCRIPTOR: usize = size_of::<DEVICE_TRIM_DESCRIPTOR>();
    pub const DEVICE_SEEK_PENALTY_DESCRIPTOR: usize = size_of::<DEVICE_SEEK_PENALTY_DESCRIPTOR>();
    pub const STORAGE_DEVICE_DESCRIPTOR: usize = size_of::<STORAGE_DEVICE_DESCRIPTOR>();
    pub const STORAGE_PROPERTY_QUERY: usize = size_of::<STORAGE_PROPERTY_QUERY>();
}

/// The volume holding a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volume {
    /// Its mount point (`C:\`, `E:\mnt\data\`), from GetVolumePathNameW.
    pub root: String,
    /// Its device path for `CreateFile` (`\\?\Volume{...}`, or `\\.\C:`), no trailing `\`.
    pub device: String,
    /// The file system GetVolumeInformationW names (`NTFS`, `ReFS`), or why it could not.
    pub fs: Result<String, String>,
}

fn wide(s: &str) -> Vec<u16> {
    win::wide(OsStr::new(s))
}

fn os_error() -> String {
    std::io::Error::last_os_error().to_string()
}

/// The volume holding `path`: its mount point, its device (the volume manager's name, else
/// the drive letter's device: Wine has no such name) and its file system.
pub fn volume_of(path: &Path) -> Result<Volume, String> {
    let root = win::volume_root(path).ok_or_else(|| {
        format!(
            "GetVolumePathNameW({}) failed: {}",
            path.display(),
            os_error()
        )
    })?;
    let device =
        volume_name(&root).unwrap_or_else(|| format!("\\\\.\\{}", root.trim_end_matches('\\')));
    let fs = win::fs_at_root(&root)
        .map_err(|e| format!("GetVolumeInformationW({root}) failed: error {e}"));
    Ok(Volume { root, device, fs })
}

/// The volume manager's name of the volume mounted at `root` (`\\?\Volume{...}`), no
/// trailing `\`.
fn volume_name(root: &str) -> Option<String> {
    let w = wide(root);
    let mut name = [0u16; 64];
    // SAFETY: `w` is NUL-terminated; `name` is writable for its stated length.
    let ok = unsafe {
        GetVolumeNameForVolumeMountPointW(w.as_ptr(), name.as_mut_ptr(), name.len() as u32)
    };
    if ok == 0 {
        return None;
    }
    let n = name.iter().position(|c| *c == 0).unwrap_or(name.len());
    Some(
        String::from_utf16_lossy(&name[..n])
            .trim_end_matches('\\')
            .to_string(),
    )
}

/// GetDiskFreeSpaceW on the volume's root: (sectors per cluster, bytes per sector).
pub fn cluster(root: &str) -> Result<(u32, u32), String> {
    let w = wide(root);
    let (mut spc, mut bps, mut fc, mut tc) = (0u32, 0u32, 0u32, 0u32);
    // SAFETY: `w` is NUL-terminated; four writable u32s.
    let ok = unsafe { GetDiskFreeSpaceW(w.as_ptr(), &mut spc, &mut bps, &mut fc, &mut tc) };
    if ok == 0 {
        return Err(os_error());
    }
    Ok((spc, bps))
}

/// GetDiskFreeSpaceExW on the volume's root: (bytes available to the caller, total bytes).
pub fn free_space(root: &str) -> Result<(u64, u64), String> {
    let w = wide(root);
    let (mut avail, mut total, mut free) = (0u64, 0u64, 0u64);
    // SAFETY: `w` is NUL-terminated; three writable u64s.
    let ok = unsafe { GetDiskFreeSpaceExW(w.as_ptr(), &mut avail, &mut total, &mut free) };
    if ok == 0 {
        return Err(os_error());
    }
    Ok((avail, total))
}

/// `IOCTL_DISK_GET_PARTITION_INFO_EX` on a volume: a `PARTITION_INFORMATION_EX`.
pub fn partition_info(device: &str) -> Result<Vec<u8>, String> {
    query(device, false, IOCTL_DISK_GET_PARTITION_INFO_EX, &[])
}

/// `IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS` on a volume: a `VOLUME_DISK_EXTENTS`.
pub fn disk_extents(device: &str) -> Result<Vec<u8>, String> {
    query(device, false, IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, &[])
}

/// `IOCTL_DISK_GET_CACHE_INFORMATION` on a disk: a `DISK_CACHE_INFORMATION`. The disk is
/// opened for reading, which needs an administrator.
pub fn cache_information(disk: &str) -> Result<Vec<u8>, String> {
    query(disk, true, IOCTL_DISK_GET_CACHE_INFORMATION, &[])
}

/// `IOCTL_STORAGE_QUERY_PROPERTY` on a volume or disk with `property_query`, the bytes of a
/// `STORAGE_PROPERTY_QUERY` ([`size::STORAGE_PROPERTY_QUERY`] long): the property's
/// descriptor.
pub fn storage_property(device: &str, property_query: &[u8]) -> Result<Vec<u8>, String> {
    query(device, false, IOCTL_STORAGE_QUERY_PROPERTY, property_query)
}

/// `code` with `input` on `device`, opened for reading or for queries only; up to 4 KiB out.
fn query(device: &str, read: bool, code: u32, input: &[u8]) -> Result<Vec<u8>, String> {
    let f = open(device, read)?;
    ioctl(&f, code, input, 4096).map_err(|e| e.to_string())
}

/// Opens a volume or disk: for reading where the call needs it (the cache information), else
/// for queries only; an administrator's prompt is needed for the first.
fn open(device: &str, read: bool) -> Result<File, String> {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::{FILE_SHARE_READ, FILE_SHARE_WRITE};
    if read {
        let r = std::fs::OpenOptions::new()
            .read(true)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
            .open(device);
        return r.map_err(|e| {
            format!("cannot open {device} for reading ({e}; run from an elevated prompt)")
        });
    }
    win::open_query(device).map_err(|e| format!("cannot open {device} ({e})"))
}

/// A synchronous `DeviceIoControl` with `input`; its output, up to `max` bytes.
fn ioctl(f: &File, code: u32, input: &[u8], max: usize) -> std::io::Result<Vec<u8>> {
    let mut out = vec![0u8; max];
    let mut got = 0u32;
    let inp = if input.is_empty() {
        std::ptr::null()
    } else {
        input.as_ptr().cast()
    };
    // SAFETY: a valid handle opened without FILE_FLAG_OVERLAPPED (so synchronous, no
    // OVERLAPPED); `input` readable and `out` writable for their stated lengths.
    let ok = unsafe {
        DeviceIoControl(
            win::raw(f),
            code,
            inp,
            input.len() as u32,
            out.as_mut_ptr().cast(),
            max as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    out.truncate(got as usize);
    Ok(out)
}

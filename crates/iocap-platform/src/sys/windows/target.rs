//! Windows: files, volumes (`\\.\E:`) and physical disks (`\\.\PhysicalDrive2`), devices known
//! by their names; no write goes through a reparse point (FILE_FLAG_OPEN_REPARSE_POINT is
//! Windows' O_NOFOLLOW); positioned writes with `WriteFile` on a synchronous handle.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::windows::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use iocap_model::{JobSpec, TargetKind};
use windows_sys::Win32::Foundation::{ERROR_INVALID_PARAMETER, ERROR_SHARING_VIOLATION};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_NO_BUFFERING, FILE_FLAG_OPEN_REPARSE_POINT,
    FILE_FLAG_WRITE_THROUGH, FILE_SHARE_READ, FILE_SHARE_WRITE,
};

use super::devinfo;

/// A link, as a refusal names it.
pub const LINK: &str = "symbolic link or reparse point";
/// A device, as a refusal names it.
pub const DEVICE: &str = "volume or physical disk";
/// Direct I/O's flag, as a warning names it.
pub const DIRECT: &str = "FILE_FLAG_NO_BUFFERING";
/// The cache direct I/O bypasses, as a warning names it.
pub const CACHE: &str = "file cache";

/// Whether `path` names a volume or physical disk (`\\.\E:`, `\\.\PhysicalDrive2`).
pub fn names_device(path: &Path) -> bool {
    crate::winstruct::names_device(&path.to_string_lossy())
}

/// Whether `m` (from `symlink_metadata`) is a link or any other reparse point.
pub fn is_link(m: &Metadata) -> bool {
    m.file_type().is_symlink() || m.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0
}

/// Devices are found by their names on Windows.
pub fn is_block_device(_: &Metadata) -> bool {
    false
}

/// A regular file's volume serial number and file index; nothing for a device, named by its
/// path (`\\.\PhysicalDrive1`), whose descriptor is always the one the path names.
pub fn file_id(f: &File, kind: TargetKind) -> io::Result<(u64, u64)> {
    match kind {
        TargetKind::File => super::filetag::dev_ino(f),
        TargetKind::BlockDevice => Ok((0, 0)),
    }
}

/// Read-only, for the checks, sharing reads and writes.
pub fn open_read(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
        .open(path)
}

/// Why the volume or disk at `path` must not be written, if it is in use.
pub fn device_in_use(_: Option<&Metadata>, path: &Path) -> Option<String> {
    devinfo::device_in_use(path)
}

/// The test's open: read, and write when `spec` writes (a file never through a reparse point;
/// FILE_FLAG_WRITE_THROUGH for write-through); `direct` adds FILE_FLAG_NO_BUFFERING.
pub fn open_test(path: &Path, spec: &JobSpec, kind: TargetKind, direct: bool) -> io::Result<File> {
    let mut flags = 0;
    if spec.writes() && kind == TargetKind::File {
        flags |= FILE_FLAG_OPEN_REPARSE_POINT;
    }
    if spec.write_through {
        flags |= FILE_FLAG_WRITE_THROUGH;
    }
    if direct {
        flags |= FILE_FLAG_NO_BUFFERING;
    }
    OpenOptions::new()
        .read(true)
        .write(spec.writes())
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
        .custom_flags(flags)
        .open(path)
}

/// The error a file system that refuses unbuffered I/O gives: ERROR_INVALID_PARAMETER.
pub fn direct_refused_error() -> io::Error {
    io::Error::from_raw_os_error(ERROR_INVALID_PARAMETER as i32)
}

/// Whether `e` is [`direct_refused_error`]'s.
pub fn is_direct_refused(e: &io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_INVALID_PARAMETER as i32)
}

/// Whether `e` says another holds the file or device (ERROR_SHARING_VIOLATION).
pub fn is_busy(e: &io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_SHARING_VIOLATION as i32)
}

/// A new file, never an existing one nor through a reparse point.
pub fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

/// Opens a reparse point itself rather than what it points to (Windows' O_NOFOLLOW);
/// `direct` adds FILE_FLAG_NO_BUFFERING.
pub fn no_follow(o: &mut OpenOptions, direct: bool) -> &mut OpenOptions {
    let extra = if direct { FILE_FLAG_NO_BUFFERING } else { 0 };
    o.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | extra)
}

/// An output file's open (a report, an export, a trace): as it is. The check before the open
/// is the guard against a reparse point here (opening one itself would replace the link).
pub fn output_flags(o: &mut OpenOptions) -> &mut OpenOptions {
    o
}

/// Never: [`output_flags`] adds no flag that refuses a link.
pub fn is_link_refused(_: &io::Error) -> bool {
    false
}

/// The fill's open: read and write, never through a reparse point; `direct` adds
/// FILE_FLAG_NO_BUFFERING.
pub fn open_fill(path: &Path, direct: bool) -> io::Result<File> {
    no_follow(OpenOptions::new().read(true).write(true), direct).open(path)
}

/// One positioned WriteFile on a synchronous handle.
#[inline]
pub fn write_at(f: &File, buf: &[u8], off: u64) -> io::Result<usize> {
    f.seek_write(buf, off)
}

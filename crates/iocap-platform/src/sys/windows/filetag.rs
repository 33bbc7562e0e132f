//! Windows: the tag is the NTFS alternate data stream `<file>:iocap`, where the volume has
//! named streams and the stream opened is part of the very file already open; the identity the
//! volume serial number and file index.

use std::fs::File;
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::path::Path;

use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT;

use super::win;

/// GetVolumeInformation's flag for a file system with named streams (winnt.h).
const FILE_NAMED_STREAMS: u32 = 0x0004_0000;

/// The stream `<path>:iocap`, opened as asked, when the volume of `f` has named streams and
/// the stream belongs to `f` itself.
fn stream(f: &File, path: &Path, opts: &mut std::fs::OpenOptions) -> Option<File> {
    let (_, flags) = win::fs_of(f)?;
    if flags & FILE_NAMED_STREAMS == 0 {
        return None;
    }
    let mut name = path.as_os_str().to_owned();
    name.push(":iocap");
    let s = opts
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(name)
        .ok()?;
    let same = |a: &File, b: &File| matches!((win::file_id(a), win::file_id(b)), (Ok(x), Ok(y)) if x.0 == y.0 && x.1 == y.1);
    same(f, &s).then_some(s)
}

/// The stream's text, if `f` has one.
pub fn read_attr(f: &File, path: &Path) -> Option<String> {
    let mut s = stream(f, path, std::fs::OpenOptions::new().read(true))?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut s, &mut text).ok()?;
    (!text.is_empty()).then_some(text)
}

/// Writes the stream; false where the volume has no named streams.
pub fn write_attr(f: &File, path: &Path, text: &str) -> bool {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    match stream(f, path, &mut opts) {
        Some(mut s) => std::io::Write::write_all(&mut s, text.as_bytes()).is_ok(),
        None => false,
    }
}

/// The volume serial number and file index the sidecar binds the marker to.
pub fn dev_ino(f: &File) -> io::Result<(u64, u64)> {
    let (serial, index, _) = win::file_id(f)?;
    Ok((u64::from(serial), index))
}

/// The sidecar, created or truncated, never through a reparse point planted under its name.
pub fn open_sidecar(p: &Path) -> io::Result<File> {
    if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(io::Error::other(format!(
            "{} is a symbolic link; not writing through it",
            p.display()
        )));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(p)
}

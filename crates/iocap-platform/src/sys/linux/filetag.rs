//! Linux: the tag is the extended attribute `user.iocap`; the identity the device and inode.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

const XATTR: &[u8] = b"user.iocap\0";

/// The xattr's text, if `f` has one.
pub fn read_attr(f: &File, _path: &Path) -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the name is NUL-terminated and `buf` is writable for its length.
    let n = unsafe {
        libc::fgetxattr(
            f.as_raw_fd(),
            XATTR.as_ptr().cast(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    (n > 0).then(|| String::from_utf8_lossy(&buf[..n as usize]).into_owned())
}

/// Sets the xattr; false where the file system has no user xattrs.
pub fn write_attr(f: &File, _path: &Path, text: &str) -> bool {
    // SAFETY: the name is NUL-terminated; the value pointer and length describe `text`.
    let rc = unsafe {
        libc::fsetxattr(
            f.as_raw_fd(),
            XATTR.as_ptr().cast(),
            text.as_ptr().cast(),
            text.len(),
            0,
        )
    };
    rc == 0
}

/// The device and inode the sidecar binds the marker to.
pub fn dev_ino(f: &File) -> io::Result<(u64, u64)> {
    let meta = f.metadata()?;
    Ok((meta.dev(), meta.ino()))
}

/// The sidecar, created or truncated; O_NOFOLLOW: a symlink planted under its name is not
/// written through.
pub fn open_sidecar(p: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(p)
}

//! Linux: open flags through libc (`O_NOFOLLOW`, `O_DIRECT`, `O_DSYNC`, `O_EXCL` on a block
//! device), block devices known by their type, positioned writes with `pwrite`.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use iocap_model::{JobSpec, TargetKind};

use super::devinfo;

/// A link, as a refusal names it.
pub const LINK: &str = "symbolic link";
/// A device, as a refusal names it.
pub const DEVICE: &str = "block device";
/// Direct I/O's flag, as a warning names it.
pub const DIRECT: &str = "O_DIRECT";
/// The cache direct I/O bypasses, as a warning names it.
pub const CACHE: &str = "page cache";

/// Linux finds block devices by their type, not their names.
pub fn names_device(_: &Path) -> bool {
    false
}

/// Whether `m` (from `symlink_metadata`) is a symbolic link.
pub fn is_link(m: &Metadata) -> bool {
    m.file_type().is_symlink()
}

/// Whether `m` is a block device's.
pub fn is_block_device(m: &Metadata) -> bool {
    m.file_type().is_block_device()
}

/// A regular file's device and inode; a block device's number, with whether it is a block
/// device (a character device can have the same number: /dev/vcs is 7:0, as loop0 is).
pub fn file_id(f: &File, kind: TargetKind) -> io::Result<(u64, u64)> {
    let m = f.metadata()?;
    Ok(match kind {
        TargetKind::File => (m.dev(), m.ino()),
        TargetKind::BlockDevice => (m.rdev(), u64::from(is_block_device(&m))),
    })
}

/// Read-only, for the checks. Non-blocking (see [`open_no_wait`]).
pub fn open_read(path: &Path) -> io::Result<File> {
    open_no_wait(OpenOptions::new().read(true), libc::O_CLOEXEC, path)
}

/// Opens `path` with O_NONBLOCK, then clears the flag so I/O waits as usual. The target's
/// kind is checked by stat before it is opened, but a FIFO put in its place after that
/// check would make a read-only open wait for a writer, for ever: Rust's `open` retries
/// EINTR, so the first Ctrl-C (SIGINT or SIGTERM, whose handler only sets a flag) would be
/// swallowed and the run would hang. With O_NONBLOCK such an open returns at once, and the
/// check on the descriptor refuses the FIFO. The flag must not stay: io_uring takes a
/// non-blocking file's reads as "do not wait" and would fail them with EAGAIN.
fn open_no_wait(opts: &mut OpenOptions, custom: i32, path: &Path) -> io::Result<File> {
    let f = opts.custom_flags(custom | libc::O_NONBLOCK).open(path)?;
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a descriptor `f` owns; F_SETFL keeps every other flag (O_DIRECT too)
    let ok = unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        fl >= 0 && libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK) == 0
    };
    if ok {
        Ok(f)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Why the block device of `m` (its number) must not be written, if it is in use.
pub fn device_in_use(m: Option<&Metadata>, path: &Path) -> Option<String> {
    devinfo::block_device_in_use(m?.rdev(), path)
}

/// The test's open: read, and write when `spec` writes (never through a link; `O_DSYNC` for
/// write-through; `O_EXCL` on a block device); `direct` adds `O_DIRECT`.
pub fn open_test(path: &Path, spec: &JobSpec, kind: TargetKind, direct: bool) -> io::Result<File> {
    let mut custom = libc::O_CLOEXEC;
    if spec.writes() {
        custom |= libc::O_NOFOLLOW;
        if spec.write_through {
            custom |= libc::O_DSYNC;
        }
        if kind == TargetKind::BlockDevice {
            // the kernel refuses O_EXCL on a block device that a file system or stack holds
            custom |= libc::O_EXCL;
        }
    }
    if direct {
        custom |= libc::O_DIRECT;
    }
    open_no_wait(
        OpenOptions::new().read(true).write(spec.writes()),
        custom,
        path,
    )
}

/// The error a file system that refuses direct I/O gives: EINVAL.
pub fn direct_refused_error() -> io::Error {
    io::Error::from_raw_os_error(libc::EINVAL)
}

/// Whether `e` is [`direct_refused_error`]'s.
pub fn is_direct_refused(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINVAL)
}

/// Whether `e` says another holds the device (EBUSY, from `O_EXCL`).
pub fn is_busy(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EBUSY)
}

/// A new file, never an existing one nor through a link.
pub fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o644)
        .open(path)
}

/// Opens without following a final symlink (and without leaking into children); `direct`
/// adds O_DIRECT.
pub fn no_follow(o: &mut OpenOptions, direct: bool) -> &mut OpenOptions {
    let extra = if direct { libc::O_DIRECT } else { 0 };
    o.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | extra)
}

/// An output file's open (a report, an export, a trace): never through a final link, which
/// fails with ELOOP instead of being followed, and never blocking on a FIFO planted there
/// (ENXIO). Neither changes how a regular file is written.
pub fn output_flags(o: &mut OpenOptions) -> &mut OpenOptions {
    o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
}

/// Whether an open failed on a final link ([`output_flags`]' ELOOP).
pub fn is_link_refused(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

/// The fill's open: read and write, never through a link; `direct` adds O_DIRECT.
pub fn open_fill(path: &Path, direct: bool) -> io::Result<File> {
    no_follow(OpenOptions::new().read(true).write(true), direct).open(path)
}

/// One pwrite; `Interrupted` on EINTR.
#[inline]
pub fn write_at(f: &File, buf: &[u8], off: u64) -> io::Result<usize> {
    f.write_at(buf, off)
}

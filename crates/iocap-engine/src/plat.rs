//! What opening and checking a target needs that differs by system: paths, open flags,
//! whether a device is in use, positioned writes. Its own module (not inside `target`) so that
//! `target` and `safety`, which both use it, do not depend on each other for it.

/// What a target is: the model's, as the result records it.
pub use iocap_model::TargetKind;

#[cfg(target_os = "linux")]
mod imp {
    use std::fs::{File, Metadata, OpenOptions};
    use std::io;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
    use std::path::Path;

    use iocap_model::JobSpec;

    use super::TargetKind;
    use iocap_platform::devinfo;

    pub const LINK: &str = "symbolic link";
    pub const DEVICE: &str = "block device";
    pub const DIRECT: &str = "O_DIRECT";
    pub const CACHE: &str = "page cache";

    /// Linux finds block devices by their type, not their names.
    pub fn names_device(_: &Path) -> bool {
        false
    }

    pub fn is_link(m: &Metadata) -> bool {
        m.file_type().is_symlink()
    }

    pub fn is_block_device(m: &Metadata) -> bool {
        m.file_type().is_block_device()
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

    pub fn device_in_use(m: Option<&Metadata>, path: &Path) -> Option<String> {
        devinfo::block_device_in_use(m?.rdev(), path)
    }

    pub fn open_test(
        path: &Path,
        spec: &JobSpec,
        kind: TargetKind,
        direct: bool,
    ) -> io::Result<File> {
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

    pub fn direct_refused_error() -> io::Error {
        io::Error::from_raw_os_error(libc::EINVAL)
    }

    pub fn is_direct_refused(e: &io::Error) -> bool {
        e.raw_os_error() == Some(libc::EINVAL)
    }

    pub fn is_busy(e: &io::Error) -> bool {
        e.raw_os_error() == Some(libc::EBUSY)
    }

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

    pub fn open_fill(path: &Path, direct: bool) -> io::Result<File> {
        no_follow(OpenOptions::new().read(true).write(true), direct).open(path)
    }

    /// One pwrite; `Interrupted` on EINTR.
    pub fn write_at(f: &File, buf: &[u8], off: u64) -> io::Result<usize> {
        f.write_at(buf, off)
    }
}

/// Windows: files, volumes (`\\.\E:`) and physical disks (`\\.\PhysicalDrive2`); no write
/// goes through a reparse point (FILE_FLAG_OPEN_REPARSE_POINT is Windows' O_NOFOLLOW).
#[cfg(windows)]
mod imp {
    use std::fs::{File, Metadata, OpenOptions};
    use std::io;
    use std::os::windows::fs::{FileExt, MetadataExt, OpenOptionsExt};
    use std::path::Path;

    use iocap_model::JobSpec;
    use windows_sys::Win32::Foundation::{ERROR_INVALID_PARAMETER, ERROR_SHARING_VIOLATION};
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_NO_BUFFERING, FILE_FLAG_OPEN_REPARSE_POINT,
        FILE_FLAG_WRITE_THROUGH, FILE_SHARE_READ, FILE_SHARE_WRITE,
    };

    use super::TargetKind;

    pub const LINK: &str = "symbolic link or reparse point";
    pub const DEVICE: &str = "volume or physical disk";
    pub const DIRECT: &str = "FILE_FLAG_NO_BUFFERING";
    pub const CACHE: &str = "file cache";

    pub fn names_device(path: &Path) -> bool {
        iocap_platform::winstruct::names_device(&path.to_string_lossy())
    }

    pub fn is_link(m: &Metadata) -> bool {
        m.file_type().is_symlink() || m.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0
    }

    /// Devices are found by their names on Windows.
    pub fn is_block_device(_: &Metadata) -> bool {
        false
    }

    pub fn open_read(path: &Path) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
            .open(path)
    }

    pub fn device_in_use(_: Option<&Metadata>, path: &Path) -> Option<String> {
        iocap_platform::devinfo::device_in_use(path)
    }

    pub fn open_test(
        path: &Path,
        spec: &JobSpec,
        kind: TargetKind,
        direct: bool,
    ) -> io::Result<File> {
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

    pub fn direct_refused_error() -> io::Error {
        io::Error::from_raw_os_error(ERROR_INVALID_PARAMETER as i32)
    }

    pub fn is_direct_refused(e: &io::Error) -> bool {
        e.raw_os_error() == Some(ERROR_INVALID_PARAMETER as i32)
    }

    pub fn is_busy(e: &io::Error) -> bool {
        e.raw_os_error() == Some(ERROR_SHARING_VIOLATION as i32)
    }

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

    pub fn open_fill(path: &Path, direct: bool) -> io::Result<File> {
        no_follow(OpenOptions::new().read(true).write(true), direct).open(path)
    }

    /// One positioned WriteFile on a synchronous handle.
    pub fn write_at(f: &File, buf: &[u8], off: u64) -> io::Result<usize> {
        f.seek_write(buf, off)
    }
}

pub(crate) use imp::*;

//! Linux's calls for the measuring loop ([`crate::measure`]): each method opens the prepared
//! file again with its flags (`O_DSYNC`, `O_DIRECT`, ...), checked to be the inode that was
//! prepared, and makes a write durable with `pwrite` (then `fsync` or `fdatasync`) or
//! `pwritev2(RWF_DSYNC)`. The device's class comes from sysfs.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use iocap_engine::TargetKind;

use crate::analyse::DeviceFlags;
use crate::durable::{DurableWrite, OnError, OpenError};
use crate::method::{Method, OpenFlags};
use crate::FsyncError;

/// The cache-bypassing flag, as the skip reasons name it.
pub(crate) const DIRECT: &str = "O_DIRECT";

/// Whether `m` needs sizes aligned to the target's O_DIRECT alignment.
pub(crate) fn needs_alignment(m: Method, _kind: TargetKind) -> bool {
    m.direct()
}

/// The prepared target while its points are measured: its path, kind and identity (the file
/// itself is closed; each method opens it again), and what sysfs says of its device.
pub(crate) struct Site {
    path: PathBuf,
    kind: TargetKind,
    checked: Metadata,
    pub device: Option<String>,
    pub fs_type: Option<String>,
    pub flags: DeviceFlags,
    /// Caveats of this target, after the engine's.
    pub warnings: Vec<String>,
}

impl Site {
    /// From the engine's prepared `file` at `path`.
    pub fn new(file: File, path: &Path, kind: TargetKind) -> Result<Site, FsyncError> {
        let (device, fs_type) = iocap_platform::devinfo::device_and_fs(&file);
        let checked = file.metadata().map_err(|e| FsyncError::Io {
            context: format!("cannot stat {}", path.display()),
            source: e,
        })?;
        let flags = device
            .as_deref()
            .map(DeviceFlags::from_sysfs)
            .unwrap_or_default();
        let mut warnings = Vec::new();
        if device.is_none() {
            warnings.push(format!(
                "{} is on a file system without a block device ({}): the figures say what this \
                 file system does with a flush, not what a disk does",
                path.display(),
                fs_type.as_deref().unwrap_or("unknown")
            ));
        }
        Ok(Site {
            path: path.to_path_buf(),
            kind,
            checked,
            device,
            fs_type,
            flags,
            warnings,
        })
    }

    /// Opens the prepared file again with the method's flags, and checks that it is still the
    /// inode that was prepared (a file swapped in meanwhile is not written).
    pub fn open(&self, m: Method) -> Result<Writer, OpenError> {
        let path = &self.path;
        let mut flags = libc::O_CLOEXEC | libc::O_NOFOLLOW | m.open_flags();
        if self.kind == TargetKind::BlockDevice {
            flags |= libc::O_EXCL;
        }
        let refuse_direct = std::env::var_os("IOCAP_TEST_REFUSE_DIRECT").is_some() && m.direct();
        let opened = if refuse_direct {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        } else {
            OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(flags)
                .open(path)
        };
        let f = match opened {
            Ok(f) => f,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(OpenError::Unavailable(format!(
                    "the file system refused to open {} with {} (EINVAL)",
                    path.display(),
                    m.label()
                )))
            }
            Err(e) => {
                return Err(OpenError::Failed(FsyncError::Io {
                    context: format!("cannot open {} with {}", path.display(), m.label()),
                    source: e,
                }))
            }
        };
        let now = f.metadata().map_err(|e| {
            OpenError::Failed(FsyncError::Io {
                context: format!("cannot stat {}", path.display()),
                source: e,
            })
        })?;
        let checked = &self.checked;
        let same = match self.kind {
            TargetKind::File => now.dev() == checked.dev() && now.ino() == checked.ino(),
            TargetKind::BlockDevice => now.rdev() == checked.rdev(),
        };
        if !same {
            return Err(OpenError::Failed(FsyncError::Refused(
                iocap_engine::safety::changed(&path.display().to_string(), "testing"),
            )));
        }
        Ok(Writer { file: f, m })
    }
}

/// The file opened for one method.
pub(crate) struct Writer {
    file: File,
    m: Method,
}

impl DurableWrite for Writer {
    #[inline]
    fn write_durably(&mut self, buf: &[u8], off: u64) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        match self.m {
            Method::Fsync => write_all(fd, buf, off).and_then(|_| {
                // SAFETY: `fd` is an open descriptor owned by `self.file`, which outlives the
                // call.
                check(unsafe { libc::fsync(fd) })
            }),
            Method::Fdatasync => write_all(fd, buf, off).and_then(|_| {
                // SAFETY: as above.
                check(unsafe { libc::fdatasync(fd) })
            }),
            Method::RwfDsync => {
                let size = buf.len() as u64;
                let iov = libc::iovec {
                    iov_base: buf.as_ptr() as *mut libc::c_void,
                    iov_len: buf.len(),
                };
                // SAFETY: `iov` describes `buf`, which is initialised, outlives the call and is
                // only read by the kernel; `fd` is open; one iovec is passed.
                let rc =
                    unsafe { libc::pwritev2(fd, &iov, 1, off as libc::off_t, libc::RWF_DSYNC) };
                if rc < 0 {
                    Err(io::Error::last_os_error())
                } else if rc as u64 != size {
                    Err(io::Error::other(format!(
                        "short write: {rc} of {size} bytes"
                    )))
                } else {
                    Ok(())
                }
            }
            _ => write_all(fd, buf, off),
        }
    }
}

/// What a failed write means: ENOSYS or EOPNOTSUPP before any write succeeded is a method the
/// kernel or file system does not offer; EINTR is a signal (Ctrl-C stops, anything else
/// retries).
pub(crate) fn on_error(e: &io::Error, first: bool, stop: &AtomicBool) -> OnError {
    match e.raw_os_error() {
        Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) if first => OnError::Unavailable,
        Some(libc::EINTR) if stop.load(Ordering::Relaxed) => OnError::Stopped,
        Some(libc::EINTR) => OnError::Retry,
        _ => OnError::Fail,
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `pwrite` of the whole of `buf` at `off`, finishing a short write.
#[inline]
fn write_all(fd: libc::c_int, buf: &[u8], off: u64) -> io::Result<()> {
    let mut done = 0usize;
    while done < buf.len() {
        let rest = &buf[done..];
        // SAFETY: `rest` is initialised memory that outlives the call and that the kernel only
        // reads; `fd` is an open descriptor. For O_DIRECT, `buf` starts page-aligned (a
        // SlotBuffers slot) and its length is a multiple of the logical block, checked before.
        let rc = unsafe {
            libc::pwrite(
                fd,
                rest.as_ptr().cast(),
                rest.len(),
                (off + done as u64) as libc::off_t,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        if rc == 0 {
            return Err(io::Error::other("the write made no progress"));
        }
        done += rc as usize;
    }
    Ok(())
}

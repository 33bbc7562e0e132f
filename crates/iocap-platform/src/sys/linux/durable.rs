//! Linux: each method opens the prepared file again by its path with its flags (`O_DSYNC`,
//! `O_DIRECT`, ...), checked to be the inode (or device) that was prepared, and makes a write
//! durable with `pwrite` (then `fsync` or `fdatasync`) or `pwritev2(RWF_DSYNC)`.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use iocap_model::{FsyncMethod as Method, TargetKind};

use crate::parse::durable::OpenError;

/// The cache-bypassing flag, as the skip reasons name it.
pub const DIRECT: &str = "O_DIRECT";
/// The error of an open whose flags the file system refuses, as the skip reasons name it.
pub const REFUSED: &str = "EINVAL";

/// Whether `m` needs sizes aligned to the target's O_DIRECT alignment.
pub fn needs_alignment(m: Method, _kind: TargetKind) -> bool {
    m.direct()
}

/// Flags added to `O_RDWR` when the file is opened for `m`.
fn open_flags(m: Method) -> libc::c_int {
    match m {
        Method::Fsync | Method::Fdatasync | Method::RwfDsync => 0,
        Method::ODsync => libc::O_DSYNC,
        Method::ODirectODsync => libc::O_DIRECT | libc::O_DSYNC,
        Method::OSync => libc::O_SYNC,
        Method::ODirectOSync => libc::O_DIRECT | libc::O_SYNC,
        // Windows' methods are never opened here: fsync's `measure::run` marks another
        // system's methods unavailable before it opens anything
        Method::FlushFileBuffers | Method::WriteThrough | Method::NoBufferingWriteThrough => 0,
    }
}

/// The prepared target: its path, kind and identity (the file itself is closed; each method
/// opens it again).
pub struct Prepared {
    path: PathBuf,
    kind: TargetKind,
    /// The prepared target's id, which every open must find again.
    id: (u64, u64),
}

impl Prepared {
    /// From the engine's prepared `file` at `path`; fails where it cannot be stat'ed.
    pub fn new(file: File, path: &Path, kind: TargetKind) -> io::Result<Prepared> {
        let id = super::target::file_id(&file, kind)?;
        Ok(Prepared {
            path: path.to_path_buf(),
            kind,
            id,
        })
    }

    /// Opens the prepared file again with `m`'s flags, and checks that it is still the file
    /// that was prepared (a file swapped in meanwhile is not written).
    pub fn open(&self, m: Method) -> Result<Writer, OpenError> {
        let mut flags = libc::O_CLOEXEC | libc::O_NOFOLLOW | open_flags(m);
        if self.kind == TargetKind::BlockDevice {
            flags |= libc::O_EXCL;
        }
        let opened = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(flags)
            .open(&self.path);
        let file = opened.map_err(|e| match e.raw_os_error() {
            Some(libc::EINVAL) => OpenError::Refused,
            _ => OpenError::Open(e),
        })?;
        let now = super::target::file_id(&file, self.kind).map_err(OpenError::Stat)?;
        if now != self.id {
            return Err(OpenError::Changed);
        }
        Ok(Writer { file, m })
    }
}

/// The file opened for one method.
pub struct Writer {
    file: File,
    m: Method,
}

impl Writer {
    /// One write of `buf` at `off`, made durable the method's way; returns only once the
    /// system says it is (queue depth 1).
    #[inline]
    pub fn write_durably(&mut self, buf: &[u8], off: u64) -> io::Result<()> {
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
            Method::RwfDsync => write_dsync(fd, buf, off),
            _ => write_all(fd, buf, off),
        }
    }
}

/// Whether a failed write says the kernel or file system does not offer the call or flag
/// (ENOSYS, EOPNOTSUPP).
pub fn is_not_offered(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)
    )
}

/// Whether a signal cut the write short (EINTR).
pub fn is_interrupted(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINTR)
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `pwritev2(RWF_DSYNC)` of `buf` at `off`: one call, a short write an error.
#[inline]
fn write_dsync(fd: libc::c_int, buf: &[u8], off: u64) -> io::Result<()> {
    let size = buf.len() as u64;
    let iov = libc::iovec {
        iov_base: buf.as_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: `iov` describes `buf`, which is initialised, outlives the call and is only read
    // by the kernel; `fd` is open; one iovec is passed.
    let rc = unsafe { libc::pwritev2(fd, &iov, 1, off as libc::off_t, libc::RWF_DSYNC) };
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    /// A page-aligned page, as O_DIRECT wants.
    #[repr(C, align(4096))]
    struct Page([u8; 4096]);

    /// Every method the file system offers writes its buffer whole, at its offset, on the file
    /// prepared; one it refuses (O_DIRECT on tmpfs) says so.
    #[test]
    fn every_method_writes_at_its_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.dat");
        std::fs::write(&path, vec![0u8; 64 << 10]).unwrap();
        let file = File::open(&path).unwrap();
        let prepared = Prepared::new(file, &path, TargetKind::File).unwrap();
        let mut page = Box::new(Page([0; 4096]));
        for (i, m) in Method::LINUX.into_iter().enumerate() {
            let mut w = match prepared.open(m) {
                Ok(w) => w,
                Err(OpenError::Refused) if m.direct() => continue,
                Err(e) => panic!("{} could not be opened: {e:?}", m.label()),
            };
            page.0.fill(i as u8 + 1);
            let off = 4096 * (2 * i as u64 + 1);
            match w.write_durably(&page.0, off) {
                Err(e) if is_not_offered(&e) => continue,
                r => r.unwrap(),
            }
            let mut back = vec![0u8; 4096];
            File::open(&path).unwrap().read_at(&mut back, off).unwrap();
            assert!(back.iter().all(|b| *b == i as u8 + 1), "{}", m.label());
        }
    }

    #[test]
    fn another_file_under_the_prepared_name_is_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.dat");
        std::fs::write(&path, [0u8; 512]).unwrap();
        let prepared = Prepared::new(File::open(&path).unwrap(), &path, TargetKind::File).unwrap();
        // made before the first is gone, so it cannot take its inode number
        std::fs::write(dir.path().join("other"), [0u8; 512]).unwrap();
        std::fs::rename(dir.path().join("other"), &path).unwrap();
        assert!(matches!(
            prepared.open(Method::Fsync),
            Err(OpenError::Changed)
        ));
    }
}

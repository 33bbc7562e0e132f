//! The verify file: created by iocap or refused, opened without following symlinks, O_DIRECT
//! where the file system takes it, and the few system calls the fill, the final pass and the
//! check need (the mixed phase submits through the engine's backends).
//!
//! Same rules as `iocap run` (docs/safety.md): a missing file is created with O_EXCL and marked
//! as iocap's own ([`iocap_engine::marker`]); an existing file is written only if iocap created
//! it or the user passed `allow_overwrite`; a symlink is never followed for writes; only regular
//! files are taken (a block device could be mounted, and verify rewrites every byte). The
//! existing file is inspected through a read-only descriptor, and the descriptor opened for
//! writing must be the same inode.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use iocap_engine::marker::{self, Marker};

use crate::error::{io_err, VerifyError};

/// Creates `path` or claims an existing file iocap made (or any file, with `allow_overwrite`),
/// sized to `size`; returns the file opened for reading and writing and whether it was created.
pub fn create_or_claim(
    path: &Path,
    size: u64,
    allow_overwrite: bool,
) -> Result<(File, bool), VerifyError> {
    let shown = path.display().to_string();
    let rw = |create: bool| {
        let mut o = OpenOptions::new();
        o.read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
        if create {
            o.create_new(true);
        }
        o.open(path)
    };
    let (file, created) = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => (
            rw(true).map_err(io_err(format!("cannot create {shown}")))?,
            true,
        ),
        Err(e) => return Err(io_err(format!("cannot inspect {shown}"))(e)),
        Ok(m) if m.file_type().is_symlink() => {
            return Err(VerifyError::refused(format!(
                "{shown} is a symbolic link; iocap does not write through symlinks (give the \
                 real path)"
            )))
        }
        // checked before opening: opening a FIFO blocks until a writer comes
        Ok(m) if !m.file_type().is_file() => {
            return Err(not_a_file(&shown));
        }
        Ok(_) => {
            let ro = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(path)
                .map_err(io_err(format!("cannot open {shown}")))?;
            let meta = ro
                .metadata()
                .map_err(io_err(format!("cannot stat {shown}")))?;
            if !meta.file_type().is_file() {
                return Err(not_a_file(&shown));
            }
            if marker::read(&ro, path).is_none() && !allow_overwrite {
                return Err(VerifyError::refused(format!(
                    "refusing to write to {shown}: iocap did not create it. Verifying would \
                     destroy its contents; pass --allow-overwrite if that is intended, or name \
                     a new file"
                )));
            }
            let f = rw(false).map_err(io_err(format!("cannot open {shown} for writing")))?;
            let m2 = f
                .metadata()
                .map_err(io_err(format!("cannot stat {shown}")))?;
            if (m2.dev(), m2.ino()) != (meta.dev(), meta.ino()) {
                return Err(VerifyError::refused(format!(
                    "{shown} changed while iocap was checking it; not writing to it"
                )));
            }
            (f, false)
        }
    };
    set_marker(&file, path, false, size)?;
    file.set_len(size)
        .map_err(io_err(format!("cannot size {shown}")))?;
    Ok((file, created))
}

/// Marks the file as iocap's own, `complete` once every page was written.
pub fn set_marker(f: &File, path: &Path, complete: bool, size: u64) -> Result<(), VerifyError> {
    marker::write(f, path, Marker { complete, size }).map_err(io_err(format!(
        "cannot mark {} as iocap's test file",
        path.display()
    )))
}

fn not_a_file(shown: &str) -> VerifyError {
    VerifyError::refused(format!(
        "{shown} is not a regular file; iocap verify rewrites every byte of its target, so it \
         takes only files (give a file on the file system to test)"
    ))
}

/// Reopens `path` for the I/O, with O_DIRECT if `direct` and the file system takes it; the
/// descriptor must be the inode of `same_as`. Returns the file and whether it is O_DIRECT.
pub fn open_io(
    path: &Path,
    write: bool,
    direct: bool,
    same_as: Option<&File>,
    warnings: &mut Vec<String>,
) -> Result<(File, bool), VerifyError> {
    let shown = path.display().to_string();
    // checked before opening (a FIFO would block the open); the descriptor is checked again
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
        return Err(not_a_file(&shown));
    }
    let open = |extra: i32| {
        OpenOptions::new()
            .read(true)
            .write(write)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | extra)
            .open(path)
    };
    let refuse = std::env::var_os("IOCAP_TEST_REFUSE_DIRECT").is_some();
    let (f, d) = if !direct {
        (
            open(0).map_err(io_err(format!("cannot open {shown}")))?,
            false,
        )
    } else {
        match if refuse {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        } else {
            open(libc::O_DIRECT)
        } {
            Ok(f) => (f, true),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                warnings.push(direct_refused(&shown));
                (
                    open(0).map_err(io_err(format!("cannot open {shown}")))?,
                    false,
                )
            }
            Err(e) => return Err(io_err(format!("cannot open {shown}"))(e)),
        }
    };
    if let Some(orig) = same_as {
        let (a, b) = (f.metadata(), orig.metadata());
        if let (Ok(a), Ok(b)) = (a, b) {
            if (a.dev(), a.ino()) != (b.dev(), b.ino()) {
                return Err(VerifyError::refused(format!(
                    "{shown} changed while iocap was opening it; not writing to it"
                )));
            }
        }
    }
    Ok((f, d))
}

pub fn direct_refused(shown: &str) -> String {
    format!(
        "O_DIRECT was refused on {shown} (its file system does not support it); fell back to \
         buffered I/O, so reads may be answered by the page cache and some faults of the \
         storage below it cannot be seen"
    )
}

/// Reads exactly `buf.len()` bytes at `off`.
pub fn pread_exact(f: &File, buf: &mut [u8], off: u64) -> io::Result<()> {
    let (fd, ptr) = (f.as_raw_fd(), buf.as_mut_ptr());
    all(
        buf.len(),
        off,
        "the file ended before the page",
        |done, len, at| {
            // SAFETY: `ptr + done` and `len` describe the unread rest of `buf`, which lives and is
            // not otherwise used until the synchronous call returns.
            unsafe { libc::pread(fd, ptr.add(done).cast(), len, at) }
        },
    )
}

/// Writes all of `buf` at `off`.
pub fn pwrite_all(f: &File, buf: &[u8], off: u64) -> io::Result<()> {
    let (fd, ptr) = (f.as_raw_fd(), buf.as_ptr());
    all(
        buf.len(),
        off,
        "the write moved no bytes",
        |done, len, at| {
            // SAFETY: `ptr + done` and `len` describe the unwritten rest of `buf`, which lives and
            // is not modified until the synchronous call returns; the kernel only reads it.
            unsafe { libc::pwrite(fd, ptr.add(done).cast(), len, at) }
        },
    )
}

/// Moves `len` bytes at file offset `off` with `call(done, rest, offset)` (a pread or pwrite
/// of the `rest` bytes after the first `done`, at `offset`), resuming after a short transfer
/// or EINTR; a call that moves nothing is an error saying `none`.
fn all(
    len: usize,
    off: u64,
    none: &str,
    mut call: impl FnMut(usize, usize, libc::off_t) -> isize,
) -> io::Result<()> {
    let mut done = 0;
    while done < len {
        let n = call(done, len - done, (off + done as u64) as libc::off_t);
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                none.to_string(),
            ));
        }
        done += n as usize;
    }
    Ok(())
}

/// A random 64-bit value from the kernel (the file id), or a mix of time and pid.
pub fn random_u64() -> u64 {
    let mut v = [0u8; 8];
    // SAFETY: writes at most 8 bytes into `v`.
    let n = unsafe { libc::getrandom(v.as_mut_ptr().cast(), 8, 0) };
    if n == 8 {
        return u64::from_le_bytes(v);
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    t ^ (u64::from(std::process::id()) << 40)
}

/// Nanoseconds since the epoch.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64
}

//! Windows: each method gets its own handle on the prepared file: `ReOpenFile` of the handle
//! the engine checked, so it is that very file and never a path looked up again (a volume or
//! disk, which cannot be swapped under its name, is opened again by its name where
//! `ReOpenFile` refuses it, as the engine's workers do). A write is one positioned `WriteFile`
//! of the whole buffer:
//! - `flush_file_buffers`: plain handle, `WriteFile` then `FlushFileBuffers`;
//! - `write_through`: `FILE_FLAG_WRITE_THROUGH`, `WriteFile` returns once the data is durable;
//! - `no_buffering_write_through`: `FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH |
//!   FILE_FLAG_OVERLAPPED`, as SQL Server opens its log: one `WriteFile` with an `OVERLAPPED`,
//!   waited for with `GetOverlappedResult` before the next (queue depth 1).

use std::fs::File;
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::path::{Path, PathBuf};

use iocap_model::{FsyncMethod as Method, TargetKind};
use windows_sys::Win32::Foundation::{
    ERROR_INVALID_FUNCTION, ERROR_INVALID_PARAMETER, ERROR_IO_PENDING, ERROR_NOT_SUPPORTED, HANDLE,
};
use windows_sys::Win32::Storage::FileSystem::{
    FlushFileBuffers, WriteFile, FILE_FLAG_NO_BUFFERING, FILE_FLAG_OVERLAPPED,
    FILE_FLAG_WRITE_THROUGH, FILE_SHARE_READ, FILE_SHARE_WRITE,
};
use windows_sys::Win32::System::Threading::CreateEventW;
use windows_sys::Win32::System::IO::{
    GetOverlappedResult, OVERLAPPED, OVERLAPPED_0, OVERLAPPED_0_0,
};

use super::win;
use crate::parse::durable::OpenError;

/// The cache-bypassing flag, as the skip reasons name it.
pub const DIRECT: &str = "FILE_FLAG_NO_BUFFERING";
/// The error of an open whose flags the file system refuses, as the skip reasons name it.
pub const REFUSED: &str = "ERROR_INVALID_PARAMETER";

/// Whether `m` needs sizes aligned to the target's sector: an unbuffered method, or any method
/// on a volume or disk (a device handle takes whole sectors only).
pub fn needs_alignment(m: Method, kind: TargetKind) -> bool {
    m.direct() || kind == TargetKind::BlockDevice
}

/// The flags a method's handle is opened with, beside read and write access.
fn open_flags(m: Method) -> u32 {
    match m {
        Method::WriteThrough => FILE_FLAG_WRITE_THROUGH,
        Method::NoBufferingWriteThrough => {
            FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH | FILE_FLAG_OVERLAPPED
        }
        // FlushFileBuffers: a plain handle. Linux's methods are never opened here: fsync's
        // `measure::run` marks another system's methods unavailable before it opens anything
        _ => 0,
    }
}

/// The prepared target: the engine's handle, kept open so that every method's handle is
/// reopened from it.
pub struct Prepared {
    file: File,
    path: PathBuf,
    kind: TargetKind,
}

impl Prepared {
    /// From the engine's prepared `file` at `path`; never fails on Windows.
    pub fn new(file: File, path: &Path, kind: TargetKind) -> io::Result<Prepared> {
        Ok(Prepared {
            file,
            path: path.to_path_buf(),
            kind,
        })
    }

    /// The target's handle for `m`. A file system that refuses the flags
    /// (ERROR_INVALID_PARAMETER) gives [`OpenError::Refused`].
    pub fn open(&self, m: Method) -> Result<Writer, OpenError> {
        let flags = open_flags(m);
        let file = self.reopen(flags).map_err(|e| {
            if e.raw_os_error() == Some(ERROR_INVALID_PARAMETER as i32) {
                OpenError::Refused
            } else {
                OpenError::Open(e)
            }
        })?;
        let event = if flags & FILE_FLAG_OVERLAPPED != 0 {
            Some(manual_reset_event().map_err(OpenError::Event)?)
        } else {
            None
        };
        Ok(Writer {
            file,
            flush: m == Method::FlushFileBuffers,
            event,
        })
    }

    /// The prepared handle reopened with `flags`, or a device opened again by its name.
    fn reopen(&self, flags: u32) -> io::Result<File> {
        match win::reopen(&self.file, true, flags) {
            Ok(f) => Ok(f),
            Err(_) if self.kind == TargetKind::BlockDevice => std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
                .custom_flags(flags)
                .open(&self.path),
            Err(e) => Err(e),
        }
    }
}

/// A manual-reset event, not signalled, that this process owns.
fn manual_reset_event() -> io::Result<OwnedHandle> {
    // SAFETY: no security attributes and no name (both may be null); the handle returned, when
    // not null, is a new one that only the OwnedHandle below closes.
    let h = unsafe { CreateEventW(std::ptr::null(), 1, 0, std::ptr::null()) };
    if h.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `h` is a valid handle this process owns and nothing else closes.
    Ok(unsafe { OwnedHandle::from_raw_handle(h as RawHandle) })
}

/// The target's handle for one method.
pub struct Writer {
    file: File,
    /// FlushFileBuffers after each write.
    flush: bool,
    /// The event an overlapped write signals; `Some` exactly when `file` was opened with
    /// FILE_FLAG_OVERLAPPED.
    event: Option<OwnedHandle>,
}

impl Writer {
    /// One write of `buf` at `off`, made durable the method's way; returns only once the
    /// system says it is (queue depth 1).
    #[inline]
    pub fn write_durably(&mut self, buf: &[u8], off: u64) -> io::Result<()> {
        let h = win::raw(&self.file);
        if let Some(event) = &self.event {
            return write_overlapped(h, event.as_raw_handle() as HANDLE, buf, off);
        }
        write_all_at(h, buf, off)?;
        if self.flush {
            // SAFETY: FlushFileBuffers on a handle `self.file` owns, open for writing.
            if unsafe { FlushFileBuffers(h) } == 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Whether a failed write says the file system does not offer the function or flag
/// (ERROR_NOT_SUPPORTED, ERROR_INVALID_FUNCTION, ERROR_INVALID_PARAMETER).
pub fn is_not_offered(e: &io::Error) -> bool {
    const NOT_OFFERED: [u32; 3] = [
        ERROR_NOT_SUPPORTED,
        ERROR_INVALID_FUNCTION,
        ERROR_INVALID_PARAMETER,
    ];
    e.raw_os_error()
        .is_some_and(|code| NOT_OFFERED.contains(&(code as u32)))
}

/// Never: Ctrl-C does not interrupt a WriteFile on Windows (the loop stops after the write in
/// progress).
pub fn is_interrupted(_: &io::Error) -> bool {
    false
}

/// An OVERLAPPED naming `off` and signalling `event` (null: none, for a synchronous handle).
fn overlapped_at(off: u64, event: HANDLE) -> OVERLAPPED {
    OVERLAPPED {
        Anonymous: OVERLAPPED_0 {
            Anonymous: OVERLAPPED_0_0 {
                Offset: off as u32,
                OffsetHigh: (off >> 32) as u32,
            },
        },
        hEvent: event,
        ..OVERLAPPED::default()
    }
}

/// The whole of `buf` written at `off` on the synchronous handle `h`, finishing a short write.
#[inline]
fn write_all_at(h: HANDLE, buf: &[u8], off: u64) -> io::Result<()> {
    let mut done = 0usize;
    while done < buf.len() {
        let rest = &buf[done..];
        let mut ov = overlapped_at(off + done as u64, std::ptr::null_mut());
        let mut n = 0u32;
        // SAFETY: `h` is open for writing and synchronous (opened without
        // FILE_FLAG_OVERLAPPED), so WriteFile returns only once the write is done: `rest`
        // (initialised, only read, at most 64 KiB so its length fits a u32), `n` and `ov` (which
        // only carries the offset) outlive it.
        let ok = unsafe { WriteFile(h, rest.as_ptr(), rest.len() as u32, &mut n, &mut ov) };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Err(io::Error::other("the write made no progress"));
        }
        done += n as usize;
    }
    Ok(())
}

/// One overlapped WriteFile of `buf` at `off` on `h` (opened FILE_FLAG_OVERLAPPED), waited for
/// with GetOverlappedResult: queue depth 1. An unbuffered write is done whole or fails, so a
/// short one is an error.
#[inline]
fn write_overlapped(h: HANDLE, event: HANDLE, buf: &[u8], off: u64) -> io::Result<()> {
    let len = buf.len() as u32;
    let mut ov = overlapped_at(off, event);
    // SAFETY: `h` is open for writing with FILE_FLAG_OVERLAPPED and `event` is a manual-reset
    // event this process owns. `buf` (initialised, only read; for FILE_FLAG_NO_BUFFERING it
    // starts page-aligned, a SlotBuffers slot, and its length is a multiple of the sector, checked
    // before) and `ov` must stay in place until the write completes: this function does not
    // return before GetOverlappedResult below has waited for it, and both outlive the function.
    let ok = unsafe { WriteFile(h, buf.as_ptr(), len, std::ptr::null_mut(), &mut ov) };
    if ok == 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(ERROR_IO_PENDING as i32) {
            // not started: nothing is in flight
            return Err(e);
        }
    }
    let mut n = 0u32;
    // SAFETY: `ov` is the OVERLAPPED of the write just issued on `h`; bWait = TRUE waits on its
    // event until the write is no longer pending (a completion already reached returns at once),
    // so when this returns, with success or the write's own error, nothing refers to `buf` or
    // `ov` any more. The wait itself cannot fail: the event is ours and open.
    if unsafe { GetOverlappedResult(h, &ov, &mut n, 1) } == 0 {
        return Err(io::Error::last_os_error());
    }
    if n != len {
        return Err(io::Error::other(format!("short write: {n} of {len} bytes")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::windows::fs::FileExt;

    /// A page-aligned page, as FILE_FLAG_NO_BUFFERING wants.
    #[repr(C, align(4096))]
    struct Page([u8; 4096]);

    #[test]
    fn an_offset_is_split_into_its_low_and_high_halves() {
        let ov = overlapped_at(5 << 32 | 8192, std::ptr::null_mut());
        // SAFETY: the union holds the offset pair, as `overlapped_at` wrote it
        let (lo, hi) = unsafe {
            (
                ov.Anonymous.Anonymous.Offset,
                ov.Anonymous.Anonymous.OffsetHigh,
            )
        };
        assert_eq!((lo, hi), (8192, 5));
    }

    /// Every method writes its buffer whole, at its offset, on the file it was opened from.
    #[test]
    fn every_method_writes_at_its_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.dat");
        std::fs::write(&path, vec![0u8; 64 << 10]).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let prepared = Prepared::new(file, &path, TargetKind::File).unwrap();
        let mut page = Box::new(Page([0; 4096]));
        for (i, m) in Method::WINDOWS.into_iter().enumerate() {
            let Ok(mut w) = prepared.open(m) else {
                panic!("{} could not be opened", m.label())
            };
            page.0.fill(i as u8 + 1);
            let off = 4096 * (2 * i as u64 + 1);
            w.write_durably(&page.0, off).unwrap();
            drop(w);
            let mut back = vec![0u8; 4096];
            prepared.file.seek_read(&mut back, off).unwrap();
            assert!(back.iter().all(|b| *b == i as u8 + 1), "{}", m.label());
        }
    }
}

//! The synchronous Windows backend, as psync on Linux: positioned `ReadFile`/`WriteFile` (the
//! offset in an `OVERLAPPED`) on a blocking handle, one I/O at a time on the calling thread. The
//! planner gives it one context, thread and handle per outstanding I/O (a synchronous handle
//! serialises its I/O, so the handles are not shared).

use std::fs::File;
use std::io;

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::IO::OVERLAPPED;

use super::{Backend, Completion, Io, Op};
use iocap_platform::win;

pub struct WinSync {
    file: File,
    pending: Option<Io>,
    done: Option<Completion>,
}

impl WinSync {
    /// A backend on `file`, a handle of this worker's own opened without FILE_FLAG_OVERLAPPED.
    pub fn new(file: File) -> Self {
        Self {
            file,
            pending: None,
            done: None,
        }
    }

    fn handle(&self) -> HANDLE {
        win::raw(&self.file)
    }

    /// Performs `io` and returns bytes transferred or a negative Win32 error.
    fn perform(&self, io: &Io) -> i32 {
        if io.op.is_sync() {
            return win::flush(&self.file);
        }
        // SAFETY: a zeroed OVERLAPPED is valid; only the offset is set.
        let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
        ov.Anonymous.Anonymous.Offset = io.offset as u32;
        ov.Anonymous.Anonymous.OffsetHigh = (io.offset >> 32) as u32;
        let mut n = 0u32;
        // SAFETY: `io.buf` points to `io.len` bytes of the worker's slot buffer, valid and
        // untouched until this call returns (backend contract); the handle is synchronous, so
        // the call returns when the I/O is done and `ov` and `n` outlive it.
        let ok = unsafe {
            match io.op {
                Op::Read => ReadFile(self.handle(), io.buf, io.len, &mut n, &mut ov),
                _ => WriteFile(self.handle(), io.buf, io.len, &mut n, &mut ov),
            }
        };
        if ok == 0 {
            return -(win::last_error() as i32);
        }
        if io.op == Op::WriteDsync {
            let r = win::flush(&self.file);
            if r < 0 {
                return r;
            }
        }
        n as i32
    }
}

impl Backend for WinSync {
    #[inline]
    unsafe fn queue(&mut self, io: Io) {
        debug_assert!(
            self.pending.is_none(),
            "the sync backend has a depth of one"
        );
        self.pending = Some(io);
    }

    fn submit_and_wait(&mut self, _min: u32, _deadline_ns: Option<u64>) -> io::Result<()> {
        let Some(io) = self.pending.take() else {
            return Ok(());
        };
        self.done = Some(Completion {
            slot: io.slot,
            result: self.perform(&io),
        });
        Ok(())
    }

    #[inline]
    fn reap(&mut self, mut f: impl FnMut(Completion)) {
        if let Some(c) = self.done.take() {
            f(c);
        }
    }
}

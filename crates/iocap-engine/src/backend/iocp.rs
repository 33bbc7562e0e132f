//! The Windows backend, as DiskSpd's: overlapped `ReadFile`/`WriteFile` on the worker's own
//! handle (opened with `FILE_FLAG_OVERLAPPED`, and `FILE_FLAG_NO_BUFFERING` /
//! `FILE_FLAG_WRITE_THROUGH` as the target asks), one I/O completion port per worker thread, and
//! completions reaped in batches with `GetQueuedCompletionStatusEx`.
//!
//! Each I/O goes to the kernel as it is queued (an overlapped call returns at once), so the
//! worker stamps each one as it queues it. One `OVERLAPPED` per slot, allocated at set-up and
//! never moved; a completion names its slot by which `OVERLAPPED` it carries. A call that fails
//! at once (not `ERROR_IO_PENDING`) posts nothing to the port: its failure is kept in a
//! preallocated list and handed out by the next reap. Flushes (`Op::Fsync`) are
//! `FlushFileBuffers`, which blocks the worker like fsync(2) on psync.
//!
//! Nothing here allocates or locks after [`Iocp::new`]; the only system calls are the I/O and the
//! wait for it.
//!
//! Dropped with I/O still posted (a loop that returned on a failed wait), the kernel would write
//! each one's status into its `OVERLAPPED` after the box was freed. So the drop cancels what is
//! posted (`CancelIoEx`) and takes every completion from the port before anything is freed;
//! where the port does not give them all back within [`DRAIN_MS`], the `OVERLAPPED`s are
//! leaked, never freed, as the queue leaks the buffers in that case.

use std::fs::File;
use std::io;

use windows_sys::Win32::Foundation::{
    CloseHandle, RtlNtStatusToDosError, HANDLE, INVALID_HANDLE_VALUE, WAIT_TIMEOUT,
};
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::Threading::INFINITE;
use windows_sys::Win32::System::IO::{
    CancelIoEx, CreateIoCompletionPort, GetQueuedCompletionStatusEx, OVERLAPPED, OVERLAPPED_ENTRY,
};

use super::{Backend, Completion, Io, Op};
use iocap_platform::win;

pub struct Iocp {
    /// The worker's own overlapped handle on the target (owned: closed on drop, after the
    /// port).
    file: File,
    port: HANDLE,
    /// One per slot; boxed so their addresses never change while the kernel holds them.
    ovs: Box<[OVERLAPPED]>,
    /// What each slot is doing (a durable write is flushed when it completes).
    ops: Box<[Op]>,
    /// Filled by `GetQueuedCompletionStatusEx`, `got` entries valid.
    entries: Box<[OVERLAPPED_ENTRY]>,
    got: usize,
    /// Completions known without the port (failed at once, flushes); capacity = depth.
    ready: Vec<Completion>,
    /// I/Os the port will post a completion for that have not been reaped.
    posted: usize,
}

/// How long a drop waits for the port to give back the completions of I/Os still posted.
pub const DRAIN_MS: u32 = 10_000;

// SAFETY: the port and handle are owned by this value and used by one thread at a time; the
// OVERLAPPED pointers inside are only our own boxes'.
unsafe impl Send for Iocp {}

impl Iocp {
    /// A port for `depth` I/Os in flight on `file`, which must have been opened (reopened) with
    /// FILE_FLAG_OVERLAPPED for this worker alone.
    pub fn new(file: File, depth: u32) -> io::Result<Self> {
        let depth = depth.max(1) as usize;
        // SAFETY: associates our own overlapped handle with a new port (key 0, one thread).
        let port = unsafe { CreateIoCompletionPort(win::raw(&file), std::ptr::null_mut(), 0, 1) };
        if port.is_null() || port == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            file,
            port,
            // SAFETY: an all-zero OVERLAPPED / OVERLAPPED_ENTRY is a valid value of each.
            ovs: (0..depth).map(|_| unsafe { std::mem::zeroed() }).collect(),
            ops: vec![Op::Read; depth].into_boxed_slice(),
            // SAFETY: as above.
            entries: (0..depth).map(|_| unsafe { std::mem::zeroed() }).collect(),
            got: 0,
            ready: Vec::with_capacity(depth),
            posted: 0,
        })
    }

    fn handle(&self) -> HANDLE {
        win::raw(&self.file)
    }

    /// The slot of a completed OVERLAPPED, from its place in `ovs`.
    #[inline]
    fn slot_of(&self, ov: *const OVERLAPPED) -> usize {
        (ov as usize - self.ovs.as_ptr() as usize) / std::mem::size_of::<OVERLAPPED>()
    }
}

impl Iocp {
    /// Takes up to a batch of completions from the port into `entries`, waiting up to
    /// `timeout_ms`; how many, or the Windows error (`WAIT_TIMEOUT` when none came).
    fn dequeue(&mut self, timeout_ms: u32) -> Result<u32, u32> {
        let mut n = 0u32;
        // SAFETY: `entries` is writable for its length; the port is ours.
        let ok = unsafe {
            GetQueuedCompletionStatusEx(
                self.port,
                self.entries.as_mut_ptr(),
                self.entries.len() as u32,
                &mut n,
                timeout_ms,
                0,
            )
        };
        if ok == 0 {
            return Err(win::last_error());
        }
        Ok(n)
    }

    /// Cancels the I/Os still posted and takes their completions from the port, up to
    /// [`DRAIN_MS`]; whether none is left.
    fn drain(&mut self) -> bool {
        if self.posted == 0 {
            return true;
        }
        // SAFETY: cancels this handle's I/O, issued by any thread; a null OVERLAPPED is "all".
        unsafe { CancelIoEx(self.handle(), std::ptr::null()) };
        let end = iocap_platform::clock::now_ns() + u64::from(DRAIN_MS) * 1_000_000;
        while self.posted > 0 {
            let left = end.saturating_sub(iocap_platform::clock::now_ns()) / 1_000_000;
            if left == 0 {
                return false;
            }
            match self.dequeue(left as u32) {
                Ok(n) => self.posted = self.posted.saturating_sub(n as usize),
                Err(_) => return false,
            }
        }
        true
    }
}

impl Drop for Iocp {
    fn drop(&mut self) {
        if !self.drain() {
            // the kernel may still write to them: never freed
            Box::leak(std::mem::take(&mut self.ovs));
        }
        // SAFETY: the port is ours and closed once, with nothing posted left (or the
        // OVERLAPPEDs it could still name leaked above).
        unsafe { CloseHandle(self.port) };
    }
}

impl Backend for Iocp {
    #[inline]
    unsafe fn queue(&mut self, io: Io) {
        let s = io.slot as usize;
        self.ops[s] = io.op;
        if io.op.is_sync() {
            let r = win::flush(&self.file);
            self.ready.push(Completion {
                slot: io.slot,
                result: r,
            });
            return;
        }
        let h = self.handle();
        let ov = &mut self.ovs[s];
        // SAFETY: a zeroed OVERLAPPED is valid; only the offset is set.
        *ov = unsafe { std::mem::zeroed() };
        ov.Anonymous.Anonymous.Offset = io.offset as u32;
        ov.Anonymous.Anonymous.OffsetHigh = (io.offset >> 32) as u32;
        let ovp: *mut OVERLAPPED = ov;
        // SAFETY: `io.buf` points to `io.len` bytes of the worker's slot buffer and `ovp` to this
        // slot's OVERLAPPED; both stay valid and untouched until the completion is reaped
        // (backend contract; `ovs` is never moved). The handle is overlapped, so the call
        // returns at once.
        let ok = unsafe {
            match io.op {
                Op::Read => ReadFile(h, io.buf, io.len, std::ptr::null_mut(), ovp),
                _ => WriteFile(h, io.buf, io.len, std::ptr::null_mut(), ovp),
            }
        };
        if ok == 0 {
            let e = win::last_error();
            if e != win::IO_PENDING {
                // nothing will be posted for this one
                self.ready.push(Completion {
                    slot: io.slot,
                    result: -(e as i32),
                });
                return;
            }
        }
        // pending, or success at once: the port gets the completion (no skip-on-success mode)
        self.posted += 1;
    }

    #[inline]
    fn submits_at_queue(&self) -> bool {
        true
    }

    #[inline]
    fn starts_in_queue(&self) -> bool {
        true
    }

    fn submit_and_wait(&mut self, min_complete: u32, deadline_ns: Option<u64>) -> io::Result<()> {
        let _ = min_complete;
        self.got = 0;
        let timeout = if !self.ready.is_empty() {
            0
        } else {
            match deadline_ns {
                None => INFINITE,
                Some(d) => {
                    let left = d.saturating_sub(iocap_platform::clock::now_ns());
                    left.div_ceil(1_000_000).min(u64::from(INFINITE - 1)) as u32
                }
            }
        };
        match self.dequeue(timeout) {
            Ok(n) => self.got = n as usize,
            Err(e) if e == WAIT_TIMEOUT => {}
            Err(e) => return Err(io::Error::from_raw_os_error(e as i32)),
        }
        Ok(())
    }

    #[inline]
    fn reap(&mut self, mut f: impl FnMut(Completion)) {
        while let Some(c) = self.ready.pop() {
            f(c);
        }
        let got = std::mem::take(&mut self.got);
        self.posted = self.posted.saturating_sub(got);
        for i in 0..got {
            let e = &self.entries[i];
            let s = self.slot_of(e.lpOverlapped);
            // the I/O's NTSTATUS is in its OVERLAPPED's Internal once it completed
            let status = self.ovs[s].Internal as u32 as i32;
            let mut result = if status >= 0 {
                e.dwNumberOfBytesTransferred as i32
            } else {
                // SAFETY: a pure conversion of a status code.
                -(unsafe { RtlNtStatusToDosError(status) } as i32)
            };
            if result >= 0 && self.ops[s] == Op::WriteDsync {
                let r = win::flush(&self.file);
                if r < 0 {
                    result = r;
                }
            }
            f(Completion {
                slot: s as u32,
                result,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use windows_sys::Win32::Storage::FileSystem::{FILE_FLAG_NO_BUFFERING, FILE_FLAG_OVERLAPPED};

    use super::*;
    use crate::backend::IoQueue;
    use crate::buffers::SlotBuffers;

    /// A loop that returns with reads in flight drops its port: the drop first takes back
    /// every completion the port still owes, so nothing is written to a freed OVERLAPPED.
    #[test]
    fn a_drop_with_reads_posted_takes_their_completions_first() {
        let d = tempfile::tempdir().unwrap();
        let f = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(d.path().join("f"))
            .unwrap();
        f.set_len(1 << 20).unwrap();
        let h = win::reopen(&f, true, FILE_FLAG_OVERLAPPED | FILE_FLAG_NO_BUFFERING).unwrap();
        let mut a = Iocp::new(h, 4).unwrap();
        let mut bufs = SlotBuffers::new(4, 4096, 1).unwrap();
        let mut q = IoQueue::new(&mut a, &mut bufs);
        for s in 0..4u32 {
            q.queue(s, Op::Read, u64::from(s) * 4096, 4096);
        }
        // returned without reaping: the queue leaves the buffers never freed
        drop(q);
        assert_eq!(a.posted, 4);
        assert!(a.drain());
        assert_eq!(a.posted, 0);
    }
}

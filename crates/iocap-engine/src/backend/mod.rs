//! The small table of operations every I/O backend provides, after fio's ioengines: queue an
//! I/O, hand the queue to the kernel and wait, pop completions. The worker loop is generic over
//! [`Backend`], so each backend is monomorphised into its own loop with no dynamic dispatch.
//! Two loops drive backends: the benchmark's [`worker`](crate::worker) and `iocap-verify`'s
//! page loop, which submits through the same backends as fio's verify uses the job's ioengine.
//!
//! Buffer contract: a backend receives raw buffer pointers from the worker's
//! [`SlotBuffers`](crate::buffers::SlotBuffers). The worker promises that a slot's buffer is not
//! touched from `queue` until that slot's completion is popped by `reap`.

#[cfg(windows)]
pub mod iocp;
#[cfg(target_os = "linux")]
pub mod psync;
#[cfg(target_os = "linux")]
pub mod uring;
#[cfg(windows)]
pub mod wsync;

use std::io;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    /// A write that is durable when it completes (RWF_DSYNC), as a database's log write; the
    /// verifier's (`iocap-verify`), never the benchmark worker's.
    WriteDsync,
    Fsync,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::WriteDsync => "write_dsync",
            Op::Fsync => "fsync",
        }
    }
}

/// One I/O request. `buf` points into the worker's slot buffers (null for fsync).
#[derive(Debug, Clone, Copy)]
pub struct Io {
    pub slot: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    pub buf: *mut u8,
}

/// A finished I/O: bytes transferred, or a negative errno (on Windows, a negative Win32 error
/// code).
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub slot: u32,
    pub result: i32,
}

pub trait Backend {
    /// Queues one I/O; it reaches the kernel at the next [`Backend::submit_and_wait`], or at once
    /// when [`Backend::submits_at_queue`]. The worker never has more than the backend's depth in
    /// flight.
    fn queue(&mut self, io: Io);

    /// Whether I/Os go to the kernel one by one as they are queued (each at the latest when the
    /// next is queued or the worker waits), so the worker stamps each one's submission time as it
    /// queues it rather than all of them before `submit_and_wait`.
    fn submits_at_queue(&self) -> bool {
        false
    }

    /// Whether `queue` itself starts the I/O (an overlapped call on Windows, which may even do
    /// the transfer before it returns), so its time in flight is stamped before the call rather
    /// than after. Only with [`Backend::submits_at_queue`].
    fn starts_in_queue(&self) -> bool {
        false
    }

    /// Switches between submitting each I/O as it is queued and submitting the queue with the
    /// wait (`--submit auto` tries both); backends without the choice ignore it.
    fn set_submit_each(&mut self, _each: bool) {}

    /// Submits everything queued and blocks until at least `min_complete` I/Os have completed,
    /// or until `deadline_ns` (CLOCK_MONOTONIC) passes when one is given. EINTR and a passed
    /// deadline return `Ok`.
    fn submit_and_wait(&mut self, min_complete: u32, deadline_ns: Option<u64>) -> io::Result<()>;

    /// Pops every available completion.
    fn reap(&mut self, f: impl FnMut(Completion));
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::os::fd::AsRawFd;

    use super::*;
    use crate::buffers::SlotBuffers;

    /// One I/O through `b`, waited for; its completion.
    fn one(b: &mut impl Backend, op: Op, bufs: &SlotBuffers, offset: u64, len: u32) -> Completion {
        b.queue(Io {
            slot: 0,
            op,
            offset,
            len,
            buf: bufs.ptr(0),
        });
        let mut done = None;
        while done.is_none() {
            b.submit_and_wait(1, None).unwrap();
            b.reap(|c| done = Some(c));
        }
        done.unwrap()
    }

    /// A durable write, then a read of it, through `b` on `f`.
    fn durable_write_reads_back(b: &mut impl Backend, f: &std::fs::File, bufs: &mut SlotBuffers) {
        bufs.slot_mut(0)[..4096].fill(0xA5);
        assert_eq!(one(b, Op::WriteDsync, bufs, 8192, 4096).result, 4096);
        bufs.slot_mut(0)[..4096].fill(0);
        assert_eq!(one(b, Op::Read, bufs, 8192, 4096).result, 4096);
        assert!(bufs.slot_mut(0)[..4096].iter().all(|x| *x == 0xA5));
        assert_eq!(f.metadata().unwrap().len(), 12288);
    }

    #[test]
    fn both_backends_write_durably_and_read_back() {
        let d = tempfile::tempdir().unwrap();
        let f = std::fs::File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(d.path().join("f"))
            .unwrap();
        let mut bufs = SlotBuffers::new(1, 4096, 1).unwrap();
        durable_write_reads_back(&mut psync::Psync::new(f.as_raw_fd()), &f, &mut bufs);
        if uring::probe().is_ok() {
            let mut u = uring::Uring::new(f.as_raw_fd(), 1, &bufs, false, false).unwrap();
            durable_write_reads_back(&mut u, &f, &mut bufs);
        }
    }
}

#[cfg(all(test, windows))]
mod windows_tests {
    use super::*;
    use crate::buffers::SlotBuffers;

    fn one(b: &mut impl Backend, op: Op, bufs: &SlotBuffers, offset: u64, len: u32) -> Completion {
        b.queue(Io {
            slot: 0,
            op,
            offset,
            len,
            buf: bufs.ptr(0),
        });
        let mut done = None;
        while done.is_none() {
            b.submit_and_wait(1, None).unwrap();
            b.reap(|c| done = Some(c));
        }
        done.unwrap()
    }

    #[test]
    fn both_backends_write_and_read_back_at_their_offsets() {
        use windows_sys::Win32::Storage::FileSystem::{
            FILE_FLAG_NO_BUFFERING, FILE_FLAG_OVERLAPPED,
        };
        let d = tempfile::tempdir().unwrap();
        let f = std::fs::File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(d.path().join("f"))
            .unwrap();
        f.set_len(1 << 20).unwrap();
        let mut bufs = SlotBuffers::new(1, 4096, 1).unwrap();
        let h =
            crate::win::reopen(&f, true, FILE_FLAG_OVERLAPPED | FILE_FLAG_NO_BUFFERING).unwrap();
        let mut a = iocp::Iocp::new(h, 1).unwrap();
        let mut s =
            wsync::WinSync::new(crate::win::reopen(&f, true, FILE_FLAG_NO_BUFFERING).unwrap());
        bufs.slot_mut(0)[..4096].fill(0xA5);
        assert_eq!(one(&mut a, Op::Write, &bufs, 8192, 4096).result, 4096);
        bufs.slot_mut(0)[..4096].fill(0x5A);
        assert_eq!(one(&mut s, Op::Write, &bufs, 65536, 4096).result, 4096);
        bufs.slot_mut(0)[..4096].fill(0);
        assert_eq!(one(&mut s, Op::Read, &bufs, 8192, 4096).result, 4096);
        assert!(bufs.slot_mut(0)[..4096].iter().all(|x| *x == 0xA5));
        assert_eq!(one(&mut a, Op::Read, &bufs, 65536, 4096).result, 4096);
        assert!(bufs.slot_mut(0)[..4096].iter().all(|x| *x == 0x5A));
        assert_eq!(one(&mut a, Op::Fsync, &bufs, 0, 0).result, 0);
        // past the end: an error, not a hang
        assert!(one(&mut a, Op::Read, &bufs, 2 << 20, 4096).result <= 0);
    }
}

//! Each backend of this system does one I/O of each kind and reads back what it wrote.

use super::*;
use crate::buffers::SlotBuffers;

/// One I/O through `b` (by way of the queue, as the loop), waited for; its completion.
fn one(b: &mut impl Backend, op: Op, bufs: &mut SlotBuffers, offset: u64, len: u32) -> Completion {
    let mut q = IoQueue::new(b, bufs);
    q.queue(0, op, offset, len);
    let mut done = None;
    while done.is_none() {
        q.submit_and_wait(1, None).unwrap();
        q.reap(|c, _| done = Some(c));
    }
    done.unwrap()
}

#[cfg(target_os = "linux")]
mod linux {
    use std::os::fd::AsRawFd;

    use super::*;

    /// A durable write, then a read of it, through `b` on `f`.
    fn durable_write_reads_back(b: &mut impl Backend, f: &std::fs::File, bufs: &mut SlotBuffers) {
        bufs.slot_mut(0)[..4096].fill(0xA5);
        assert_eq!(one(b, Op::WriteDsync, bufs, 8192, 4096).result, 4096);
        bufs.slot_mut(0)[..4096].fill(0);
        assert_eq!(one(b, Op::Read, bufs, 8192, 4096).result, 4096);
        assert!(bufs.slot_mut(0)[..4096].iter().all(|x| *x == 0xA5));
        assert_eq!(f.metadata().unwrap().len(), 12288);
        // both syncs complete with no bytes of their own
        assert_eq!(one(b, Op::Fsync, bufs, 0, 0).result, 0);
        assert_eq!(one(b, Op::Fdatasync, bufs, 0, 0).result, 0);
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
        match uring::probe() {
            Ok(()) => {
                let plain = Registration::Plain;
                let batch = iocap_model::SubmitMode::Batch;
                let mut u = uring::Uring::new(f.as_raw_fd(), 1, &bufs, plain, batch).unwrap();
                durable_write_reads_back(&mut u, &f, &mut bufs);
            }
            // a host without io_uring tests psync alone; CI's must have it
            Err(e) => assert!(
                std::env::var_os("CI").is_none(),
                "no io_uring under CI: {e}"
            ),
        }
    }
}

#[cfg(windows)]
mod windows {
    use super::*;

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
            iocap_platform::win::reopen(&f, true, FILE_FLAG_OVERLAPPED | FILE_FLAG_NO_BUFFERING)
                .unwrap();
        let mut a = iocp::Iocp::new(h, 1).unwrap();
        let mut s = wsync::WinSync::new(
            iocap_platform::win::reopen(&f, true, FILE_FLAG_NO_BUFFERING).unwrap(),
        );
        bufs.slot_mut(0)[..4096].fill(0xA5);
        assert_eq!(one(&mut a, Op::Write, &mut bufs, 8192, 4096).result, 4096);
        bufs.slot_mut(0)[..4096].fill(0x5A);
        assert_eq!(one(&mut s, Op::Write, &mut bufs, 65536, 4096).result, 4096);
        bufs.slot_mut(0)[..4096].fill(0);
        assert_eq!(one(&mut s, Op::Read, &mut bufs, 8192, 4096).result, 4096);
        assert!(bufs.slot_mut(0)[..4096].iter().all(|x| *x == 0xA5));
        assert_eq!(one(&mut a, Op::Read, &mut bufs, 65536, 4096).result, 4096);
        assert!(bufs.slot_mut(0)[..4096].iter().all(|x| *x == 0x5A));
        assert_eq!(one(&mut a, Op::Fsync, &mut bufs, 0, 0).result, 0);
        assert_eq!(one(&mut s, Op::Fdatasync, &mut bufs, 0, 0).result, 0);
        // past the end: an error, not a hang
        assert!(one(&mut a, Op::Read, &mut bufs, 2 << 20, 4096).result <= 0);
    }
}

//! The portable backend: pread/pwrite/fsync on the calling thread. It works wherever a file
//! descriptor does (seccomp profiles that forbid io_uring, old kernels) and is the reference the
//! io_uring figures can be checked against. Its depth is one: the planner gives it one context
//! per outstanding I/O.

use std::io;
use std::os::fd::RawFd;

use super::{Backend, Completion, Io, Op};

pub struct Psync {
    fd: RawFd,
    pending: Option<Io>,
    done: Option<Completion>,
}

impl Psync {
    pub fn new(fd: RawFd) -> Self {
        Self {
            fd,
            pending: None,
            done: None,
        }
    }
}

impl Psync {
    /// Performs `io` with one system call (two for a durable write where RWF_DSYNC is not
    /// taken); returns the call's result: bytes transferred, or -1 with errno set.
    fn perform(&self, io: &Io) -> isize {
        // SAFETY: (every call below) `io.buf` points to `io.len` bytes of the worker's slot
        // buffer, which stays valid and untouched until `submit_and_wait` returns (module
        // contract in `backend`).
        unsafe {
            match io.op {
                Op::Read => libc::pread(self.fd, io.buf.cast(), io.len as usize, offset(io)),
                Op::Write => libc::pwrite(self.fd, io.buf.cast(), io.len as usize, offset(io)),
                Op::WriteDsync => self.write_dsync(io),
                Op::Fsync => libc::fsync(self.fd) as isize,
                Op::Fdatasync => libc::fdatasync(self.fd) as isize,
            }
        }
    }

    /// A write durable on return: pwritev2 with RWF_DSYNC, or pwrite then fdatasync where the
    /// kernel or the file system does not take the flag.
    ///
    /// # Safety
    /// `io.buf` points to `io.len` readable bytes that stay valid until the call returns.
    unsafe fn write_dsync(&self, io: &Io) -> isize {
        let iov = libc::iovec {
            iov_base: io.buf.cast(),
            iov_len: io.len as usize,
        };
        // SAFETY: `iov` describes the caller's buffer (see the function's contract); the kernel
        // only reads it.
        let rc = unsafe { libc::pwritev2(self.fd, &iov, 1, offset(io), libc::RWF_DSYNC) };
        if rc >= 0 || !matches!(last_errno(), libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL) {
            return rc;
        }
        // SAFETY: as above.
        let rc = unsafe { libc::pwrite(self.fd, io.buf.cast(), io.len as usize, offset(io)) };
        // SAFETY: a plain fdatasync on our descriptor.
        if rc >= 0 && unsafe { libc::fdatasync(self.fd) } != 0 {
            return -1;
        }
        rc
    }
}

fn offset(io: &Io) -> libc::off_t {
    io.offset as libc::off_t
}

fn last_errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

impl Backend for Psync {
    #[inline]
    unsafe fn queue(&mut self, io: Io) {
        debug_assert!(self.pending.is_none(), "psync has a depth of one");
        self.pending = Some(io);
    }

    fn submit_and_wait(&mut self, _min: u32, _deadline_ns: Option<u64>) -> io::Result<()> {
        let Some(io) = self.pending.take() else {
            return Ok(());
        };
        let result = loop {
            let rc = self.perform(&io);
            if rc >= 0 {
                break rc as i32;
            }
            let errno = last_errno();
            if errno != libc::EINTR {
                break -errno;
            }
        };
        self.done = Some(Completion {
            slot: io.slot,
            result,
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

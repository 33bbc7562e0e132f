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

impl Backend for Psync {
    #[inline]
    fn queue(&mut self, io: Io) {
        debug_assert!(self.pending.is_none(), "psync has a depth of one");
        self.pending = Some(io);
    }

    fn submit_and_wait(&mut self, _min: u32, _deadline_ns: Option<u64>) -> io::Result<()> {
        let Some(io) = self.pending.take() else {
            return Ok(());
        };
        let result = loop {
            // SAFETY: `io.buf` points to `io.len` bytes of the worker's slot buffer, which stays
            // valid and untouched until this call returns (module contract in `backend`).
            let rc = unsafe {
                match io.op {
                    Op::Read => libc::pread(
                        self.fd,
                        io.buf.cast(),
                        io.len as usize,
                        io.offset as libc::off_t,
                    ),
                    Op::Write => libc::pwrite(
                        self.fd,
                        io.buf.cast(),
                        io.len as usize,
                        io.offset as libc::off_t,
                    ),
                    Op::Fsync => libc::fsync(self.fd) as isize,
                }
            };
            if rc >= 0 {
                break rc as i32;
            }
            let errno = io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
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

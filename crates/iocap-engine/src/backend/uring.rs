//! The io_uring backend: one ring per worker thread, created on that thread.
//!
//! What keeps the CPU cost per I/O low, and why each is here:
//! - the target file is registered (no fd lookup per I/O) and the slot buffers are registered
//!   (no page pinning per I/O: READ_FIXED / WRITE_FIXED);
//! - the ring fd is registered (no fd lookup per `io_uring_enter`);
//! - SINGLE_ISSUER + DEFER_TASKRUN: completions are posted only when this thread asks for them,
//!   so it is not interrupted for each one; COOP_TASKRUN where DEFER_TASKRUN is missing;
//! - by default ([`SubmitMode::Batch`](iocap_model::SubmitMode)) the I/Os freed by one reap
//!   are queued and submitted in the `io_uring_enter` that waits for the next completion: one
//!   call per loop, the least CPU per I/O;
//! - with `SubmitMode::Each` each I/O is submitted as soon as its slot is free, with its own
//!   `io_uring_enter` (fio's default, `iodepth_batch_submit=1`): a virtual disk that handles a
//!   batch of requests before signalling any of them (this VM's virtio disk does) completes
//!   fewer I/Os per second at qd 32 when they arrive in batches. Each I/O is held only until
//!   the next one is queued, so the last of a loop goes in the enter that waits: one system
//!   call per I/O, also at qd 1.
//!
//! - with `SubmitMode::Auto` the worker switches between the two (`set_submit_each`) while it
//!   tries both, then keeps one (see the worker).
//!
//! No SQPOLL and no IOPOLL: those busy-poll a core, which would make the CPU figures meaningless
//! by default.

use std::io;
use std::os::fd::{AsRawFd, RawFd};

use io_uring::{opcode, squeue, types, IoUring};

use iocap_model::{EngineFeature, SubmitMode};

use super::{Backend, Completion, Io, Op, Opened, Registration};
use crate::buffers::SlotBuffers;

pub struct Uring {
    ring: IoUring,
    /// Index of the registered ring fd, when the kernel has IORING_REGISTER_RING_FDS.
    ring_index: Option<u32>,
    /// SQEs queued since the last enter.
    queued: u32,
    /// Submit each SQE as it is queued (see the module doc).
    submit_each: bool,
    /// An error from a submission made in `queue`, returned by the next `submit_and_wait`.
    deferred_error: Option<io::Error>,
    fd: RawFd,
    fixed_file: bool,
    fixed_bufs: bool,
    /// Engine features that ended up in use, and why one could not be used, until the
    /// dispatch takes them ([`Uring::take_opened`]).
    opened: Opened,
}

const IORING_ENTER_GETEVENTS: u32 = 1;
const IORING_ENTER_EXT_ARG: u32 = 1 << 3;
const IORING_ENTER_REGISTERED_RING: u32 = 1 << 4;
const IORING_REGISTER_RING_FDS: u32 = 20;

#[repr(C)]
struct KernelTimespec {
    tv_sec: i64,
    tv_nsec: i64,
}

#[repr(C)]
struct GeteventsArg {
    sigmask: u64,
    sigmask_sz: u32,
    min_wait_usec: u32,
    ts: u64,
}

#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// Registers the ring's own fd (Linux 5.18+) so each enter skips the fd table lookup; returns
/// the index to pass instead of the fd.
fn register_ring_fd(ring_fd: RawFd) -> Option<u32> {
    let mut up = RsrcUpdate {
        offset: u32::MAX,
        resv: 0,
        data: ring_fd as u64,
    };
    // SAFETY: IORING_REGISTER_RING_FDS reads and updates one RsrcUpdate.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring_fd,
            IORING_REGISTER_RING_FDS,
            &mut up as *mut RsrcUpdate,
            1u32,
        )
    };
    (rc == 1).then_some(up.offset)
}

/// Whether a ring can be set up here at all (seccomp, `kernel.io_uring_disabled`, old kernel).
pub(crate) fn probe() -> Result<(), String> {
    if std::env::var_os("IOCAP_TEST_NO_IO_URING").is_some() {
        return Err("disabled by IOCAP_TEST_NO_IO_URING".into());
    }
    IoUring::new(2).map(drop).map_err(|e| e.to_string())
}

/// Whether this kernel gives iocap an io_uring, in words for `iocap --version --verbose`: the
/// engine's own probe (a ring of two entries), and the sysctl that may explain a refusal. It
/// lives beside the probe, not with the host's facts in `iocap_platform::host`.
pub fn io_uring_support() -> String {
    let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .map(|v| format!("kernel.io_uring_disabled = {}", v.trim()))
        .ok();
    match (probe(), sysctl) {
        (Ok(()), Some(s)) => format!("available ({s})"),
        (Ok(()), None) => "available".into(),
        (Err(e), Some(s)) => format!("not available: {e} ({s})"),
        (Err(e), None) => format!("not available: {e}"),
    }
}

fn build_ring(entries: u32, features: &mut Vec<EngineFeature>) -> io::Result<IoUring> {
    let cq = entries * 2;
    type Tweak = fn(&mut io_uring::Builder);
    let attempts: [(Option<EngineFeature>, Tweak); 3] = [
        (Some(EngineFeature::DeferTaskrun), |b| {
            b.setup_single_issuer().setup_defer_taskrun();
        }),
        (Some(EngineFeature::CoopTaskrun), |b| {
            b.setup_coop_taskrun();
        }),
        (None, |_| {}),
    ];
    let mut last = None;
    for (name, tweak) in attempts {
        let mut b = IoUring::builder();
        b.setup_cqsize(cq).setup_clamp();
        tweak(&mut b);
        match b.build(entries) {
            Ok(r) => {
                features.extend(name);
                return Ok(r);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("io_uring setup failed")))
}

impl Uring {
    /// Sets up a ring for `depth` I/Os in flight on `fd`, registering the file and `bufs` when
    /// [`Registration::Registered`] (without: plain READ/WRITE on the fd, as fio's io_uring
    /// engine does by default; the ring fd itself is registered either way).
    ///
    /// Registration failures (RLIMIT_MEMLOCK for buffers, mostly) are not fatal: the backend
    /// falls back to plain reads and writes and says so in `notes`.
    pub fn new(
        fd: RawFd,
        depth: u32,
        bufs: &SlotBuffers,
        registration: Registration,
        submit: SubmitMode,
    ) -> io::Result<Self> {
        let register = registration == Registration::Registered;
        let mut features = Vec::new();
        let mut notes = Vec::new();
        let entries = (depth + 1).next_power_of_two();
        let ring = build_ring(entries, &mut features)?;
        let ring_index = register_ring_fd(ring.as_raw_fd());
        if ring_index.is_some() {
            features.push(EngineFeature::RegisteredRing);
        }
        let fixed_file = register
            && match ring.submitter().register_files(&[fd]) {
                Ok(()) => {
                    features.push(EngineFeature::RegisteredFiles);
                    true
                }
                Err(e) => {
                    notes.push(format!(
                        "could not register the file ({e}); using plain fds"
                    ));
                    false
                }
            };
        let mut fixed = false;
        if register {
            let iov = bufs.iovecs();
            // SAFETY: the iovecs describe `bufs`, which the worker keeps alive and unmoved until
            // this ring is dropped (buffers module contract); the ring unregisters on drop.
            match unsafe { ring.submitter().register_buffers(&iov) } {
                Ok(()) => {
                    features.push(EngineFeature::RegisteredBuffers);
                    fixed = true;
                }
                Err(e) => notes.push(format!(
                    "could not register I/O buffers ({e}); raise RLIMIT_MEMLOCK (ulimit -l) for \
                     fixed buffers"
                )),
            }
        }
        Ok(Self {
            ring,
            ring_index,
            queued: 0,
            submit_each: submit == SubmitMode::Each,
            deferred_error: None,
            fd,
            fixed_file,
            fixed_bufs: fixed,
            opened: Opened { features, notes },
        })
    }

    /// What setting the ring up brought; taken once, by the dispatch.
    pub fn take_opened(&mut self) -> Opened {
        std::mem::take(&mut self.opened)
    }

    #[inline]
    fn entry(&self, io: &Io) -> squeue::Entry {
        macro_rules! rw {
            ($fixed:ident, $plain:ident, $fd:expr, $flags:expr) => {
                if self.fixed_bufs {
                    opcode::$fixed::new($fd, io.buf, io.len, io.slot as u16)
                        .offset(io.offset)
                        .rw_flags($flags)
                        .build()
                } else {
                    opcode::$plain::new($fd, io.buf, io.len)
                        .offset(io.offset)
                        .rw_flags($flags)
                        .build()
                }
            };
        }
        let (file, fd) = (types::Fixed(0), types::Fd(self.fd));
        let e = match (io.op, self.fixed_file) {
            (Op::Read, true) => rw!(ReadFixed, Read, file, 0),
            (Op::Read, false) => rw!(ReadFixed, Read, fd, 0),
            (Op::Write, true) => rw!(WriteFixed, Write, file, 0),
            (Op::Write, false) => rw!(WriteFixed, Write, fd, 0),
            (Op::WriteDsync, true) => rw!(WriteFixed, Write, file, libc::RWF_DSYNC),
            (Op::WriteDsync, false) => rw!(WriteFixed, Write, fd, libc::RWF_DSYNC),
            // Drain: the fsync starts only after every earlier write has completed, as
            // fsync(2) after those writes would.
            (Op::Fsync, true) => opcode::Fsync::new(file)
                .build()
                .flags(squeue::Flags::IO_DRAIN),
            (Op::Fsync, false) => opcode::Fsync::new(fd)
                .build()
                .flags(squeue::Flags::IO_DRAIN),
            (Op::Fdatasync, true) => opcode::Fsync::new(file)
                .flags(types::FsyncFlags::DATASYNC)
                .build()
                .flags(squeue::Flags::IO_DRAIN),
            (Op::Fdatasync, false) => opcode::Fsync::new(fd)
                .flags(types::FsyncFlags::DATASYNC)
                .build()
                .flags(squeue::Flags::IO_DRAIN),
        };
        e.user_data(u64::from(io.slot))
    }

    /// The ring to pass to `io_uring_enter` and the flag that says how.
    #[inline]
    fn enter_fd(&self) -> (libc::c_int, u32) {
        match self.ring_index {
            Some(i) => (i as libc::c_int, IORING_ENTER_REGISTERED_RING),
            None => (self.ring.as_raw_fd(), 0),
        }
    }

    /// Submits what is queued without waiting (and, with DEFER_TASKRUN, without posting
    /// completions: that happens in `submit_and_wait`).
    #[inline]
    fn submit_now(&mut self) {
        let (fd, flags) = self.enter_fd();
        // SAFETY: a plain io_uring_enter on our own ring, no argument pointer.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                fd,
                self.queued,
                0u32,
                flags,
                std::ptr::null::<libc::c_void>(),
                0usize,
            )
        };
        if rc >= 0 {
            self.queued -= (rc as u32).min(self.queued);
            return;
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            // left queued: the next enter submits them
            Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN) => {}
            _ => {
                if self.deferred_error.is_none() {
                    self.deferred_error = Some(e);
                }
            }
        }
    }
}

impl Backend for Uring {
    #[inline]
    unsafe fn queue(&mut self, io: Io) {
        if self.submit_each && self.queued > 0 {
            // the previous I/O goes now; this one goes with the next I/O or with the wait
            self.submit_now();
        }
        let e = self.entry(&io);
        // SAFETY: the SQE refers to `io.buf`, a slot buffer that stays valid and untouched until
        // this slot's completion is reaped (backend contract), and to registered file 0 or `fd`,
        // which outlives the ring. The SQ has room for the worker's depth plus one.
        let pushed = unsafe { self.ring.submission().push(&e) };
        self.queued += 1;
        debug_assert!(pushed.is_ok(), "submission queue sized for the depth");
        if pushed.is_err() {
            // Cannot happen with the sizing above; submit to make room rather than drop the I/O.
            let _ = self.ring.submit();
            // SAFETY: as above.
            let _ = unsafe { self.ring.submission().push(&e) };
        }
    }

    #[inline]
    fn submits_at_queue(&self) -> bool {
        self.submit_each
    }

    fn set_submit_each(&mut self, each: bool) {
        // An SQE held back in each mode goes with the next enter either way.
        self.submit_each = each;
    }

    #[inline]
    fn submit_and_wait(&mut self, min_complete: u32, deadline_ns: Option<u64>) -> io::Result<()> {
        if let Some(e) = self.deferred_error.take() {
            return Err(e);
        }
        let to_submit = std::mem::take(&mut self.queued);
        // GETEVENTS always: with DEFER_TASKRUN completions are posted only inside an enter that
        // asks for events.
        let mut flags = IORING_ENTER_GETEVENTS;
        let (fd, reg) = self.enter_fd();
        flags |= reg;
        let ts;
        let arg;
        let (argp, argsz) = match deadline_ns {
            None => (std::ptr::null(), 0),
            Some(deadline) => {
                let wait = deadline
                    .saturating_sub(iocap_platform::clock::now_ns())
                    .max(1_000);
                ts = KernelTimespec {
                    tv_sec: (wait / 1_000_000_000) as i64,
                    tv_nsec: (wait % 1_000_000_000) as i64,
                };
                arg = GeteventsArg {
                    sigmask: 0,
                    sigmask_sz: 0,
                    min_wait_usec: 0,
                    ts: &ts as *const KernelTimespec as u64,
                };
                flags |= IORING_ENTER_EXT_ARG;
                (
                    &arg as *const GeteventsArg as *const libc::c_void,
                    std::mem::size_of::<GeteventsArg>(),
                )
            }
        };
        // SAFETY: a plain io_uring_enter on our own ring; `argp` is null or points to a
        // GeteventsArg (and its timespec) that live until the call returns.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                fd,
                to_submit,
                min_complete,
                flags,
                argp,
                argsz,
            )
        };
        if rc >= 0 {
            if (rc as u32) < to_submit {
                // the kernel took fewer SQEs than queued (EAGAIN-like pressure): retry next time
                self.queued = to_submit - rc as u32;
            }
            return Ok(());
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) | Some(libc::ETIME) | Some(libc::EBUSY) | Some(libc::EAGAIN) => {
                self.queued = to_submit;
                Ok(())
            }
            _ => Err(e),
        }
    }

    #[inline]
    fn reap(&mut self, mut f: impl FnMut(Completion)) {
        for cqe in self.ring.completion() {
            f(Completion {
                slot: cqe.user_data() as u32,
                result: cqe.result(),
            });
        }
    }
}

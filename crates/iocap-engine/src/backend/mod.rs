//! The small table of operations every I/O backend provides, after fio's ioengines: queue an
//! I/O, hand the queue to the kernel and wait, pop completions. The engine's one I/O loop
//! ([`IoQueue::drive`], in `policy`) is generic over [`Backend`], so each backend is
//! monomorphised into its own loop with no dynamic dispatch. Three callers run that loop, each
//! with a [`Policy`] of its own rather than a loop: the benchmark's [`worker`](crate::worker),
//! `iocap-verify`'s page slots (through the same backends, as fio's verify uses the job's
//! ioengine) and `iocap-replay`'s driver.
//!
//! Adding a backend (docs/ARCHITECTURE.md, "Where to add"): its file here implementing
//! [`Backend`], and its line in each match of [`EngineKind`] below (its name, whether it is one
//! I/O per thread, how `auto` comes to it, and how it opens in [`drive`]). The runner, verify and
//! replay reach backends only through [`drive`], so nothing else changes.
//!
//! Buffer contract: a backend receives raw buffer pointers into a
//! [`SlotBuffers`](crate::buffers::SlotBuffers), so [`Backend::queue`] is `unsafe`: its caller
//! promises that a slot's buffer is not touched from `queue` until that slot's completion is
//! popped by `reap`. [`IoQueue`] is the one caller, and checks every slot it lends or queues;
//! a policy reaches it only through [`Fill`], and the loop alone waits and reaps. [`drive`]
//! hands each caller its queue. `Backend` stays public (and `queue` `unsafe`) because other
//! crates name it as a bound and replay's tests implement it with a mock device; an [`Io`]'s
//! buffer pointer is the engine's alone.

#[cfg(test)]
mod fake;
#[cfg(windows)]
mod iocp;
#[cfg(target_os = "linux")]
mod psync;
#[cfg(test)]
mod tests;
#[cfg(target_os = "linux")]
pub(crate) mod uring;
#[cfg(windows)]
mod wsync;

#[cfg(target_os = "linux")]
pub use uring::io_uring_support;

use std::io;

use iocap_model::{Engine, EngineChoice, EngineFeature, FaultOp, SubmitMode};

use crate::buffers::SlotBuffers;
mod policy;
mod queue;

pub use policy::{Fill, Next, Policy};
pub use queue::IoQueue;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    /// A write that is durable when it completes (RWF_DSYNC), as a database's log write; the
    /// verifier's (`iocap-verify`), never the benchmark worker's.
    WriteDsync,
    Fsync,
    /// fdatasync(2): the data and what reading it back needs, not the file's times (no journal
    /// commit for a write into blocks already allocated). On Windows the same flush as `Fsync`.
    Fdatasync,
}

impl Op {
    pub fn name(self) -> &'static str {
        self.fault_op().name()
    }

    /// The name a result gives this call when it fails (`IoFault::op`).
    pub fn fault_op(self) -> FaultOp {
        match self {
            Op::Read => FaultOp::Read,
            Op::Write => FaultOp::Write,
            Op::WriteDsync => FaultOp::WriteDsync,
            Op::Fsync => FaultOp::Fsync,
            Op::Fdatasync => FaultOp::Fdatasync,
        }
    }

    /// A flush of the file (no data of its own).
    pub fn is_sync(self) -> bool {
        matches!(self, Op::Fsync | Op::Fdatasync)
    }
}

/// One I/O request, as [`Backend::queue`] gets it. Only the engine's [`IoQueue`] makes one:
/// `buf`, a pointer into a slot's buffer (null for a flush), is the engine's alone, so another
/// crate's backend (a test's mock) sees what the I/O is but never its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Io {
    pub slot: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    pub(crate) buf: *mut u8,
}

/// A finished I/O: bytes transferred, or a negative errno (on Windows, a negative Win32 error
/// code).
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub slot: u32,
    pub result: i32,
}

/// An engine's way to the kernel. The engine's loop uses it through [`crate::IoQueue`], which
/// keeps the buffer contract; only the queue calls [`Backend::queue`].
pub trait Backend {
    /// Queues one I/O; it reaches the kernel at the next [`Backend::submit_and_wait`], or at once
    /// when [`Backend::submits_at_queue`].
    ///
    /// # Safety
    /// `io.buf` points to `io.len` bytes (or is null for a flush) that stay allocated, and that
    /// nothing else reads or writes, until this I/O's completion has been reaped; `io.slot` is
    /// below the backend's depth and has no other I/O in flight.
    unsafe fn queue(&mut self, io: Io);

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

/// The engines this build has, each one backend of this module: io_uring and psync on Linux,
/// IOCP and sync on Windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    #[cfg(target_os = "linux")]
    IoUring,
    #[cfg(target_os = "linux")]
    Psync,
    /// Windows: overlapped I/O on an I/O completion port per thread, as DiskSpd.
    #[cfg(windows)]
    Iocp,
    /// Windows: positioned ReadFile/WriteFile on blocking handles, a thread per outstanding I/O.
    #[cfg(windows)]
    Sync,
}

impl EngineKind {
    /// What a result records for this engine.
    pub fn engine(self) -> Engine {
        match self {
            #[cfg(target_os = "linux")]
            EngineKind::IoUring => Engine::IoUring,
            #[cfg(target_os = "linux")]
            EngineKind::Psync => Engine::Psync,
            #[cfg(windows)]
            EngineKind::Iocp => Engine::Iocp,
            #[cfg(windows)]
            EngineKind::Sync => Engine::Sync,
        }
    }

    pub fn name(self) -> &'static str {
        self.engine().name()
    }

    /// Whether the engine has one I/O in flight per thread (psync, sync), so a queue depth is
    /// that many threads.
    pub fn one_io_per_thread(self) -> bool {
        match self {
            #[cfg(target_os = "linux")]
            EngineKind::IoUring => false,
            #[cfg(target_os = "linux")]
            EngineKind::Psync => true,
            #[cfg(windows)]
            EngineKind::Iocp => false,
            #[cfg(windows)]
            EngineKind::Sync => true,
        }
    }

    /// Whether this is io_uring (whose submission modes are recorded).
    pub fn is_uring(self) -> bool {
        self.engine() == Engine::IoUring
    }

    /// The engine `choice` comes to on this host, and, when `auto` fell back, why the engine it
    /// prefers could not be set up; `Err` says why when an engine this host lacks was asked for
    /// by name. The reasons are the probe's own words, for each caller to put in its sentence.
    #[cfg(target_os = "linux")]
    pub fn resolve(choice: EngineChoice) -> Result<(EngineKind, Option<String>), String> {
        use EngineChoice::*;
        match choice {
            Psync => Ok((EngineKind::Psync, None)),
            IoUring | IoUringUnregistered => uring::probe().map(|_| (EngineKind::IoUring, None)),
            Auto => Ok(match uring::probe() {
                Ok(()) => (EngineKind::IoUring, None),
                Err(e) => (EngineKind::Psync, Some(e)),
            }),
        }
    }

    /// On Windows: `auto` (and `iocp`) is the IOCP engine, always there; `psync` (and `sync`)
    /// the synchronous one; io_uring is Linux's and is refused by name.
    #[cfg(windows)]
    pub fn resolve(choice: EngineChoice) -> Result<(EngineKind, Option<String>), String> {
        use EngineChoice::*;
        match choice {
            Auto => Ok((EngineKind::Iocp, None)),
            Psync => Ok((EngineKind::Sync, None)),
            IoUring | IoUringUnregistered => Err(
                "io_uring is Linux's; on Windows the engines are iocp (auto) and sync (psync)"
                    .into(),
            ),
        }
    }
}

/// Whether io_uring registers the file and the I/O buffers (fixed files and buffers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    /// As a test runs io_uring by default (`--engine io_uring`).
    Registered,
    /// Plain READ and WRITE on the descriptor, as fio's io_uring engine runs by default
    /// (`io_uring_unregistered`; verify and replay, whose buffers may pass RLIMIT_MEMLOCK).
    Plain,
}

/// How a loop wants its backend: what differs between the runner, verify and replay.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The most I/Os the loop keeps in flight on this backend.
    pub depth: u32,
    pub registration: Registration,
    /// io_uring: `Each` submits every I/O as it is queued, the others with the wait (`Auto`
    /// starts so and lets the loop switch with [`Backend::set_submit_each`]).
    pub submit: SubmitMode,
}

/// The file a backend does its I/O on.
#[cfg(target_os = "linux")]
pub struct Handle<'a> {
    /// The prepared (checked, opened) file: backends use its descriptor.
    pub file: &'a std::fs::File,
}

/// The file a backend does its I/O on: on Windows each backend has a handle of its own on the
/// prepared file, which `reopen` makes (`true`: overlapped, for IOCP).
#[cfg(windows)]
pub struct Handle<'a> {
    pub reopen: &'a dyn Fn(bool) -> io::Result<std::fs::File>,
}

/// What opening the backend brought: the features it uses and what it could not use.
#[derive(Debug, Clone, Default)]
pub struct Opened {
    pub features: Vec<EngineFeature>,
    pub notes: Vec<String>,
}

/// Why a backend could not be opened: the step, and the system's error.
#[derive(Debug, thiserror::Error)]
#[error("cannot {step}: {source}")]
pub struct OpenError {
    pub step: &'static str,
    #[source]
    pub source: io::Error,
}

impl From<OpenError> for io::Error {
    fn from(e: OpenError) -> Self {
        io::Error::new(e.source.kind(), e.to_string())
    }
}

/// What runs on any backend: the runner's worker, verify's slots, replay's driver. Its `run` is
/// monomorphised for each backend and gets the backend as an [`IoQueue`] over the buffers, on
/// which it runs the engine's loop ([`IoQueue::drive`]) with its [`Policy`].
pub trait Drive {
    type Out;
    fn run<B: Backend>(self, q: IoQueue<'_, B>, opened: Opened) -> Self::Out;
}

/// Opens `kind`'s backend on `handle` as `o` asks and runs `d` on it: the one place a backend
/// is chosen.
pub fn drive<D: Drive>(
    kind: EngineKind,
    handle: Handle<'_>,
    bufs: &mut SlotBuffers,
    o: Options,
    d: D,
) -> Result<D::Out, OpenError> {
    #[cfg(target_os = "linux")]
    use std::os::fd::AsRawFd;
    let failed = |step| move |source| OpenError { step, source };
    match kind {
        #[cfg(target_os = "linux")]
        EngineKind::Psync => {
            let mut b = psync::Psync::new(handle.file.as_raw_fd());
            Ok(d.run(IoQueue::new(&mut b, bufs), Opened::default()))
        }
        #[cfg(target_os = "linux")]
        EngineKind::IoUring => {
            let fd = handle.file.as_raw_fd();
            let mut b = uring::Uring::new(fd, o.depth, bufs, o.registration, o.submit)
                .map_err(failed("set up an io_uring ring"))?;
            let opened = b.take_opened();
            Ok(d.run(IoQueue::new(&mut b, bufs), opened))
        }
        #[cfg(windows)]
        EngineKind::Iocp => {
            let f = (handle.reopen)(true).map_err(failed("open the file again for a worker"))?;
            let mut b =
                iocp::Iocp::new(f, o.depth).map_err(failed("set up an I/O completion port"))?;
            let opened = Opened {
                features: vec![EngineFeature::CompletionPortPerThread],
                notes: vec![],
            };
            Ok(d.run(IoQueue::new(&mut b, bufs), opened))
        }
        #[cfg(windows)]
        EngineKind::Sync => {
            let f = (handle.reopen)(false).map_err(failed("open the file again for a worker"))?;
            Ok(d.run(
                IoQueue::new(&mut wsync::WinSync::new(f), bufs),
                Opened::default(),
            ))
        }
    }
}

//! The mixed phase: threads write and read the file the way a database does (see
//! [`super::slots`]) until the duration ends or something halts the run, while this thread
//! makes the journal durable every 100 ms. Each thread drives its slots through the engine's
//! backend: io_uring (Windows: IOCP) gives `threads` threads of `qd` slots each, psync (sync)
//! `threads × qd` threads of one slot, so either way a queue depth above 1 is real concurrency.
//! On Windows each thread has a handle of its own on the very file checked (ReOpenFile, as the
//! engine's workers), overlapped for IOCP, unbuffered when the run is; a durable write is the
//! write and then FlushFileBuffers, as the engine's Windows backends make it.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use iocap_engine::backend::{self, Backend, Drive, Handle, Opened, Options, Registration};
use iocap_engine::{AlignedBuf, EngineKind, IoQueue, SlotBuffers};
use iocap_model::{SubmitMode, VerifyCounts};

use super::config::VerifyConfig;
use super::shared::{Shared, MAX_SCAN_PAGES};
use super::slots;
use crate::error::{buffer, io_err, VerifyError};

/// Runs the phase on `engine` for `cfg.duration`; adds what every thread did to `counts`.
/// `direct`: whether the run's file bypasses the cache (the Windows threads' handles do too).
pub(crate) fn run(
    sh: &Shared,
    engine: EngineKind,
    direct: bool,
    cfg: &VerifyConfig,
    counts: &mut VerifyCounts,
) -> Result<(), VerifyError> {
    let (threads, depth) = if engine.one_io_per_thread() {
        (u64::from(cfg.threads * cfg.qd), 1)
    } else {
        (u64::from(cfg.threads), cfg.qd as usize)
    };
    let deadline = Instant::now() + cfg.duration;
    let results: Vec<Result<VerifyCounts, VerifyError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| s.spawn(move || thread(sh, engine, direct, t, depth)))
            .collect();
        sync_journal_until(sh, deadline);
        sh.halt.store(true, Ordering::SeqCst);
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(VerifyError::invalid("a verify thread panicked".into()))
                })
            })
            .collect()
    });
    for r in results {
        add_counts(counts, &r?);
    }
    match sh.fatal.lock().unwrap_or_else(|p| p.into_inner()).take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Sleeps until `deadline` or a halt, making the journal durable every 100 ms: the power-cut
/// durability point of its records.
fn sync_journal_until(sh: &Shared, deadline: Instant) {
    while Instant::now() < deadline && !sh.halted() {
        std::thread::sleep(Duration::from_millis(100).min(deadline - Instant::now().min(deadline)));
        if let Some(Err(e)) = sh.journal.map(|j| j.sync()) {
            sh.fail(io_err("cannot sync the journal")(e));
            break;
        }
    }
}

/// Thread `t`: `depth` slots on a backend of its own, set up on this thread (an io_uring ring
/// is used by the thread that made it).
fn thread(
    sh: &Shared,
    engine: EngineKind,
    direct: bool,
    t: u64,
    depth: usize,
) -> Result<VerifyCounts, VerifyError> {
    let pb = sh.id.page_bytes;
    let mut bufs = SlotBuffers::new(depth, pb * MAX_SCAN_PAGES, sh.id.seed)
        .map_err(io_err("cannot allocate buffers"))?;
    let scratch = buffer(pb)?;
    let seed = stream_seed(engine, sh.id.seed, t);
    // on an error the kernel may still use the buffers: the queue left them never to be freed
    drive(sh, engine, direct, depth, &mut bufs, scratch, seed).map_err(io_err(engine.name()))
}

/// Runs the slots of one thread on a backend of `engine` over `sh.f` (on Windows a handle of
/// the thread's own: the same file reopened, overlapped for IOCP, unbuffered when `direct`).
fn drive(
    sh: &Shared,
    engine: EngineKind,
    direct: bool,
    depth: usize,
    bufs: &mut SlotBuffers,
    scratch: AlignedBuf,
    seed: u64,
) -> std::io::Result<VerifyCounts> {
    let options = Options {
        depth: depth as u32,
        // plain reads and writes on the fd, as verify's rings always did: nothing registered
        registration: Registration::Plain,
        submit: SubmitMode::Batch,
    };
    let run = Slots { sh, scratch, seed };
    #[cfg(target_os = "linux")]
    let _ = direct; // the file was opened with O_DIRECT or not
    #[cfg(target_os = "linux")]
    let handle = Handle { file: sh.f };
    #[cfg(windows)]
    let reopen = |overlapped: bool| {
        use windows_sys::Win32::Storage::FileSystem::{
            FILE_FLAG_NO_BUFFERING, FILE_FLAG_OVERLAPPED,
        };
        let unbuffered = if direct { FILE_FLAG_NO_BUFFERING } else { 0 };
        let overlapped = if overlapped { FILE_FLAG_OVERLAPPED } else { 0 };
        iocap_platform::win::reopen(sh.f, true, unbuffered | overlapped)
    };
    #[cfg(windows)]
    let handle = Handle { reopen: &reopen };
    backend::drive(engine, handle, bufs, options, run)?
}

/// One thread's slots, for [`backend::drive`] to run on the engine's backend.
struct Slots<'a, 'f> {
    sh: &'a Shared<'f>,
    scratch: AlignedBuf,
    seed: u64,
}

impl Drive for Slots<'_, '_> {
    type Out = std::io::Result<VerifyCounts>;

    fn run<B: Backend>(self, q: IoQueue<'_, B>, _: Opened) -> Self::Out {
        slots::run(self.sh, q, self.scratch, self.seed)
    }
}

/// The seed of thread `t`'s random stream. The odd constants are the ones the psync and the
/// io_uring loops had before they were one loop, so a seed still draws the same operations
/// (on Windows: sync draws psync's, IOCP io_uring's).
fn stream_seed(engine: EngineKind, seed: u64, t: u64) -> u64 {
    let k: u64 = if engine.one_io_per_thread() {
        0x9E37_79B9_7F4A_7C15
    } else {
        0xD1B5_4A32_D192_ED03
    };
    seed ^ (t + 1).wrapping_mul(k)
}

fn add_counts(a: &mut VerifyCounts, b: &VerifyCounts) {
    a.pages_written += b.pages_written;
    a.pages_read += b.pages_read;
    a.pages_checked += b.pages_checked;
    a.reads_skipped += b.reads_skipped;
    a.random_updates += b.random_updates;
    a.log_appends += b.log_appends;
    a.scans += b.scans;
    a.random_reads += b.random_reads;
    a.bytes_written += b.bytes_written;
    a.bytes_read += b.bytes_read;
    a.journal_records += b.journal_records;
}

//! What a run concludes from a finished I/O, whichever loop issued it (the mixed phase's
//! [`super::slots`] or the [`super::final_pass`]): a completed write is journaled and published
//! in the map, a failed one recorded and the run stopped; the pages of a completed read are
//! held to the generations the map gave before the read, and a failed read is read again page by
//! page so the error lands on the pages that fail alone.
//!
//! A write that failed leaves its page claimed in the map: its content is undefined, so neither
//! readers nor the final pass judge it.

use std::io;

use iocap_model::{VerifyCounts, VerifyFailure, VerifyOp};

use super::shared::Shared;
use crate::classify::{classify, Expect};
use crate::error::io_err;
use crate::file::pread_exact;
use crate::journal::Record;
use crate::map::Snapshot;
use crate::report::First;
use iocap_engine::AlignedBuf;

/// After a write of generation `g + 1` of page `p` completed: journal it (it was durable) and
/// publish it in the map.
pub(crate) fn acknowledge(sh: &Shared, p: u64, g: u32, c: &mut VerifyCounts) {
    if let Some(j) = sh.journal {
        // only now is the write acknowledged as durable
        let r = Record {
            page: p,
            generation: g + 1,
        };
        match j.append(r) {
            Ok(()) => c.journal_records += 1,
            Err(e) => sh.fail(io_err("cannot append to the journal")(e)),
        }
    }
    sh.map.end_write(p, g + 1);
}

/// A write of page `p` failed: record it and stop the run. The page is left claimed: its
/// content is undefined now, nobody judges it.
pub(crate) fn record_write_error(sh: &Shared, p: u64, g: u32, op: VerifyOp, e: io::Error) {
    let pb = sh.id.page_bytes as u64;
    let message = format!(
        "{op} of page {p} at offset {} failed: {e}; the run stopped",
        p * pb
    );
    let expected = u64::from(g) + 1;
    sh.sink
        .io_failure(io_error(sh, (p, 1), op, expected, &e, message));
    sh.halt.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// An I/O error on `pages` (first page, count) during `op`, not re-read.
fn io_error(
    sh: &Shared,
    pages: (u64, usize),
    op: VerifyOp,
    expected_generation: u64,
    e: &io::Error,
    message: String,
) -> VerifyFailure {
    let rec = sh
        .sink
        .record(pages, sh.id.page_bytes, op, expected_generation);
    VerifyFailure {
        errno: e.raw_os_error(),
        message,
        ..rec
    }
}

/// Checks the pages of a completed read: `data` holds `snaps.len()` pages from `start`, and
/// `snaps` are the map's states taken before the read. A page a write overlapped is not judged;
/// every other one is classified, and a bad one recorded (after its re-reads).
pub(crate) fn check_read(
    sh: &Shared,
    start: u64,
    snaps: &[Snapshot],
    data: &[u8],
    op: VerifyOp,
    scratch: &mut [u8],
    c: &mut VerifyCounts,
) {
    let pb = sh.id.page_bytes;
    for (i, snap) in snaps.iter().enumerate() {
        let p = start + i as u64;
        if !sh.map.read_was_stable(p, *snap) {
            c.reads_skipped += 1;
            continue;
        }
        c.pages_checked += 1;
        let page = &data[i * pb..(i + 1) * pb];
        let expect = Expect::Exact(u64::from(snap.generation()));
        let fd = classify(page, &sh.id, p, expect);
        if !fd.ok() {
            let first = First::Bad(page, fd);
            sh.sink
                .failed(sh.f, &sh.id, Some(sh.map), p, op, expect, first, scratch);
        }
    }
}

/// A read of the pages from `start` (one per entry of `snaps`: the map's states taken before
/// it) failed with `e`. One bad page fails a whole scan, so a scan is read again page by page:
/// the error is pinned on the pages that fail alone and the others are still checked; when every
/// page reads correctly alone, the scan's error is recorded as transient. This is the error
/// path: it may allocate a page buffer.
pub(crate) fn read_failed(
    sh: &Shared,
    start: u64,
    snaps: &[Snapshot],
    op: VerifyOp,
    e: io::Error,
    scratch: &mut [u8],
    c: &mut VerifyCounts,
) {
    let expect = Expect::Exact(u64::from(snaps[0].generation()));
    let one = match (snaps.len() > 1).then(|| AlignedBuf::new(sh.id.page_bytes)) {
        Some(Ok(b)) => b,
        _ => {
            let first = First::Io(e);
            return sh.sink.failed(
                sh.f,
                &sh.id,
                Some(sh.map),
                start,
                op,
                expect,
                first,
                scratch,
            );
        }
    };
    let before = sh.sink.count();
    reread_each(sh, (start, snaps.len()), op, one, scratch, c);
    if sh.sink.count() == before {
        sh.sink
            .io_failure(transient(sh, start, snaps.len(), op, expect, &e));
    }
}

/// Reads each of `pages` (first page, count) alone into `one` and checks it.
fn reread_each(
    sh: &Shared,
    (start, len): (u64, usize),
    op: VerifyOp,
    mut one: AlignedBuf,
    scratch: &mut [u8],
    c: &mut VerifyCounts,
) {
    let pb = sh.id.page_bytes;
    for p in start..start + len as u64 {
        let snap = sh.map.before_read(p);
        if snap.busy() {
            continue;
        }
        match pread_exact(sh.f, one.as_mut_slice(), p * pb as u64) {
            Err(e) => {
                let expect = Expect::Exact(u64::from(snap.generation()));
                let first = First::Io(e);
                sh.sink
                    .failed(sh.f, &sh.id, Some(sh.map), p, op, expect, first, scratch)
            }
            Ok(()) => {
                c.pages_read += 1;
                c.bytes_read += pb as u64;
                check_read(sh, p, &[snap], one.as_slice(), op, scratch, c);
            }
        }
    }
}

/// The failure of a read of `len` pages from `start` whose pages all read correctly alone.
fn transient(
    sh: &Shared,
    start: u64,
    len: usize,
    op: VerifyOp,
    expect: Expect,
    e: &io::Error,
) -> VerifyFailure {
    let message = format!(
        "{op} of {len} pages at offset {} failed ({e}); each page then read correctly on its own",
        start * sh.id.page_bytes as u64
    );
    VerifyFailure {
        transient: true,
        rereads: len as u32,
        ..io_error(sh, (start, len), op, expect.generation(), e, message)
    }
}

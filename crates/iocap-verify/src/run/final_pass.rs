//! The final pass: every page once more, sequentially, after the writers stopped. A page
//! damaged after its last read in the mixed phase, or never read there, is found here; each is
//! held to the generation the map ends with. It is skipped after Ctrl-C (the result then says
//! it was interrupted).

use std::sync::atomic::Ordering;

use iocap_engine::AlignedBuf;
use iocap_model::{VerifyCounts, VerifyOp};

use super::judge::{check_read, read_failed};
use super::shared::{Shared, BATCH_BYTES, MAX_SCAN_PAGES};
use crate::error::{buffer, VerifyError};
use crate::file::pread_exact;
use crate::map::Snapshot;

/// Reads and checks every page of the run's file, in batches of up to [`BATCH_BYTES`].
pub(crate) fn run(sh: &Shared, c: &mut VerifyCounts) -> Result<(), VerifyError> {
    let pb = sh.id.page_bytes;
    let batch = (BATCH_BYTES / pb).clamp(1, MAX_SCAN_PAGES);
    let mut rbuf = buffer(batch * pb)?;
    let mut scratch = buffer(pb)?;
    let mut snaps = [Snapshot::default(); MAX_SCAN_PAGES];
    let mut p = 0;
    while p < sh.pages && !sh.stop.load(Ordering::Relaxed) {
        let n = batch.min((sh.pages - p) as usize);
        read_pages(sh, p, &mut snaps[..n], &mut rbuf, &mut scratch, c);
        p += n as u64;
    }
    Ok(())
}

/// Reads one page per entry of `snaps` from `start` in one call and checks each one no write
/// held (a page whose write failed stays claimed and is not judged).
fn read_pages(
    sh: &Shared,
    start: u64,
    snaps: &mut [Snapshot],
    rbuf: &mut AlignedBuf,
    scratch: &mut AlignedBuf,
    c: &mut VerifyCounts,
) {
    let (pb, len, op) = (sh.id.page_bytes, snaps.len(), VerifyOp::FinalPass);
    for (i, s) in snaps.iter_mut().enumerate() {
        *s = sh.map.before_read(start + i as u64);
    }
    if len == 1 && snaps[0].busy() {
        c.reads_skipped += 1;
        return;
    }
    let buf = &mut rbuf.as_mut_slice()[..len * pb];
    if let Err(e) = pread_exact(sh.f, buf, start * pb as u64) {
        read_failed(sh, start, snaps, op, e, scratch.as_mut_slice(), c);
        return;
    }
    c.pages_read += len as u64;
    c.bytes_read += (len * pb) as u64;
    check_read(
        sh,
        start,
        snaps,
        rbuf.as_slice(),
        op,
        scratch.as_mut_slice(),
        c,
    );
}

//! Two small probes for finding caches below the OS (`iocap cachescan`), beside the engine's
//! measured tests: a warming pass that reads a region once, front to back, so that a cache can
//! take it in before the region is measured; and a read-after-write check that tells whether
//! something below the OS answers reads of data just written.
//!
//! Both issue one I/O at a time with `pread`/`pwrite` on a target the engine prepared (so the
//! safety rules of [`crate::target`] already hold: the read-after-write check writes only
//! where a write test could), through the target's own file descriptor and so with its
//! O_DIRECT setting. They are not on the hot path of a measured test; their latencies are read
//! from the engine's clock.

use std::io;
#[cfg(target_os = "linux")]
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use thiserror::Error;

use crate::buffers::{fill_random, AlignedBuf};
use crate::target::PreparedTarget;
use iocap_platform::clock::now_ns;

/// Positioned whole reads and writes on Windows (`seek_read`/`seek_write` on the target's
/// synchronous handle), as Unix's `FileExt` has them.
#[cfg(windows)]
trait FileExt {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
}

#[cfg(windows)]
impl FileExt for std::fs::File {
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        use std::os::windows::fs::FileExt as _;
        while !buf.is_empty() {
            match self.seek_read(buf, offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn write_all_at(&self, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
        use std::os::windows::fs::FileExt as _;
        while !buf.is_empty() {
            match self.seek_write(buf, offset) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    buf = &buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// An I/O of a probe that failed, with the operation and where.
#[derive(Debug, Error)]
#[error("{op} of {len} B at offset {offset} of {path} failed: {source}")]
pub struct ProbeError {
    pub op: &'static str,
    pub path: String,
    pub offset: u64,
    pub len: u64,
    #[source]
    pub source: io::Error,
}

/// What a warming pass did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Warmed {
    pub bytes: u64,
    pub seconds: f64,
    /// Stopped by the interrupt flag before the end of the region.
    pub interrupted: bool,
}

fn fault(t: &PreparedTarget, op: &'static str, offset: u64, len: u64, e: io::Error) -> ProbeError {
    ProbeError {
        op,
        path: t.path.display().to_string(),
        offset,
        len,
        source: e,
    }
}

fn read_full(t: &PreparedTarget, buf: &mut [u8], offset: u64) -> Result<(), ProbeError> {
    let len = buf.len() as u64;
    t.file
        .read_exact_at(buf, offset)
        .map_err(|e| fault(t, "read", offset, len, e))
}

/// Reads `[0, len)` of `t` once, front to back, in `bs`-byte reads (the last one shorter), in
/// whole logical blocks: a tail shorter than one block is not read. Stops early when `stop` is
/// set.
pub fn warm(
    t: &PreparedTarget,
    len: u64,
    bs: u64,
    stop: &AtomicBool,
) -> Result<Warmed, ProbeError> {
    // whole logical blocks only: the tail of a file of odd size cannot be read with O_DIRECT
    let lb = t.logical_block.max(1);
    let len = len.min(t.range_bytes) / lb * lb;
    let bs = (bs / lb).max(1) * lb;
    let mut buf = AlignedBuf::new(bs as usize).map_err(|e| fault(t, "allocate", 0, bs, e))?;
    let start = now_ns();
    let mut at = 0;
    while at < len {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let n = (len - at).min(bs);
        read_full(t, &mut buf.as_mut_slice()[..n as usize], at)?;
        at += n;
    }
    Ok(Warmed {
        bytes: at,
        seconds: (now_ns() - start) as f64 / 1e9,
        interrupted: at < len,
    })
}

/// Latencies of the read-after-write check, in nanoseconds, one entry per sample.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawSamples {
    pub write_ns: Vec<u64>,
    /// A read of the page just written.
    pub fresh_read_ns: Vec<u64>,
    /// A read of a page not written during the check.
    pub old_read_ns: Vec<u64>,
}

/// `samples` times (or until `max_s` seconds have passed), at queue depth 1: write a `bs`-byte
/// page at a random place in the upper half of `t`'s range, read it back at once, then read a
/// page from a random place of the lower half, which the check never writes (and which a
/// fill, writing front to back, wrote first: the oldest data). Interleaving the two kinds of
/// read keeps drift out of their difference. `t` must have been prepared for writing (the
/// engine's safety checks passed).
pub fn read_after_write(
    t: &PreparedTarget,
    bs: u64,
    samples: u32,
    max_s: f64,
    stop: &AtomicBool,
) -> Result<RawSamples, ProbeError> {
    let deadline = now_ns() + (max_s.max(0.0) * 1e9) as u64;
    let pages = t.range_bytes / bs;
    if pages < 2 {
        return Err(fault(
            t,
            "read-after-write check",
            0,
            bs,
            io::Error::other("the target holds fewer than two pages"),
        ));
    }
    let half = pages / 2;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5EED ^ t.range_bytes);
    let mut page = AlignedBuf::new(bs as usize).map_err(|e| fault(t, "allocate", 0, bs, e))?;
    let mut back = AlignedBuf::new(bs as usize).map_err(|e| fault(t, "allocate", 0, bs, e))?;
    let mut out = RawSamples::default();
    for _ in 0..samples {
        if stop.load(Ordering::Relaxed) || now_ns() > deadline {
            break;
        }
        let w = (half + rng.next_u64() % (pages - half)) * bs;
        let r = (rng.next_u64() % half) * bs;
        fill_random(&mut page.as_mut_slice()[..bs as usize], &mut rng);
        let t0 = now_ns();
        t.file
            .write_all_at(&page.as_slice()[..bs as usize], w)
            .map_err(|e| fault(t, "write", w, bs, e))?;
        let t1 = now_ns();
        read_full(t, &mut back.as_mut_slice()[..bs as usize], w)?;
        let t2 = now_ns();
        read_full(t, &mut back.as_mut_slice()[..bs as usize], r)?;
        let t3 = now_ns();
        out.write_ns.push(t1 - t0);
        out.fresh_read_ns.push(t2 - t1);
        out.old_read_ns.push(t3 - t2);
    }
    Ok(out)
}

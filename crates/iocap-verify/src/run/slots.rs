//! One thread of the mixed phase: `depth` page operations in flight through an engine
//! [`Backend`], the same backends `iocap run` measures with (as fio's verify goes through the
//! job's ioengine). With io_uring a thread keeps `qd` operations in flight on one ring; with
//! psync a thread has one, and the phase runs a thread per slot.
//!
//! The mix per operation is fixed: 30 % random page updates, 10 % durable log appends
//! (RWF_DSYNC, in order, wrapping around the log pages), 10 % read-ahead scans (8 to 64 pages in
//! one read, each page checked), 50 % random page reads. A write holds its page's claim in the
//! map until its completion is reaped; a read takes its snapshots before it is queued and is
//! judged after its completion.
//!
//! The loop is the engine's ([`IoQueue::drive`]); this file is its policy ([`Pages`]): fill
//! every idle slot, wait for a completion, or yield when every page drawn was busy; on a halt,
//! finish (the loop drains what is in flight).
//!
//! Hot path: the slots, their buffers and the random stream are made before the loop; the
//! policy allocates nothing, takes no lock and makes no system call (the loop makes the I/O's;
//! the failure path, in [`super::judge`], may do all three).
//!
//! Buffers: the engine's [`IoQueue`] owns them and what is in flight. A page is encoded into a
//! slot's buffer only while the slot is idle, and a read is judged on the bytes the queue lends
//! with its completion. The loop returns `Ok` only with nothing in flight; on `Err` I/O may
//! still be in flight, and the queue leaves the buffers never to be freed.

use std::io;
use std::sync::atomic::Ordering;

use iocap_engine::backend::{Backend, Completion, Fill, Next, Op, Policy};
use iocap_engine::{AlignedBuf, IoQueue};
use iocap_model::{VerifyCounts, VerifyOp};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::judge::{acknowledge, check_read, read_failed, record_write_error};
use super::shared::{Shared, MAX_SCAN_PAGES};
use crate::file::now_ns;
use crate::map::Snapshot;
use crate::page;

/// The mix, in percent of operations: updates, log appends, scans; the rest are random reads.
pub const MIX_UPDATE_PCT: u64 = 30;
pub const MIX_LOG_PCT: u64 = 10;
pub const MIX_SCAN_PCT: u64 = 10;

/// A slot's operation, from the time it is drawn until its completion is judged.
#[derive(Clone, Copy)]
enum PageOp {
    /// Generation `generation + 1` of claimed page `page`.
    Write {
        page: u64,
        generation: u32,
        dsync: bool,
        op: VerifyOp,
    },
    /// `len` pages from `start`, in one read.
    Read {
        start: u64,
        len: usize,
        op: VerifyOp,
    },
}

#[derive(Clone, Copy)]
struct Slot {
    /// `None`: idle.
    op: Option<PageOp>,
    /// The map's states of the pages being read, taken before the read.
    snaps: [Snapshot; MAX_SCAN_PAGES],
}

/// Runs slots on the queue (one per buffer, each buffer `MAX_SCAN_PAGES` pages) until the run
/// halts; returns what they did. `scratch` is a page for re-reads; `seed` seeds the thread's
/// random stream.
pub(crate) fn run<B: Backend>(
    sh: &Shared,
    mut q: IoQueue<'_, B>,
    scratch: AlignedBuf,
    seed: u64,
) -> io::Result<VerifyCounts> {
    let idle = Slot {
        op: None,
        snaps: [Snapshot::default(); MAX_SCAN_PAGES],
    };
    let mut p = Pages {
        sh,
        slots: vec![idle; q.slots()],
        rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        scratch,
        c: VerifyCounts::default(),
    };
    q.drive(&mut p)?;
    Ok(p.c)
}

/// One thread's slots as a policy for the engine's loop: each idle slot gets the next
/// operation of the mix, each completion is judged.
struct Pages<'s, 'f> {
    sh: &'s Shared<'f>,
    slots: Vec<Slot>,
    rng: Xoshiro256PlusPlus,
    scratch: AlignedBuf,
    c: VerifyCounts,
}

impl Policy for Pages<'_, '_> {
    fn fill<B: Backend>(&mut self, q: &mut Fill<'_, '_, B>) -> Next {
        if self.sh.halted() {
            return Next::Finish;
        }
        queue_idle(self.sh, q, &mut self.slots, &mut self.rng, &mut self.c);
        if q.inflight() > 0 {
            Next::Wait { deadline_ns: None }
        } else if self.sh.halted() {
            Next::Finish
        } else {
            // every page drawn was busy: let the writers holding them go on
            Next::Yield
        }
    }

    fn complete(&mut self, done: Completion, data: &[u8]) {
        let i = done.slot as usize;
        let scratch = self.scratch.as_mut_slice();
        complete(
            self.sh,
            &self.slots[i],
            data,
            done.result,
            scratch,
            &mut self.c,
        );
        self.slots[i].op = None;
    }
}

/// Gives every idle slot its next operation and queues it.
fn queue_idle<B: Backend>(
    sh: &Shared,
    q: &mut Fill<'_, '_, B>,
    slots: &mut [Slot],
    rng: &mut Xoshiro256PlusPlus,
    c: &mut VerifyCounts,
) {
    for (i, s) in slots.iter_mut().enumerate() {
        if s.op.is_some() {
            continue;
        }
        let Some(op) = draw(sh, rng, c) else {
            continue;
        };
        if let Some((kind, offset, len)) = start(sh, op, s, q, i, c) {
            q.queue(i as u32, kind, offset, len);
        }
    }
}

/// Draws the next operation from the mix; `None` if the pages to write were busy. A page to
/// write is claimed in the map here.
fn draw(sh: &Shared, rng: &mut Xoshiro256PlusPlus, c: &mut VerifyCounts) -> Option<PageOp> {
    let op = rng.next_u64() % 100;
    if op < MIX_UPDATE_PCT {
        // a random page update; a page another writer holds is passed over
        let (page, generation) = (0..8).find_map(|_| {
            let p = rng.next_u64() % sh.data_pages;
            sh.map.try_begin_write(p).map(|g| (p, g))
        })?;
        c.random_updates += 1;
        let (dsync, op) = (sh.dsync_all, VerifyOp::Write);
        return Some(PageOp::Write {
            page,
            generation,
            dsync,
            op,
        });
    }
    if op < MIX_UPDATE_PCT + MIX_LOG_PCT {
        // the log: in order, wrapping around
        let page = sh.data_pages + sh.log_cursor.fetch_add(1, Ordering::Relaxed) % sh.log_pages;
        let generation = sh.map.try_begin_write(page)?;
        c.log_appends += 1;
        let (dsync, op) = (true, VerifyOp::LogAppend);
        return Some(PageOp::Write {
            page,
            generation,
            dsync,
            op,
        });
    }
    if op < MIX_UPDATE_PCT + MIX_LOG_PCT + MIX_SCAN_PCT {
        let len = (8 + rng.next_u64() % 57).min(sh.pages) as usize;
        c.scans += 1;
        let start = rng.next_u64() % (sh.pages - len as u64 + 1);
        return Some(PageOp::Read {
            start,
            len,
            op: VerifyOp::Scan,
        });
    }
    c.random_reads += 1;
    let start = rng.next_u64() % sh.pages;
    Some(PageOp::Read {
        start,
        len: 1,
        op: VerifyOp::Read,
    })
}

/// Prepares idle slot `i` for `op` (encodes the page to write, or takes the snapshots of the
/// pages to read) and returns its I/O (operation, offset, length); `None` if a single page to
/// read was being written.
fn start<B: Backend>(
    sh: &Shared,
    op: PageOp,
    s: &mut Slot,
    q: &mut Fill<'_, '_, B>,
    i: usize,
    c: &mut VerifyCounts,
) -> Option<(Op, u64, u32)> {
    let pb = sh.id.page_bytes;
    let (kind, first, len) = match op {
        PageOp::Write {
            page,
            generation,
            dsync,
            ..
        } => {
            let g = u64::from(generation) + 1;
            page::encode(&mut q.buf(i)[..pb], &sh.id, page, g, now_ns());
            (if dsync { Op::WriteDsync } else { Op::Write }, page, 1)
        }
        PageOp::Read { start, len, .. } => {
            for (k, snap) in s.snaps.iter_mut().enumerate().take(len) {
                *snap = sh.map.before_read(start + k as u64);
            }
            if len == 1 && s.snaps[0].busy() {
                c.reads_skipped += 1;
                return None;
            }
            (Op::Read, start, len)
        }
    };
    s.op = Some(op);
    Some((kind, first * pb as u64, (len * pb) as u32))
}

/// Judges slot `s`'s completed operation: `result` is the backend's (bytes or -errno), `data`
/// the slot's buffer.
fn complete(
    sh: &Shared,
    s: &Slot,
    data: &[u8],
    result: i32,
    scratch: &mut [u8],
    c: &mut VerifyCounts,
) {
    let pb = sh.id.page_bytes;
    match s.op {
        None => {}
        Some(PageOp::Write {
            page,
            generation,
            op,
            ..
        }) => match transferred(result, pb) {
            Ok(()) => {
                c.pages_written += 1;
                c.bytes_written += pb as u64;
                acknowledge(sh, page, generation, c);
            }
            Err(e) => record_write_error(sh, page, generation, op, e),
        },
        Some(PageOp::Read { start, len, op }) => {
            let snaps = &s.snaps[..len];
            match transferred(result, len * pb) {
                Ok(()) => {
                    c.pages_read += len as u64;
                    c.bytes_read += (len * pb) as u64;
                    check_read(sh, start, snaps, data, op, scratch, c);
                }
                Err(e) => read_failed(sh, start, snaps, op, e, scratch, c),
            }
        }
    }
}

/// Whether an I/O of `want` bytes that returned `result` moved all of them; else its error.
fn transferred(result: i32, want: usize) -> io::Result<()> {
    if result >= 0 && result as usize == want {
        return Ok(());
    }
    Err(if result < 0 {
        io::Error::from_raw_os_error(-result)
    } else {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("short transfer: {result} of {want} B"),
        )
    })
}

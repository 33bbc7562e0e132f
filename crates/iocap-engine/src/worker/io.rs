//! What one I/O of a worker is, from its draw to its completion: the next operation
//! ([`NextOp`], with the fsync every N writes), when its time in flight starts ([`StampAt`]),
//! what its slot remembers ([`Slot`]) and what its completion records ([`complete`]). The
//! worker's policy (`super`) calls these; they hold no loop.

use std::sync::atomic::Ordering::Relaxed;

use crate::backend::{Backend, Fill, Op};
use crate::live::{Class, LiveCounters};
use crate::offsets::OffsetGen;
use crate::stats::WorkerStats;

use super::{FaultRecord, Timeline, WorkerConfig};

/// When an I/O's time in flight starts, by how the backend hands it to the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StampAt {
    /// The batch goes with the wait: every I/O of it is stamped once, just before that call.
    Wait,
    /// Each I/O goes as it is queued (io_uring's each mode): stamped after its `queue`, which
    /// may first submit the one before it.
    AfterQueue,
    /// `queue` itself starts the I/O (IOCP's overlapped call): stamped just before it.
    BeforeQueue,
}

impl StampAt {
    /// How a backend that [`Backend::submits_at_queue`] (`at_queue`) and whose `queue`
    /// [`Backend::starts_in_queue`] (`in_queue`) has its I/Os stamped.
    pub(super) fn of(at_queue: bool, in_queue: bool) -> StampAt {
        match (at_queue, in_queue) {
            (false, _) => StampAt::Wait,
            (true, false) => StampAt::AfterQueue,
            (true, true) => StampAt::BeforeQueue,
        }
    }
}

/// What one slot has in flight: its operation, where, how long, and since when.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    pub submit_ns: u64,
}

impl Slot {
    /// The bytes a successful completion transfers.
    fn want(&self) -> i64 {
        if self.op.is_sync() {
            0
        } else {
            i64::from(self.len)
        }
    }
}

/// The next operation: a read or a write from the offset generator, and after every
/// `fsync_every` writes an fsync (an fdatasync with `datasync`). Writes are stamped with their
/// offset and a sequence number.
pub(super) struct NextOp {
    fsync_every: u32,
    datasync: bool,
    writes_since_sync: u32,
    sync_pending: bool,
    seq: u64,
}

impl NextOp {
    /// Starts as `cfg` says: no write since a sync, its sequence numbers from the write seed.
    pub(super) fn new(cfg: &WorkerConfig) -> NextOp {
        NextOp {
            fsync_every: cfg.fsync_every,
            datasync: cfg.datasync,
            writes_since_sync: 0,
            sync_pending: false,
            seq: cfg.write_seed,
        }
    }

    /// The next I/O for idle slot `s` (a write's data stamped into its buffer).
    #[inline]
    pub(super) fn take<B: Backend>(
        &mut self,
        gen: &mut OffsetGen,
        q: &mut Fill<'_, '_, B>,
        s: usize,
    ) -> (Op, u64, u32) {
        if self.sync_pending {
            self.sync_pending = false;
            let op = if self.datasync {
                Op::Fdatasync
            } else {
                Op::Fsync
            };
            return (op, 0, 0);
        }
        let write = gen.next_is_write();
        let (off, len) = gen.next_io(s);
        if !write {
            return (Op::Read, off, len);
        }
        q.stamp(s, len as usize, off, self.seq);
        self.seq = self.seq.wrapping_add(1);
        if self.fsync_every > 0 {
            self.writes_since_sync += 1;
            if self.writes_since_sync >= self.fsync_every {
                self.writes_since_sync = 0;
                self.sync_pending = true;
            }
        }
        (Op::Write, off, len)
    }
}

/// The measured window as one reaped batch sees it.
pub(super) struct Window {
    pub now: u64,
    pub measure_start: u64,
    pub end: u64,
}

impl Window {
    fn counts(&self) -> bool {
        self.now >= self.measure_start && self.now < self.end
    }
}

/// Records one completion: its latency and bytes, or the test's first fault.
#[inline]
pub(super) fn complete(
    cfg: &WorkerConfig,
    slot: &Slot,
    result: i32,
    w: &Window,
    tl: &Timeline,
    live: &LiveCounters,
    stats: &mut WorkerStats,
) {
    let want = slot.want();
    let lat = w.now.saturating_sub(slot.submit_ns);
    // the part of this I/O's flight inside the window, for the achieved queue depth
    let (from, to) = (slot.submit_ns.max(w.measure_start), w.now.min(w.end));
    if to > from {
        stats.inflight_ns += to - from;
    }
    if result < 0 || i64::from(result) != want {
        let _ = tl.fault.set(FaultRecord {
            job: cfg.job,
            target_idx: cfg.target_idx,
            op: slot.op,
            offset: slot.offset,
            len: want as u64,
            errno: if result < 0 { -result } else { 0 },
            transferred: i64::from(result),
        });
        tl.halt.store(true, Relaxed);
        tl.cut(w.now);
    } else if slot.op.is_sync() {
        if w.counts() {
            stats.sync.record(lat, 0);
        }
    } else {
        let class = if slot.op == Op::Read {
            Class::Read
        } else {
            Class::Write
        };
        live.add(class, lat, want as u64);
        if w.counts() {
            match class {
                Class::Read => stats.read.record(lat, want as u64),
                Class::Write => stats.write.record(lat, want as u64),
            }
        }
    }
}

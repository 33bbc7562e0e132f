//! The replay loop: one thread takes the trace's requests in order, waits for each one's turn
//! (its due time in `recorded` timing, a free place under the recorded depth in `fast`), and
//! issues it through an engine [`Backend`] (io_uring, or psync at depth 1), reaping completions
//! while it waits. It is generic over the backend and the [`Clock`], so the schedule, the lag
//! accounting and fast mode's depth are tested with a mock device on a mock clock.
//!
//! Waiting: while I/Os are in flight the loop sleeps in the backend's wait (woken by a
//! completion or at [`SPIN_NS`] before the due time), with nothing in flight in a clock sleep;
//! the last [`SPIN_NS`] are spun, polling completions every [`POLL_NS`]. A request due while
//! `max_inflight` I/Os are in flight waits for one to complete: its wait is lag, and it is
//! counted (`waited_for_slot`).
//!
//! Flushes go as the engine's fsync, which io_uring drains: it starts after every I/O issued
//! before it has completed, as a flush after the writes it covers. Discards (with `--discard`)
//! are done synchronously by the caller's discarder.
//!
//! Hot path: slots, their buffers and the statistics are made before the loop; per request the
//! loop allocates nothing. The buffers and what is in flight are the engine's [`IoQueue`]'s: a
//! slot's buffer is stamped only while the slot is idle, and on `Err` (I/O may still be in
//! flight) the queue leaves the buffers never to be freed.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use iocap_engine::backend::{Backend, Completion, Op as EOp};
use iocap_engine::IoQueue;
use iocap_trace::{IoFlags, IoRecord, Op};

use crate::clock::{Clock, SPIN_NS};
use crate::map::Mapper;
use crate::schedule::{RecordedDepth, Schedule, Timing};
use crate::stats::{Fault, Stats, DISCARD, FLUSH, READ, WRITE};

/// How often completions are polled while spinning to a due time.
pub const POLL_NS: u64 = 20_000;

/// The longest one wait for a due time lasts before the loop looks at the stop flag again: a
/// trace's idle hour still ends at Ctrl-C within this.
pub const STOP_CHECK_NS: u64 = 100_000_000;

/// What the loop is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub timing: Timing,
    /// The most I/Os in flight (no more than the backend's depth and the buffers).
    pub max_inflight: usize,
    /// Fast mode's depth for requests without a completion time.
    pub fast_depth: usize,
    /// Replay discards (else they are skipped and counted).
    pub discard: bool,
}

/// Where a replay stands, about once a second.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tick {
    pub elapsed_s: f64,
    pub issued: u64,
    pub late: u64,
}

/// The loop's discarder: discards `len` bytes at `offset` of the target.
pub type Discarder<'a> = &'a mut dyn FnMut(u64, u64) -> io::Result<()>;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    kind: usize,
    op: usize,
    issued_ns: u64,
    /// Where and how much, for the fault it may become (0 for a flush).
    offset: u64,
    len: u32,
}

pub struct Driver<'a, B: Backend, C: Clock> {
    q: IoQueue<'a, B>,
    clock: &'a C,
    mapper: Mapper,
    plan: Plan,
    pub stats: Stats,
    /// Said once each: the target has no discard, and similar.
    pub notes: Vec<String>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    writes: u64,
    discard_off: bool,
    next_tick_ns: u64,
}

impl<'a, B: Backend, C: Clock> Driver<'a, B, C> {
    /// A loop on `q` with one slot per buffer (`plan.max_inflight` is cut to their number).
    pub fn new(q: IoQueue<'a, B>, clock: &'a C, mapper: Mapper, mut plan: Plan) -> Self {
        plan.max_inflight = plan.max_inflight.clamp(1, q.slots());
        let n = plan.max_inflight;
        Self {
            q,
            clock,
            mapper,
            plan,
            stats: Stats::default(),
            notes: Vec::new(),
            slots: vec![Slot::default(); n],
            free: (0..n as u32).rev().collect(),
            writes: 0,
            discard_off: false,
            next_tick_ns: 0,
        }
    }

    /// Replays `records` until they end or `stop` is set; returns with nothing in flight.
    pub fn run(
        &mut self,
        records: impl Iterator<Item = IoRecord>,
        stop: &AtomicBool,
        discard: Discarder,
        tick: &mut dyn FnMut(Tick),
    ) -> io::Result<()> {
        let start = self.clock.now_ns();
        self.next_tick_ns = start + 1_000_000_000;
        let mut schedule = match self.plan.timing {
            Timing::Recorded { speed } => Some(Schedule::new(speed, start)),
            Timing::Fast => None,
        };
        let mut depth = RecordedDepth::default();
        for r in records {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let due = schedule.as_mut().map(|s| s.due_ns(r.issue_ns));
            let limit = match schedule {
                Some(_) => self.plan.max_inflight,
                None => depth.push(&r).unwrap_or(self.plan.fast_depth),
            };
            self.stats.op(r.op).recorded += 1;
            let Some(kind) = self.kind_of(&r) else {
                self.stats.op(r.op).skipped += 1;
                continue;
            };
            let waited = self.wait_turn(due, limit.clamp(1, self.plan.max_inflight), stop)?;
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let now = self.clock.now_ns();
            if let Some(d) = due {
                self.stats.issued(now.saturating_sub(d));
                self.stats.waited_for_slot += u64::from(waited);
            }
            self.issue(&r, kind, now, discard)?;
            if now >= self.next_tick_ns {
                self.next_tick_ns = now + 1_000_000_000;
                tick(self.tick(start, now));
            }
        }
        while self.q.inflight() > 0 {
            self.q.submit_and_wait(1, None)?;
            self.reap();
        }
        Ok(())
    }

    fn tick(&self, start: u64, now: u64) -> Tick {
        Tick {
            elapsed_s: now.saturating_sub(start) as f64 / 1e9,
            issued: self.stats.ops.iter().map(|o| o.replayed).sum(),
            late: self.stats.late,
        }
    }

    /// The kind `r` is replayed as; `None`: skipped.
    fn kind_of(&self, r: &IoRecord) -> Option<usize> {
        match r.op {
            Op::Read if r.bytes > 0 => Some(READ),
            Op::Write if r.bytes > 0 => Some(WRITE),
            Op::Flush => Some(FLUSH),
            Op::Discard if self.plan.discard && !self.discard_off && r.bytes > 0 => Some(DISCARD),
            _ => None,
        }
    }

    /// Waits until `due` (if any) and until fewer than `limit` I/Os are in flight; returns
    /// whether it had to wait for a completion to get under the limit.
    fn wait_turn(&mut self, due: Option<u64>, limit: usize, stop: &AtomicBool) -> io::Result<bool> {
        let mut waited = false;
        loop {
            self.reap();
            if stop.load(Ordering::Relaxed) {
                return Ok(waited);
            }
            if self.q.inflight() >= limit {
                waited = true;
                self.q.submit_and_wait(1, None)?;
                continue;
            }
            let Some(due) = due else {
                return Ok(waited);
            };
            let now = self.clock.now_ns();
            if now >= due {
                return Ok(waited);
            }
            if due - now > SPIN_NS {
                let wake = (due - SPIN_NS).min(now + STOP_CHECK_NS);
                if self.q.inflight() > 0 {
                    self.q.submit_and_wait(1, Some(wake))?;
                } else {
                    self.clock.sleep_until(wake);
                }
            } else if self.q.inflight() > 0 {
                // posts what completed without blocking, then spins a little
                self.q.submit_and_wait(0, None)?;
                self.clock.spin_until(due.min(now + POLL_NS));
            } else {
                self.clock.spin_until(due);
            }
        }
    }

    /// Issues `r` as `kind` at `now`.
    fn issue(&mut self, r: &IoRecord, kind: usize, now: u64, discard: Discarder) -> io::Result<()> {
        let (offset, len) = self.mapper.map(r.offset_bytes(), r.bytes);
        self.stats.first_issue_ns.get_or_insert(now);
        if kind == DISCARD {
            return self.discard(r.op, offset, len, now, discard);
        }
        let durable = r.flags.has(IoFlags::FUA) || r.flags.has(IoFlags::PREFLUSH);
        let op = match kind {
            READ => EOp::Read,
            WRITE if durable => EOp::WriteDsync,
            WRITE => EOp::Write,
            _ => EOp::Fsync,
        };
        let slot = self.free.pop().expect("a free slot under the limit");
        let i = slot as usize;
        if kind == WRITE {
            self.writes += 1;
            self.q.stamp(i, len as usize, offset, self.writes);
            self.stats.op(r.op).durable += u64::from(durable);
        }
        let (offset, len) = if kind == FLUSH { (0, 0) } else { (offset, len) };
        self.slots[i] = Slot {
            kind,
            op: r.op as usize,
            issued_ns: now,
            offset,
            len,
        };
        self.q.queue(slot, op, offset, len);
        self.stats.qd.set(now, self.q.inflight() as u64);
        self.stats.op(r.op).replayed += 1;
        // to the kernel now, not with the next wait: the request is due now
        self.q.submit_and_wait(0, None)
    }

    fn discard(&mut self, op: Op, offset: u64, len: u32, now: u64, d: Discarder) -> io::Result<()> {
        match d(offset, u64::from(len)) {
            Ok(()) => {
                let done = self.clock.now_ns();
                self.stats.completed(DISCARD, done.saturating_sub(now));
                self.stats.last_done_ns = self.stats.last_done_ns.max(done);
                let c = self.stats.op(op);
                c.replayed += 1;
                c.bytes += u64::from(len);
            }
            Err(e) if e.kind() == io::ErrorKind::Unsupported => {
                self.discard_off = true;
                self.stats.op(op).skipped += 1;
                self.notes.push(format!(
                    "the target does not take discards ({e}); the trace's discards were skipped"
                ));
            }
            Err(_) => self.stats.op(op).errors += 1,
        }
        Ok(())
    }

    /// Takes every completion there is.
    fn reap(&mut self) {
        let now = self.clock.now_ns();
        let Self {
            q,
            slots,
            stats,
            free,
            ..
        } = self;
        let before = q.inflight();
        q.reap(|c: Completion, _| {
            let s = slots[c.slot as usize];
            free.push(c.slot);
            let count = &mut stats.ops[s.op];
            // a failure, or a read or write short of its length: counted, and the first one
            // kept with its operation and offset
            if c.result < 0 || (s.kind != FLUSH && c.result as u32 != s.len) {
                count.errors += 1;
                stats.first_fault.get_or_insert(Fault {
                    kind: s.kind,
                    offset: s.offset,
                    len: s.len,
                    result: c.result,
                });
                return;
            }
            count.bytes += c.result as u64;
            stats.completed(s.kind, now.saturating_sub(s.issued_ns));
        });
        if q.inflight() != before {
            stats.last_done_ns = stats.last_done_ns.max(now);
            stats.qd.set(now, q.inflight() as u64);
        }
    }
}

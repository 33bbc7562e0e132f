//! The replay's policy for the engine's loop ([`iocap_engine::IoQueue::drive`]): each turn of
//! the loop it takes the next request, looks whether its turn has come (its due time, the depth
//! allowed), and either issues it or tells the loop how to wait: in the backend's wait with a
//! deadline, a clock sleep with nothing in flight, or a spin (polling completions) for the last
//! stretch. Its order of clock reads, submissions and reaps is the one the replay's own loop
//! had: a request is submitted as soon as it is queued, and the completions are taken when the
//! next request starts to wait for its turn.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use iocap_engine::backend::{Backend, Completion, Fill, Next, Op as EOp, Policy};
use iocap_trace::{IoFlags, IoRecord, Op};

use super::{Discarder, State, Tick, POLL_NS, STOP_CHECK_NS};
use crate::clock::{Clock, SPIN_NS};
use crate::schedule::{RecordedDepth, Schedule};
use crate::stats::{Fault, Stats, DISCARD, FLUSH, READ, WRITE};

/// What one slot has in flight.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Slot {
    kind: usize,
    op: usize,
    issued_ns: u64,
    /// Where and how much, for the fault it may become (0 for a flush).
    offset: u64,
    len: u32,
}

/// A request waiting for its turn.
#[derive(Debug, Clone, Copy)]
pub(super) struct Turn {
    r: IoRecord,
    kind: usize,
    due: Option<u64>,
    /// The most I/Os in flight when it goes.
    limit: usize,
    /// It had to wait for a completion to get under the limit.
    waited: bool,
}

/// What `fill` does first when the loop comes back after a [`Next::Submit`].
#[derive(Debug, Clone, Copy, Default)]
pub(super) enum Then {
    #[default]
    Look,
    /// A request was issued at this instant: a progress tick may be due, then the next one.
    Tick(u64),
    /// Spin until this instant, then take the completions.
    Spin(u64),
}

/// One run of the replay over `records`, for the engine's loop.
pub(super) struct Turns<'d, 'a, C: Clock, I> {
    pub st: &'d mut State<'a, C>,
    pub stats: &'d mut Stats,
    pub notes: &'d mut Vec<String>,
    pub records: I,
    pub stop: &'d AtomicBool,
    pub discard: Discarder<'d>,
    pub tick: &'d mut dyn FnMut(Tick),
    pub start: u64,
    pub schedule: Option<Schedule>,
    pub depth: RecordedDepth,
    pub turn: Option<Turn>,
    pub then: Then,
    /// The clock when the batch being handed over was reaped.
    pub reap_ns: u64,
}

impl<C: Clock, I: Iterator<Item = IoRecord>> Policy for Turns<'_, '_, C, I> {
    fn fill<B: Backend>(&mut self, q: &mut Fill<'_, '_, B>) -> Next {
        match std::mem::take(&mut self.then) {
            Then::Look => {}
            Then::Tick(now) => self.tick(now),
            Then::Spin(until) => {
                self.st.clock.spin_until(until);
                return Next::Reap;
            }
        }
        loop {
            if self.turn.is_none() {
                self.turn = self.take();
                // its wait for its turn starts with the completions there are
                return self.turn.map_or(Next::Finish, |_| Next::Reap);
            }
            if let Some(next) = self.wait(q.inflight()) {
                return next;
            }
            if self.stop.load(Ordering::Relaxed) {
                return Next::Finish;
            }
            let turn = self.turn.take().expect("a request waits for its turn");
            let now = self.st.clock.now_ns();
            if let Some(d) = turn.due {
                self.stats.issued(now.saturating_sub(d));
                self.stats.waited_for_slot += u64::from(turn.waited);
            }
            if self.issue(q, &turn.r, turn.kind, now) {
                // to the kernel now, not with the next wait: the request is due now
                self.then = Then::Tick(now);
                return Next::Submit;
            }
            self.tick(now);
        }
    }

    fn reaping(&mut self) {
        self.reap_ns = self.st.clock.now_ns();
    }

    fn complete(&mut self, c: Completion, _: &[u8]) {
        let s = self.st.slots[c.slot as usize];
        self.st.free.push(c.slot);
        let stats = &mut *self.stats;
        let count = &mut stats.ops[s.op];
        // a failure, or a read or write short of its length: counted, and the first one kept
        // with its operation and offset
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
        stats.completed(s.kind, self.reap_ns.saturating_sub(s.issued_ns));
    }

    fn reaped(&mut self, n: usize, inflight: usize) {
        if n > 0 {
            self.stats.last_done_ns = self.stats.last_done_ns.max(self.reap_ns);
            self.stats.qd.set(self.reap_ns, inflight as u64);
        }
    }

    fn sleep_until(&mut self, at_ns: u64) {
        self.st.clock.sleep_until(at_ns);
    }
}

impl<C: Clock, I: Iterator<Item = IoRecord>> Turns<'_, '_, C, I> {
    /// The next request to replay, counted; `None` at the end or on a stop.
    fn take(&mut self) -> Option<Turn> {
        loop {
            let r = self.records.next()?;
            if self.stop.load(Ordering::Relaxed) {
                return None;
            }
            let due = self.schedule.as_mut().map(|s| s.due_ns(r.issue_ns));
            let plan = &self.st.plan;
            let limit = match self.schedule {
                Some(_) => plan.max_inflight,
                None => self.depth.push(&r).unwrap_or(plan.fast_depth),
            };
            let limit = limit.clamp(1, plan.max_inflight);
            self.stats.op(r.op).recorded += 1;
            let Some(kind) = self.kind_of(&r) else {
                self.stats.op(r.op).skipped += 1;
                continue;
            };
            let waited = false;
            return Some(Turn {
                r,
                kind,
                due,
                limit,
                waited,
            });
        }
    }

    /// Whether the waiting request's turn has come (`None`: it goes, or a stop), after the
    /// completions there were; else how the loop waits for it.
    fn wait(&mut self, inflight: usize) -> Option<Next> {
        let clock = self.st.clock;
        let turn = self.turn.as_mut()?;
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        if inflight >= turn.limit {
            turn.waited = true;
            return Some(Next::Wait { deadline_ns: None });
        }
        let due = turn.due?;
        let now = clock.now_ns();
        if now >= due {
            return None;
        }
        if due - now > SPIN_NS {
            let until_ns = (due - SPIN_NS).min(now + STOP_CHECK_NS);
            return Some(match inflight {
                0 => Next::Sleep { until_ns },
                _ => Next::Wait {
                    deadline_ns: Some(until_ns),
                },
            });
        }
        if inflight > 0 {
            // posts what completed without blocking, then spins a little
            self.then = Then::Spin(due.min(now + POLL_NS));
            return Some(Next::Submit);
        }
        clock.spin_until(due);
        Some(Next::Reap)
    }

    /// A progress tick, at most one a second.
    fn tick(&mut self, now: u64) {
        if now >= self.st.next_tick_ns {
            self.st.next_tick_ns = now + 1_000_000_000;
            (self.tick)(Tick {
                elapsed_s: now.saturating_sub(self.start) as f64 / 1e9,
                issued: self.stats.ops.iter().map(|o| o.replayed).sum(),
                late: self.stats.late,
            });
        }
    }

    /// The kind `r` is replayed as; `None`: skipped.
    fn kind_of(&self, r: &IoRecord) -> Option<usize> {
        let discard = self.st.plan.discard && !self.st.discard_off;
        match r.op {
            Op::Read if r.bytes > 0 => Some(READ),
            Op::Write if r.bytes > 0 => Some(WRITE),
            Op::Flush => Some(FLUSH),
            Op::Discard if discard && r.bytes > 0 => Some(DISCARD),
            _ => None,
        }
    }

    /// Issues `r` as `kind` at `now`: queues it (`true`: for the loop to submit at once), or
    /// discards it synchronously.
    fn issue<B: Backend>(
        &mut self,
        q: &mut Fill<'_, '_, B>,
        r: &IoRecord,
        kind: usize,
        now: u64,
    ) -> bool {
        let (offset, len) = self.st.mapper.map(r.offset_bytes(), r.bytes);
        self.stats.first_issue_ns.get_or_insert(now);
        if kind == DISCARD {
            self.discard(r.op, offset, len, now);
            return false;
        }
        let durable = r.flags.has(IoFlags::FUA) || r.flags.has(IoFlags::PREFLUSH);
        let op = match kind {
            READ => EOp::Read,
            WRITE if durable => EOp::WriteDsync,
            WRITE => EOp::Write,
            _ => EOp::Fsync,
        };
        let slot = self.st.free.pop().expect("a free slot under the limit");
        let i = slot as usize;
        if kind == WRITE {
            self.st.writes += 1;
            q.stamp(i, len as usize, offset, self.st.writes);
            self.stats.op(r.op).durable += u64::from(durable);
        }
        let (offset, len) = if kind == FLUSH { (0, 0) } else { (offset, len) };
        self.st.slots[i] = Slot {
            kind,
            op: r.op as usize,
            issued_ns: now,
            offset,
            len,
        };
        q.queue(slot, op, offset, len);
        self.stats.qd.set(now, q.inflight() as u64);
        self.stats.op(r.op).replayed += 1;
        true
    }

    fn discard(&mut self, op: Op, offset: u64, len: u32, now: u64) {
        match (self.discard)(offset, u64::from(len)) {
            Ok(()) => {
                let done = self.st.clock.now_ns();
                self.stats.completed(DISCARD, done.saturating_sub(now));
                self.stats.last_done_ns = self.stats.last_done_ns.max(done);
                let c = self.stats.op(op);
                c.replayed += 1;
                c.bytes += u64::from(len);
            }
            Err(e) if e.kind() == io::ErrorKind::Unsupported => {
                self.st.discard_off = true;
                self.stats.op(op).skipped += 1;
                self.notes.push(format!(
                    "the target does not take discards ({e}); the trace's discards were skipped"
                ));
            }
            Err(_) => self.stats.op(op).errors += 1,
        }
    }
}

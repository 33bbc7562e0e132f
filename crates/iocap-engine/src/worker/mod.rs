//! One worker thread of a test: its policy for the engine's one I/O loop ([`IoQueue::drive`],
//! which owns the submit, the wait, the reap and the drain), generic over the backend.
//!
//! Per turn of the loop: queue as many new I/Os as there are free slots (and as the throttle and
//! the burst pattern allow), submit them and wait for at least one completion, take one completion
//! time for the reaped batch (the moment this thread learned of those completions; fio does the
//! same), record each latency and free the slots. A backend that submits each I/O as it is queued
//! (io_uring with `--submit each`) has each one stamped once it is queued, after the previous one's
//! submission; one that submits the batch with the wait (the default) has them all stamped with one
//! time just before that call; one whose `queue` starts the I/O itself (IOCP) has each stamped just
//! before its `queue`.
//!
//! Nothing in the loop or the policy allocates, locks or makes a system call other than the
//! backend's own and one sleep: a throttled worker, or one between bursts, with nothing in flight
//! sleeps (`clock::sleep_until`, clock_nanosleep) until its next I/O is due; with I/O in flight it
//! waits in the backend's own call with a deadline instead. Slot state lives in an array sized at
//! start, statistics in preallocated histograms, the clock is the vDSO. The error path records the
//! first fault once.
//!
//! The policy's parts: a [`Slot`] per I/O in flight (operation, offset, length, submission
//! time), a [`Gate`] (in `gate`) that says whether new I/O may start (the throttle's schedule
//! and the burst pattern), [`NextOp`] for what the next I/O is (with the fsync every N writes),
//! [`StampAt`] for when an I/O's time in flight starts, and [`complete`] for what a completion
//! records (those four in `io`).
//!
//! Each slot remembers its own operation, offset and length, so with a block-size mix every
//! completion is checked against the length it was issued with and counted with its own bytes.
//!
//! With `--submit auto` an [`AutoTrial`] switches the backend between the two submission
//! modes in short slices during the warm-up and then keeps the faster (see `autosubmit`); the
//! worker counts the I/Os it submits one by one, so the result can say what auto did each second.
//!
//! Bursts: the period `on + off` is measured from the common start instant, so all workers of a
//! test (and of a group of tests) are on and off together. In the off part nothing new is issued;
//! what is in flight is still reaped, then the worker sleeps, like the throttle's idle path, until
//! the next on part (the state is recomputed only when an edge passes, from the clock reads the
//! loop already makes).
//!
//! Think time (DiskSpd's `-i`/`-j`): after every `ios` completions the worker issues nothing for
//! the pause, through the same off state and edge as a burst's off part (so the common path has
//! no new test); the completions are counted per reaped batch, where the loop already counts
//! them.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

use crate::autosubmit::AutoTrial;
use crate::backend::{Backend, Completion, Fill, IoQueue, Next, Op, Policy};
use crate::live::LiveCounters;
use crate::offsets::OffsetGen;
use crate::pace::Process;
use crate::stats::WorkerStats;
use iocap_platform::clock;

mod gate;
mod io;

use gate::Gate;
use io::{complete, NextOp, Slot, StampAt, Window};

/// Timeline and stop signals shared by all workers of a test; read-mostly.
pub struct Timeline {
    /// No I/O is issued before this instant (the common start of all workers).
    pub start_ns: AtomicU64,
    /// Completions at or after this instant count.
    pub measure_start_ns: AtomicU64,
    /// Completions before this instant count (shrinks on interruption or fault).
    pub window_end_ns: AtomicU64,
    /// No new I/O is issued at or after this instant (end of cooldown).
    pub issue_end_ns: AtomicU64,
    /// Set by Ctrl-C (owned by the caller).
    pub interrupt: &'static AtomicBool,
    /// Set when an I/O fails: every worker stops issuing and drains.
    pub halt: AtomicBool,
    /// The first I/O fault of the test.
    pub fault: OnceLock<FaultRecord>,
}

impl Timeline {
    pub fn new(interrupt: &'static AtomicBool) -> Self {
        Self {
            start_ns: AtomicU64::new(0),
            measure_start_ns: AtomicU64::new(u64::MAX),
            window_end_ns: AtomicU64::new(u64::MAX),
            issue_end_ns: AtomicU64::new(u64::MAX),
            interrupt,
            halt: AtomicBool::new(false),
            fault: OnceLock::new(),
        }
    }

    /// Ends the measured window now (interruption or fault); the figures so far are kept.
    pub fn cut(&self, now_ns: u64) {
        self.window_end_ns.fetch_min(now_ns, Relaxed);
    }

    fn should_stop(&self) -> bool {
        self.interrupt.load(Relaxed) || self.halt.load(Relaxed)
    }
}

#[derive(Debug, Clone)]
pub struct FaultRecord {
    /// Index of the workload in its group (0 for a single test).
    pub job: usize,
    pub target_idx: usize,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    /// Positive errno, or 0 for a short transfer.
    pub errno: i32,
    pub transferred: i64,
}

pub struct WorkerConfig {
    /// Index of the workload in its group (0 for a single test).
    pub job: usize,
    pub target_idx: usize,
    pub depth: u32,
    pub fsync_every: u32,
    /// Each of those syncs is fdatasync(2).
    pub datasync: bool,
    /// Mean interval between I/O starts when throttled, and how arrivals are spaced.
    pub rate_interval_ns: Option<u64>,
    pub rate_process: Process,
    /// Issue only in bursts: (on, off) in nanoseconds, off above zero.
    pub burst_ns: Option<(u64, u64)>,
    pub write_seed: u64,
    /// Try both io_uring submission modes in the warm-up and keep the faster (`--submit auto`).
    pub auto_submit: bool,
}

/// Runs the worker until the end of the timeline or a stop, on the engine's loop
/// ([`IoQueue::drive`]); returns after draining every I/O. On `Err` (the kernel interface itself
/// failed) I/Os may still be in flight: dropping the queue then leaves its buffers allocated.
pub fn run<B: Backend>(
    cfg: &WorkerConfig,
    mut q: IoQueue<'_, B>,
    gen: &mut OffsetGen,
    tl: &Timeline,
    live: &LiveCounters,
    stats: &mut WorkerStats,
) -> std::io::Result<()> {
    let depth = cfg.depth as usize;
    let idle = Slot {
        op: Op::Read,
        offset: 0,
        len: 0,
        submit_ns: 0,
    };
    let slots = vec![idle; depth];
    let free: Vec<u32> = (0..cfg.depth).rev().collect();
    let batch: Vec<u32> = Vec::with_capacity(depth);

    // every worker starts at the same instant, never before the timeline does
    let start = tl.start_ns.load(Relaxed);
    clock::sleep_until(start);
    let measure_start = tl.measure_start_ns.load(Relaxed);
    let now = clock::now_ns();
    let backend = q.backend();
    let mut w = Worker {
        cfg,
        tl,
        live,
        slots,
        free,
        batch,
        next: NextOp::new(cfg),
        gate: Gate::new(cfg, start, now).with_think(gen.think()),
        gen,
        stats,
        trial: cfg
            .auto_submit
            .then(|| AutoTrial::new(start, measure_start)),
        stamp: StampAt::of(backend.submits_at_queue(), backend.starts_in_queue()),
        stopping: false,
        window: Window {
            now,
            measure_start,
            end: u64::MAX,
        },
    };
    q.drive(&mut w)
}

/// One worker's policy for the engine's loop: its slots, what may start (`gate`), what the next
/// I/O is, and the clock as the loop last read it (`window.now`: after each wait and sleep).
struct Worker<'w> {
    cfg: &'w WorkerConfig,
    gen: &'w mut OffsetGen,
    tl: &'w Timeline,
    live: &'w LiveCounters,
    stats: &'w mut WorkerStats,
    /// Per slot: what it has in flight.
    slots: Vec<Slot>,
    /// The idle slots, the next one to use last.
    free: Vec<u32>,
    /// The slots queued since the last wait, stamped at it when the batch goes with the wait.
    batch: Vec<u32>,
    next: NextOp,
    gate: Gate,
    trial: Option<AutoTrial>,
    stamp: StampAt,
    /// No new I/O: the timeline ended or the test was stopped; what is in flight drains.
    stopping: bool,
    /// The measured window as the last batch saw it; its `now` is the loop's clock.
    window: Window,
}

impl Policy for Worker<'_> {
    fn fill<B: Backend>(&mut self, q: &mut Fill<'_, '_, B>) -> Next {
        let now = self.window.now;
        // re-read: `--until-stable` ends the window early, from the monitor
        let issue_end = self.tl.issue_end_ns.load(Relaxed);
        if let Some(each) = self.trial.as_mut().and_then(|t| t.at(now)) {
            q.set_submit_each(each);
            self.stamp = StampAt::of(q.submits_at_queue(), q.starts_in_queue());
        }
        if !self.stopping && (now >= issue_end || self.tl.should_stop()) {
            self.stopping = true;
            if self.tl.interrupt.load(Relaxed) {
                self.tl.cut(now);
            }
        }
        self.gate.update(now);
        if !self.stopping {
            self.queue_admitted(q, now);
        }
        let held_until = self.gate.held_until();
        if q.inflight() == 0 {
            if self.stopping {
                self.stats.auto = self.trial.as_ref().map(AutoTrial::outcome);
                self.stats.behind_ns = self.gate.behind_ns(issue_end.min(now));
                return Next::Finish;
            }
            // throttled or between bursts, and idle: sleep until the next I/O may start, waking
            // at least every 100 ms to notice Ctrl-C or a fault elsewhere
            let until_ns = held_until
                .unwrap_or(now)
                .min(issue_end)
                .min(now + 100_000_000);
            return Next::Sleep { until_ns };
        }
        if self.stamp == StampAt::Wait {
            let t_submit = clock::now_ns();
            for &s in &self.batch {
                self.slots[s as usize].submit_ns = t_submit;
            }
        }
        self.batch.clear();
        let deadline_ns = match held_until {
            Some(t) if !self.stopping && !self.free.is_empty() => Some(t.min(issue_end)),
            _ => None,
        };
        Next::Wait { deadline_ns }
    }

    #[inline]
    fn reaping(&mut self) {
        self.window.now = clock::now_ns();
        self.window.end = self.tl.window_end_ns.load(Relaxed);
    }

    #[inline]
    fn complete(&mut self, c: Completion, _: &[u8]) {
        let slot = &self.slots[c.slot as usize];
        let (cfg, tl, live) = (self.cfg, self.tl, self.live);
        complete(cfg, slot, c.result, &self.window, tl, live, self.stats);
        self.free.push(c.slot);
    }

    #[inline]
    fn reaped(&mut self, n: usize, _: usize) {
        if let Some(t) = self.trial.as_mut() {
            t.count(n as u64);
        }
        self.gate.completed(n as u64, self.window.now);
    }

    fn sleep_until(&mut self, at_ns: u64) {
        clock::sleep_until(at_ns);
        self.window.now = clock::now_ns();
    }
}

impl Worker<'_> {
    /// Queues an I/O on each free slot while the gate admits one at `now`, each stamped as
    /// the backend submits it.
    #[inline]
    fn queue_admitted<B: Backend>(&mut self, q: &mut Fill<'_, '_, B>, now: u64) {
        while !self.free.is_empty() && self.gate.admit(now) {
            let Some(slot) = self.free.pop() else { break };
            let s = slot as usize;
            let (op, offset, len) = self.next.take(self.gen, q, s);
            let at = &mut self.slots[s];
            (at.op, at.offset, at.len) = (op, offset, len);
            if self.stamp == StampAt::BeforeQueue {
                at.submit_ns = clock::now_ns();
            }
            q.queue(slot, op, offset, len);
            if self.stamp == StampAt::AfterQueue {
                self.slots[s].submit_ns = clock::now_ns();
            }
            self.live.submitted(self.stamp != StampAt::Wait);
            self.batch.push(slot);
        }
    }
}

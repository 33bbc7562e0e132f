//! The I/O loop of one worker thread, generic over the backend.
//!
//! Per iteration: queue as many new I/Os as there are free slots (and as the throttle and the
//! burst pattern allow), submit them and wait for at least one completion, take one completion
//! time for the reaped batch (the moment this thread learned of those completions; fio does the
//! same), record each latency and free the slots. A backend that submits each I/O as it is
//! queued (io_uring with `--submit each`) has each one stamped once it is queued, after the
//! previous one's submission; one that submits the batch with the wait (the default) has them
//! all stamped with one time just before that call; one whose `queue` starts the I/O itself
//! (IOCP) has each stamped just before its `queue`.
//!
//! Nothing in the loop allocates, locks or makes a system call other than the backend's own and
//! one sleep: a throttled worker, or one between bursts, with nothing in flight sleeps
//! (`clock::sleep_until`, clock_nanosleep) until its next I/O is due; with I/O in flight it waits
//! in the backend's own call with a deadline instead. Slot state lives in an array sized at
//! start, statistics in preallocated histograms, the clock is the vDSO. The error path records
//! the first fault once.
//!
//! The loop's parts: a [`Slot`] per I/O in flight (operation, offset, length, submission time),
//! a [`Gate`] that says whether new I/O may start (the throttle's schedule and the burst
//! pattern), [`NextOp`] for what the next I/O is (with the fsync every N writes), [`StampAt`]
//! for when an I/O's time in flight starts, and [`complete`] for what a completion records.
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
use crate::backend::IoQueue;
use crate::backend::{Backend, Op};
use crate::live::{Class, LiveCounters};
use crate::offsets::OffsetGen;
use crate::pace::{Pacer, Process};
use crate::stats::WorkerStats;
use iocap_platform::clock;

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

/// Where a burst pattern stands at `now`: whether it is on, and when that changes.
#[inline]
fn burst_state(start: u64, on: u64, off: u64, now: u64) -> (bool, u64) {
    let period = on + off;
    let since = now.saturating_sub(start);
    let period_start = now - since % period;
    if since % period < on {
        (true, period_start + on)
    } else {
        (false, period_start + period)
    }
}

/// When an I/O's time in flight starts, by how the backend hands it to the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StampAt {
    /// The batch goes with the wait: every I/O of it is stamped once, just before that call.
    Wait,
    /// Each I/O goes as it is queued (io_uring's each mode): stamped after its `queue`, which
    /// may first submit the one before it.
    AfterQueue,
    /// `queue` itself starts the I/O (IOCP's overlapped call): stamped just before it.
    BeforeQueue,
}

impl StampAt {
    fn of<B: Backend>(q: &IoQueue<'_, B>) -> StampAt {
        let backend = q.backend();
        match (backend.submits_at_queue(), backend.starts_in_queue()) {
            (false, _) => StampAt::Wait,
            (true, false) => StampAt::AfterQueue,
            (true, true) => StampAt::BeforeQueue,
        }
    }
}

/// What one slot has in flight: its operation, where, how long, and since when.
#[derive(Debug, Clone, Copy)]
struct Slot {
    op: Op,
    offset: u64,
    len: u32,
    submit_ns: u64,
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

/// Whether new I/O may start: the throttle's schedule and the burst pattern's on and off parts.
struct Gate {
    pacer: Option<Pacer>,
    /// (on, off) in nanoseconds, from `start`.
    burst_ns: Option<(u64, u64)>,
    start: u64,
    /// The burst is on (always, without bursts), until `edge`.
    on: bool,
    edge: u64,
    /// DiskSpd's `-i`/`-j`: completions per burst and the pause after each.
    think: Option<Think>,
}

/// Count-based think time: the completions of the current burst.
struct Think {
    ios: u64,
    pause_ns: u64,
    done: u64,
}

impl Gate {
    fn new(cfg: &WorkerConfig, start: u64, now: u64) -> Gate {
        Gate {
            pacer: cfg
                .rate_interval_ns
                .map(|iv| Pacer::new(iv, cfg.rate_process, cfg.write_seed, now)),
            burst_ns: cfg.burst_ns,
            start,
            on: true,
            edge: if cfg.burst_ns.is_some() {
                now
            } else {
                u64::MAX
            },
            think: None,
        }
    }

    /// With think time: after every `ios` completions, a pause of `pause_ns` (DiskSpd's
    /// `-i`/`-j`, which a time-based burst never comes with: the spec refuses both).
    fn with_think(mut self, think: Option<(u32, u64)>) -> Gate {
        self.think = think.map(|(ios, pause_ns)| Think {
            ios: u64::from(ios.max(1)),
            pause_ns,
            done: 0,
        });
        self
    }

    /// Counts `n` completions at `now`; a burst's last starts the pause.
    #[inline]
    fn completed(&mut self, n: u64, now: u64) {
        if self.think.is_some() {
            self.count_think(n, now);
        }
    }

    #[cold]
    fn count_think(&mut self, n: u64, now: u64) {
        let Some(t) = self.think.as_mut() else { return };
        let done = t.done + n;
        t.done = done % t.ios;
        if done >= t.ios {
            self.on = false;
            self.edge = now.saturating_add(t.pause_ns);
            if let Some(p) = self.pacer.as_mut() {
                p.hold_until(self.edge);
            }
        }
    }

    /// Recomputes the burst state when an edge has passed; an off part holds the throttle,
    /// which starts afresh with the next burst instead of catching up.
    #[inline]
    fn update(&mut self, now: u64) {
        if now < self.edge {
            return;
        }
        if let Some((on, off)) = self.burst_ns {
            (self.on, self.edge) = burst_state(self.start, on, off, now);
            if let (false, Some(p)) = (self.on, self.pacer.as_mut()) {
                p.hold_until(self.edge);
            }
        } else {
            // the end of a think-time pause
            (self.on, self.edge) = (true, u64::MAX);
        }
    }

    /// Whether one more I/O may start now; if so it is taken from the throttle's schedule
    /// (behind the schedule, it catches up by 100 µs at most: no burst, see `pace`).
    #[inline]
    fn admit(&mut self, now: u64) -> bool {
        if !self.on {
            return false;
        }
        match self.pacer.as_mut() {
            Some(p) if !p.ready(now) => false,
            Some(p) => {
                p.take(now);
                true
            }
            None => true,
        }
    }

    /// How far behind the throttle's schedule the worker is at `at` (0 unthrottled).
    fn behind_ns(&self, at: u64) -> u64 {
        self.pacer.as_ref().map_or(0, |p| p.behind_ns(at))
    }

    /// When new I/O may next start, if something other than a free slot holds it back.
    #[inline]
    fn held_until(&self) -> Option<u64> {
        let next_due = self.pacer.as_ref().map_or(0, Pacer::due);
        match (self.pacer.is_some(), self.on) {
            (_, false) => Some(self.edge.max(next_due)),
            (true, true) => Some(next_due),
            (false, true) => None,
        }
    }
}

/// The next operation: a read or a write from the offset generator, and after every
/// `fsync_every` writes an fsync (an fdatasync with `datasync`). Writes are stamped with their
/// offset and a sequence number.
struct NextOp {
    fsync_every: u32,
    datasync: bool,
    writes_since_sync: u32,
    sync_pending: bool,
    seq: u64,
}

impl NextOp {
    #[inline]
    fn take<B: Backend>(
        &mut self,
        gen: &mut OffsetGen,
        q: &mut IoQueue<'_, B>,
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
struct Window {
    now: u64,
    measure_start: u64,
    end: u64,
}

impl Window {
    fn counts(&self) -> bool {
        self.now >= self.measure_start && self.now < self.end
    }
}

/// Records one completion: its latency and bytes, or the test's first fault.
#[inline]
fn complete(
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

/// Runs the loop until the end of the timeline or a stop; returns after draining every I/O.
/// On `Err` (the kernel interface itself failed) I/Os may still be in flight: dropping the
/// queue then leaves its buffers allocated.
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
    let mut slots = vec![idle; depth];
    let mut free: Vec<u32> = (0..cfg.depth).rev().collect();
    let mut batch: Vec<u32> = Vec::with_capacity(depth);
    let mut next = NextOp {
        fsync_every: cfg.fsync_every,
        datasync: cfg.datasync,
        writes_since_sync: 0,
        sync_pending: false,
        seq: cfg.write_seed,
    };

    // every worker starts at the same instant, never before the timeline does
    let start = tl.start_ns.load(Relaxed);
    clock::sleep_until(start);
    let measure_start = tl.measure_start_ns.load(Relaxed);
    let mut now = clock::now_ns();
    let mut gate = Gate::new(cfg, start, now).with_think(gen.think());
    let mut stopping = false;
    let mut trial = cfg
        .auto_submit
        .then(|| AutoTrial::new(start, measure_start));
    let mut stamp = StampAt::of(&q);
    loop {
        // re-read: `--until-stable` ends the window early, from the monitor
        let issue_end = tl.issue_end_ns.load(Relaxed);
        if let Some(each) = trial.as_mut().and_then(|t| t.at(now)) {
            q.set_submit_each(each);
            stamp = StampAt::of(&q);
        }
        if !stopping && (now >= issue_end || tl.should_stop()) {
            stopping = true;
            if tl.interrupt.load(Relaxed) {
                tl.cut(now);
            }
        }
        gate.update(now);
        while !stopping && !free.is_empty() && gate.admit(now) {
            let Some(slot) = free.pop() else { break };
            let s = slot as usize;
            let (op, offset, len) = next.take(gen, &mut q, s);
            (slots[s].op, slots[s].offset, slots[s].len) = (op, offset, len);
            if stamp == StampAt::BeforeQueue {
                slots[s].submit_ns = clock::now_ns();
            }
            q.queue(slot, op, offset, len);
            if stamp == StampAt::AfterQueue {
                slots[s].submit_ns = clock::now_ns();
            }
            live.submitted(stamp != StampAt::Wait);
            batch.push(slot);
        }
        let held_until = gate.held_until();
        if q.inflight() == 0 {
            if stopping {
                stats.auto = trial.as_ref().map(AutoTrial::outcome);
                stats.behind_ns = gate.behind_ns(issue_end.min(now));
                return Ok(());
            }
            // throttled or between bursts, and idle: sleep until the next I/O may start, waking
            // at least every 100 ms to notice Ctrl-C or a fault elsewhere
            let wake = held_until
                .unwrap_or(now)
                .min(issue_end)
                .min(now + 100_000_000);
            clock::sleep_until(wake);
            now = clock::now_ns();
            continue;
        }
        if stamp == StampAt::Wait {
            let t_submit = clock::now_ns();
            for &s in &batch {
                slots[s as usize].submit_ns = t_submit;
            }
        }
        batch.clear();
        let deadline = match held_until {
            Some(t) if !stopping && !free.is_empty() => Some(t.min(issue_end)),
            _ => None,
        };
        q.submit_and_wait(1, deadline)?;
        now = clock::now_ns();
        let window = Window {
            now,
            measure_start,
            end: tl.window_end_ns.load(Relaxed),
        };
        let before = q.inflight();
        q.reap(|c, _| {
            complete(
                cfg,
                &slots[c.slot as usize],
                c.result,
                &window,
                tl,
                live,
                stats,
            );
            free.push(c.slot);
        });
        let reaped = (before - q.inflight()) as u64;
        if let Some(t) = trial.as_mut() {
            t.count(reaped);
        }
        gate.completed(reaped, now);
    }
}

#[cfg(test)]
mod tests {
    use super::{burst_state, Gate, Process, WorkerConfig};

    fn config(burst_ns: Option<(u64, u64)>) -> WorkerConfig {
        WorkerConfig {
            job: 0,
            target_idx: 0,
            depth: 4,
            fsync_every: 0,
            datasync: false,
            rate_interval_ns: None,
            rate_process: Process::Linear,
            burst_ns,
            write_seed: 1,
            auto_submit: false,
        }
    }

    /// `-i8 -j5`: after 8 completions nothing starts for 5 ms (what is in flight still
    /// completes and counts toward the next burst); then I/O starts again.
    #[test]
    fn think_time_pauses_after_a_count_of_completions() {
        let mut g = Gate::new(&config(None), 0, 0).with_think(Some((8, 5_000_000)));
        g.update(0);
        assert!(g.admit(0) && g.held_until().is_none());
        g.completed(5, 100);
        assert!(g.admit(100));
        g.completed(4, 200); // the 8th completion: pause; one counts toward the next burst
        g.update(300);
        assert!(!g.admit(300));
        assert_eq!(g.held_until(), Some(5_000_200));
        g.update(5_000_199);
        assert!(!g.admit(5_000_199));
        g.update(5_000_200);
        assert!(g.admit(5_000_200) && g.held_until().is_none());
        g.completed(7, 6_000_000);
        g.update(6_000_001);
        assert!(
            !g.admit(6_000_001),
            "1 + 7 completions end the second burst"
        );
        // without think time, completions change nothing
        let mut g = Gate::new(&config(None), 0, 0);
        g.completed(1_000, 1);
        g.update(2);
        assert!(g.admit(2));
    }

    #[test]
    fn burst_phases_follow_the_start_instant() {
        let (start, on, off) = (1_000, 200, 300);
        assert_eq!(burst_state(start, on, off, 1_000), (true, 1_200));
        assert_eq!(burst_state(start, on, off, 1_199), (true, 1_200));
        assert_eq!(burst_state(start, on, off, 1_200), (false, 1_500));
        assert_eq!(burst_state(start, on, off, 1_499), (false, 1_500));
        assert_eq!(burst_state(start, on, off, 2_600), (true, 2_700));
        assert_eq!(burst_state(start, on, off, 2_750), (false, 3_000));
    }
}

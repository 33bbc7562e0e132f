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
//! Nothing in the loop allocates, locks or makes a system call other than the backend's own:
//! slot state lives in arrays sized at start, statistics in preallocated histograms, the clock is
//! the vDSO. The only exception is the error path, which records the first fault once.
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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

use crate::autosubmit::AutoTrial;
use crate::backend::{Backend, Io, Op};
use crate::buffers::SlotBuffers;
use crate::clock;
use crate::offsets::OffsetGen;
use crate::pace::{Pacer, Process};
use crate::stats::{LiveCounters, WorkerStats};

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

/// Runs the loop until the end of the timeline or a stop; returns after draining every I/O.
/// On `Err` (the kernel interface itself failed) I/Os may still be in flight and the caller must
/// leak `bufs` rather than free them.
pub fn run<B: Backend>(
    cfg: &WorkerConfig,
    backend: &mut B,
    bufs: &mut SlotBuffers,
    gen: &mut OffsetGen,
    tl: &Timeline,
    live: &LiveCounters,
    stats: &mut WorkerStats,
) -> std::io::Result<()> {
    let depth = cfg.depth as usize;
    let mut submit_ns = vec![0u64; depth];
    let mut slot_op = vec![Op::Read; depth];
    let mut slot_off = vec![0u64; depth];
    let mut slot_len = vec![0u32; depth];
    let mut free: Vec<u32> = (0..cfg.depth).rev().collect();
    let mut batch: Vec<u32> = Vec::with_capacity(depth);

    // every worker starts at the same instant, never before the timeline does
    let start = tl.start_ns.load(Relaxed);
    clock::sleep_until(start);
    let measure_start = tl.measure_start_ns.load(Relaxed);
    let mut now = clock::now_ns();
    let mut pacer = cfg
        .rate_interval_ns
        .map(|iv| Pacer::new(iv, cfg.rate_process, cfg.write_seed, now));
    let mut inflight = 0usize;
    let mut writes_since_sync = 0u32;
    let mut sync_pending = false;
    let mut seq = cfg.write_seed;
    let mut stopping = false;
    // bursts: whether new I/O may start now, and when that changes
    let mut burst_on = true;
    let mut burst_edge = if cfg.burst_ns.is_some() {
        now
    } else {
        u64::MAX
    };

    let mut trial = cfg
        .auto_submit
        .then(|| AutoTrial::new(start, measure_start));
    let mut stamp_at_queue = backend.submits_at_queue();
    // IOCP: the I/O is in flight from the start of its ReadFile/WriteFile
    let stamp_before_queue = backend.starts_in_queue();
    loop {
        // re-read: `--until-stable` ends the window early, from the monitor
        let issue_end = tl.issue_end_ns.load(Relaxed);
        if let Some(t) = trial.as_mut() {
            if let Some(each) = t.at(now) {
                backend.set_submit_each(each);
                stamp_at_queue = backend.submits_at_queue();
            }
        }
        if !stopping && (now >= issue_end || tl.should_stop()) {
            stopping = true;
            if tl.interrupt.load(Relaxed) {
                tl.cut(now);
            }
        }
        if now >= burst_edge {
            if let Some((on, off)) = cfg.burst_ns {
                (burst_on, burst_edge) = burst_state(start, on, off, now);
                if let (false, Some(p)) = (burst_on, pacer.as_mut()) {
                    // the throttle starts afresh with the next burst instead of catching up
                    p.hold_until(burst_edge);
                }
            }
        }
        if !stopping && burst_on {
            while let Some(&slot) = free.last() {
                if let Some(p) = pacer.as_mut() {
                    if !p.ready(now) {
                        break;
                    }
                    // behind the schedule, it catches up by 100 us at most: no burst (`pace`)
                    p.take(now);
                }
                free.pop();
                let s = slot as usize;
                let (op, offset, len) = if sync_pending {
                    sync_pending = false;
                    (Op::Fsync, 0, 0)
                } else if gen.next_is_write() {
                    let (off, len) = gen.next_io();
                    bufs.stamp(s, len as usize, off, seq);
                    seq = seq.wrapping_add(1);
                    if cfg.fsync_every > 0 {
                        writes_since_sync += 1;
                        if writes_since_sync >= cfg.fsync_every {
                            writes_since_sync = 0;
                            sync_pending = true;
                        }
                    }
                    (Op::Write, off, len)
                } else {
                    let (off, len) = gen.next_io();
                    (Op::Read, off, len)
                };
                slot_op[s] = op;
                slot_off[s] = offset;
                slot_len[s] = len;
                if stamp_at_queue && stamp_before_queue {
                    submit_ns[s] = clock::now_ns();
                }
                backend.queue(Io {
                    slot,
                    op,
                    offset,
                    len,
                    buf: if op == Op::Fsync {
                        std::ptr::null_mut()
                    } else {
                        bufs.ptr(s)
                    },
                });
                // after `queue`: it may first submit the I/O queued before this one, and that
                // call is not this I/O's time in flight
                if stamp_at_queue && !stamp_before_queue {
                    submit_ns[s] = clock::now_ns();
                }
                live.submitted(stamp_at_queue);
                batch.push(slot);
            }
        }
        // when new I/O may next start, if something other than a free slot holds it back
        let next_due = pacer.as_ref().map_or(0, Pacer::due);
        let held_until = match (pacer.is_some(), burst_on) {
            (_, false) => Some(burst_edge.max(next_due)),
            (true, true) => Some(next_due),
            (false, true) => None,
        };
        if inflight == 0 && batch.is_empty() {
            if stopping {
                stats.auto = trial.as_ref().map(AutoTrial::outcome);
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
        if !stamp_at_queue {
            let t_submit = clock::now_ns();
            for &s in &batch {
                submit_ns[s as usize] = t_submit;
            }
        }
        inflight += batch.len();
        batch.clear();
        let deadline = match held_until {
            Some(t) if !stopping && !free.is_empty() => Some(t.min(issue_end)),
            _ => None,
        };
        backend.submit_and_wait(1, deadline)?;
        now = clock::now_ns();
        let window_end = tl.window_end_ns.load(Relaxed);
        let counted = now >= measure_start && now < window_end;
        let before = inflight;
        backend.reap(|c| {
            inflight -= 1;
            let s = c.slot as usize;
            let op = slot_op[s];
            let want = if op == Op::Fsync {
                0
            } else {
                i64::from(slot_len[s])
            };
            let submitted = submit_ns[s];
            let lat = now.saturating_sub(submitted);
            // the part of this I/O's flight inside the window, for the achieved queue depth
            let from = submitted.max(measure_start);
            let to = now.min(window_end);
            if to > from {
                stats.inflight_ns += to - from;
            }
            if c.result < 0 || i64::from(c.result) != want {
                let _ = tl.fault.set(FaultRecord {
                    job: cfg.job,
                    target_idx: cfg.target_idx,
                    op,
                    offset: slot_off[s],
                    len: want as u64,
                    errno: if c.result < 0 { -c.result } else { 0 },
                    transferred: i64::from(c.result),
                });
                tl.halt.store(true, Relaxed);
                tl.cut(now);
            } else if op == Op::Fsync {
                if counted {
                    stats.sync.record(lat, 0);
                }
            } else {
                live.add(lat, want as u64);
                if counted {
                    match op {
                        Op::Read => stats.read.record(lat, want as u64),
                        _ => stats.write.record(lat, want as u64),
                    }
                }
            }
            free.push(c.slot);
        });
        if let Some(t) = trial.as_mut() {
            t.count((before - inflight) as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::burst_state;

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

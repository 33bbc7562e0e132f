//! The I/O loop of one worker thread, generic over the backend.
//!
//! Per iteration: queue as many new I/Os as there are free slots (and as the throttle allows),
//! stamp them all with one submission time, submit and wait for at least one completion in a
//! single kernel call, take one completion time for the reaped batch (the moment this thread
//! learned of those completions; fio does the same), record each latency and free the slots.
//!
//! Nothing in the loop allocates, locks or makes a system call other than the backend's own:
//! slot state lives in arrays sized at start, statistics in preallocated histograms, the clock is
//! the vDSO. The only exception is the error path, which records the first fault once.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

use crate::backend::{Backend, Io, Op};
use crate::buffers::{stamp_write, SlotBuffers};
use crate::clock;
use crate::offsets::OffsetGen;
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
    pub target_idx: usize,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    /// Positive errno, or 0 for a short transfer.
    pub errno: i32,
    pub transferred: i64,
}

pub struct WorkerConfig {
    pub target_idx: usize,
    pub depth: u32,
    pub bs: u32,
    pub fsync_every: u32,
    /// Interval between I/O starts when throttled.
    pub rate_interval_ns: Option<u64>,
    pub write_seed: u64,
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
    let bs = cfg.bs;
    let mut submit_ns = vec![0u64; depth];
    let mut slot_op = vec![Op::Read; depth];
    let mut slot_off = vec![0u64; depth];
    let mut free: Vec<u32> = (0..cfg.depth).rev().collect();
    let mut batch: Vec<u32> = Vec::with_capacity(depth);

    // every worker starts at the same instant, never before the timeline does
    clock::sleep_until(tl.start_ns.load(Relaxed));
    let measure_start = tl.measure_start_ns.load(Relaxed);
    let issue_end = tl.issue_end_ns.load(Relaxed);
    let mut now = clock::now_ns();
    let mut next_due = now;
    let mut inflight = 0usize;
    let mut writes_since_sync = 0u32;
    let mut sync_pending = false;
    let mut seq = cfg.write_seed;
    let mut stopping = false;

    loop {
        if !stopping && (now >= issue_end || tl.should_stop()) {
            stopping = true;
            if tl.interrupt.load(Relaxed) {
                tl.cut(now);
            }
        }
        if !stopping {
            while let Some(&slot) = free.last() {
                if let Some(iv) = cfg.rate_interval_ns {
                    if next_due > now {
                        break;
                    }
                    // never burst more than 100 ms worth after a stall
                    next_due = next_due.max(now.saturating_sub(100_000_000)) + iv;
                }
                free.pop();
                let s = slot as usize;
                let (op, offset, len) = if sync_pending {
                    sync_pending = false;
                    (Op::Fsync, 0, 0)
                } else if gen.next_is_write() {
                    let off = gen.next_offset();
                    stamp_write(&mut bufs.slot_mut(s)[..bs as usize], off, seq);
                    seq = seq.wrapping_add(1);
                    if cfg.fsync_every > 0 {
                        writes_since_sync += 1;
                        if writes_since_sync >= cfg.fsync_every {
                            writes_since_sync = 0;
                            sync_pending = true;
                        }
                    }
                    (Op::Write, off, bs)
                } else {
                    (Op::Read, gen.next_offset(), bs)
                };
                slot_op[s] = op;
                slot_off[s] = offset;
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
                batch.push(slot);
            }
        }
        if inflight == 0 && batch.is_empty() {
            if stopping {
                return Ok(());
            }
            // throttled and idle: sleep until the next I/O is due
            clock::sleep_until(next_due.min(issue_end));
            now = clock::now_ns();
            continue;
        }
        let t_submit = clock::now_ns();
        for &s in &batch {
            submit_ns[s as usize] = t_submit;
        }
        inflight += batch.len();
        batch.clear();
        let deadline = match cfg.rate_interval_ns {
            Some(_) if !stopping && !free.is_empty() => Some(next_due.min(issue_end)),
            _ => None,
        };
        backend.submit_and_wait(1, deadline)?;
        now = clock::now_ns();
        let window_end = tl.window_end_ns.load(Relaxed);
        let counted = now >= measure_start && now < window_end;
        backend.reap(|c| {
            inflight -= 1;
            let s = c.slot as usize;
            let op = slot_op[s];
            let want = if op == Op::Fsync { 0 } else { i64::from(bs) };
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
    }
}

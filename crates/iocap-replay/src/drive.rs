//! The replay: one thread takes the trace's requests in order, waits for each one's turn (its
//! due time in `recorded` timing, a free place under the recorded depth in `fast`), and issues
//! it through an engine [`Backend`] (io_uring, or psync at depth 1), reaping completions while
//! it waits. The loop is the engine's ([`IoQueue::drive`]); the replay is its policy
//! (`turn`), so the submit, wait, reap and drain are the ones the runner and verify
//! use. It is generic over the backend and the [`Clock`], so the schedule, the lag accounting
//! and fast mode's depth are tested with a mock device on a mock clock.
//!
//! Waiting: while I/Os are in flight the loop sleeps in the backend's wait (woken by a
//! completion or at [`SPIN_NS`](crate::clock::SPIN_NS) before the due time), with nothing in
//! flight in a clock sleep; the last `SPIN_NS` are spun, polling completions every
//! [`POLL_NS`]. A request due while `max_inflight` I/Os are in flight waits for one to
//! complete: its wait is lag, and it is counted (`waited_for_slot`).
//!
//! Flushes go as the engine's fsync, which io_uring drains: it starts after every I/O issued
//! before it has completed, as a flush after the writes it covers. Discards (with `--discard`)
//! are done synchronously by the caller's discarder.
//!
//! Hot path: slots, their buffers and the statistics are made before the loop; per request the
//! policy allocates nothing. The buffers and what is in flight are the engine's [`IoQueue`]'s:
//! a slot's buffer is stamped only while the slot is idle, and on `Err` (I/O may still be in
//! flight) the queue leaves the buffers never to be freed.

use std::io;
use std::sync::atomic::AtomicBool;

use iocap_engine::backend::Backend;
use iocap_engine::IoQueue;
use iocap_trace::IoRecord;

use crate::clock::Clock;
use crate::map::Mapper;
use crate::schedule::{RecordedDepth, Schedule, Timing};
use crate::stats::Stats;

mod turn;

use turn::{Slot, Turns};

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

pub struct Driver<'a, B: Backend, C: Clock> {
    q: IoQueue<'a, B>,
    pub stats: Stats,
    /// Said once each: the target has no discard, and similar.
    pub notes: Vec<String>,
    st: State<'a, C>,
}

/// What the replay keeps from request to request, beside its statistics.
struct State<'a, C: Clock> {
    clock: &'a C,
    mapper: Mapper,
    plan: Plan,
    /// Per slot: the request it has in flight.
    slots: Vec<Slot>,
    /// The idle slots, the next one to use last.
    free: Vec<u32>,
    writes: u64,
    /// The target refused a discard: the rest are skipped.
    discard_off: bool,
    next_tick_ns: u64,
}

impl<'a, B: Backend, C: Clock> Driver<'a, B, C> {
    /// A loop on `q` with one slot per buffer (`plan.max_inflight` is cut to their number).
    pub fn new(q: IoQueue<'a, B>, clock: &'a C, mapper: Mapper, mut plan: Plan) -> Self {
        plan.max_inflight = plan.max_inflight.clamp(1, q.slots());
        let n = plan.max_inflight;
        let st = State {
            clock,
            mapper,
            plan,
            slots: vec![Slot::default(); n],
            free: (0..n as u32).rev().collect(),
            writes: 0,
            discard_off: false,
            next_tick_ns: 0,
        };
        Self {
            q,
            stats: Stats::default(),
            notes: Vec::new(),
            st,
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
        let start = self.st.clock.now_ns();
        self.st.next_tick_ns = start + 1_000_000_000;
        let schedule = match self.st.plan.timing {
            Timing::Recorded { speed } => Some(Schedule::new(speed, start)),
            Timing::Fast => None,
        };
        let mut turns = Turns {
            st: &mut self.st,
            stats: &mut self.stats,
            notes: &mut self.notes,
            records,
            stop,
            discard,
            tick,
            start,
            schedule,
            depth: RecordedDepth::default(),
            turn: None,
            then: Default::default(),
            reap_ns: 0,
        };
        self.q.drive(&mut turns)
    }
}

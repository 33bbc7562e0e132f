//! The engine's one I/O loop, [`IoQueue::drive`], and what a caller gives it instead of a loop
//! of its own: a [`Policy`].
//!
//! Why one loop: the runner's worker, verify's page slots and replay's driver each had their own
//! submit, wait, reap and drain, and each had to get the same things right (a slot's bytes are
//! lent only while it is idle, every completion is reaped before its slot is reused, a stop
//! drains what is in flight, an error returns with I/O in flight and leaves the buffers to the
//! kernel). Now the loop is written once, here, and a caller says only *what* to queue and
//! *what the loop does next*; the system calls are the loop's.
//!
//! One turn of the loop: the policy's [`Policy::fill`] queues what it wants on idle slots
//! through a [`Fill`] (which lends only idle slots' bytes and checks every I/O) and returns a
//! [`Next`]; the loop does that step (a wait, a submission, a sleep, a yield), and after a wait
//! or a reap hands the completions there are to [`Policy::complete`], between
//! [`Policy::reaping`] and [`Policy::reaped`] (where a policy takes its one clock read per batch
//! and counts the batch). [`Next::Finish`] waits out what is in flight, handing it over the
//! same way, and returns.
//!
//! Hot path: the loop is generic over the backend and the policy (monomorphised, no `dyn`),
//! allocates nothing, takes no lock and makes no system call but the step the policy asked for
//! (a reap makes none of its own). It has no `unsafe`: it reaches the backend only through the
//! queue's checked calls, so the buffer contract stays the queue's.
//!
//! Adding a caller: implement [`Policy`] (its state is the loop's state: slots, counters, the
//! clock reads it needs) and call [`IoQueue::drive`] on the queue [`super::drive`] hands it.

use std::io;

use super::{Backend, Completion, IoQueue, Op};

/// What the loop does after [`Policy::fill`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Hand what is queued to the kernel and block until at least one I/O completes, or until
    /// `deadline_ns` (CLOCK_MONOTONIC) passes when given; then hand over the completions. With
    /// nothing in flight, give a deadline.
    Wait { deadline_ns: Option<u64> },
    /// Hand what is queued to the kernel without blocking and come straight back to `fill`: its
    /// completions are handed over at the next `Wait` or `Reap`.
    Submit,
    /// Hand over the completions there are (no system call), then come back to `fill`.
    Reap,
    /// Nothing is in flight: sleep until `until_ns` ([`Policy::sleep_until`]), then `fill`.
    Sleep { until_ns: u64 },
    /// Nothing is in flight and nothing can be queued now (another thread holds what it needs):
    /// yield the CPU, then `fill`.
    Yield,
    /// Queue no more: wait for every I/O in flight, hand over their completions, and return.
    Finish,
}

/// What a caller of [`IoQueue::drive`] decides: what to queue, what the loop does next, and
/// what each completion means. Every method runs on the loop's thread, in the hot path.
pub trait Policy {
    /// Queues I/O on idle slots (or none) and says what the loop does next.
    fn fill<B: Backend>(&mut self, q: &mut Fill<'_, '_, B>) -> Next;

    /// A batch of completions is about to be handed over: after every `Wait` and `Reap`, and
    /// each wait of `Finish`, even when none came.
    fn reaping(&mut self) {}

    /// One completion with its slot's bytes; the slot is idle again once this returns.
    fn complete(&mut self, c: Completion, bytes: &[u8]);

    /// The batch is over: `n` completions were handed over, `inflight` I/Os are still out.
    fn reaped(&mut self, n: usize, inflight: usize) {
        let _ = (n, inflight);
    }

    /// Sleeps until `at_ns` (CLOCK_MONOTONIC) for [`Next::Sleep`]; a policy on a clock of its
    /// own (a test's) sleeps on that instead.
    fn sleep_until(&mut self, at_ns: u64) {
        iocap_platform::clock::sleep_until(at_ns);
    }
}

/// The queue as [`Policy::fill`] sees it: idle slots' buffers, `queue`, and how the backend
/// submits. It cannot wait or reap: that is the loop's.
pub struct Fill<'a, 'q, B: Backend> {
    q: &'a mut IoQueue<'q, B>,
}

impl<B: Backend> Fill<'_, '_, B> {
    /// How many slots there are.
    #[inline]
    pub fn slots(&self) -> usize {
        self.q.slots()
    }

    /// How many I/Os are in flight.
    #[inline]
    pub fn inflight(&self) -> usize {
        self.q.inflight()
    }

    /// Whether slot `i` has nothing in flight.
    #[inline]
    pub fn is_idle(&self, i: usize) -> bool {
        self.q.is_idle(i)
    }

    /// Idle slot `i`'s buffer, to fill before a write ([`IoQueue`]'s checks).
    #[inline]
    pub fn buf(&mut self, i: usize) -> &mut [u8] {
        self.q.buf(i)
    }

    /// Makes the first `len` bytes of idle slot `i` a write's data.
    #[inline]
    pub fn stamp(&mut self, i: usize, len: usize, offset: u64, seq: u64) {
        self.q.stamp(i, len, offset, seq);
    }

    /// Queues `op` of `len` bytes at `offset` from idle slot `slot`.
    #[inline]
    pub fn queue(&mut self, slot: u32, op: Op, offset: u64, len: u32) {
        self.q.queue(slot, op, offset, len);
    }

    /// Whether each I/O goes to the kernel as it is queued ([`Backend::submits_at_queue`]).
    #[inline]
    pub fn submits_at_queue(&self) -> bool {
        self.q.backend().submits_at_queue()
    }

    /// Whether `queue` itself starts the I/O ([`Backend::starts_in_queue`]).
    #[inline]
    pub fn starts_in_queue(&self) -> bool {
        self.q.backend().starts_in_queue()
    }

    /// Switches the backend's submission mode ([`Backend::set_submit_each`]).
    #[inline]
    pub fn set_submit_each(&mut self, each: bool) {
        self.q.set_submit_each(each);
    }
}

impl<B: Backend> IoQueue<'_, B> {
    /// Runs `policy` until it says [`Next::Finish`] and what is in flight has completed; then
    /// returns `Ok` with nothing in flight. On `Err` (the backend's wait or submission failed)
    /// I/Os may still be in flight: dropping the queue then leaves its buffers allocated.
    pub fn drive(&mut self, policy: &mut impl Policy) -> io::Result<()> {
        loop {
            match policy.fill(&mut Fill { q: self }) {
                Next::Wait { deadline_ns } => self.submit_and_wait(1, deadline_ns)?,
                Next::Submit => {
                    self.submit_and_wait(0, None)?;
                    continue;
                }
                Next::Reap => {}
                Next::Sleep { until_ns } => {
                    debug_assert_eq!(self.inflight(), 0, "a sleep with I/O in flight");
                    policy.sleep_until(until_ns);
                    continue;
                }
                Next::Yield => {
                    std::thread::yield_now();
                    continue;
                }
                Next::Finish => return self.drain(policy),
            }
            self.hand_over(policy);
        }
    }

    /// Waits for every I/O in flight, handing each batch over.
    fn drain(&mut self, policy: &mut impl Policy) -> io::Result<()> {
        while self.inflight() > 0 {
            self.submit_and_wait(1, None)?;
            self.hand_over(policy);
        }
        Ok(())
    }

    /// Hands the completions there are to `policy`, as one batch.
    #[inline]
    fn hand_over(&mut self, policy: &mut impl Policy) {
        policy.reaping();
        let before = self.inflight();
        self.reap(|c, bytes| policy.complete(c, bytes));
        let inflight = self.inflight();
        policy.reaped(before - inflight, inflight);
    }
}

#[cfg(test)]
mod tests;

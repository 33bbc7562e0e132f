//! The I/O queue: a backend, the buffers its I/Os read and write, and which of them are in
//! flight. It is the safe door to the backends: the engine's one loop ([`IoQueue::drive`], in
//! `policy`) runs on it for the runner's worker, verify's slots and replay's driver, and it
//! alone calls the unsafe [`Backend::queue`]. Outside the backend module it offers only its
//! size, what is in flight, and `drive`; a policy queues through `policy::Fill`.
//!
//! What it keeps so (the buffer contract of `buffers`): a slot's buffer is handed out as
//! `&mut [u8]` ([`IoQueue::buf`], [`IoQueue::stamp`]) only while the slot is idle; an I/O is
//! queued only on an idle slot and only for bytes inside its buffer; a slot is idle again only
//! once its completion was reaped, when [`IoQueue::reap`] lends its bytes to the callback. If
//! the queue is dropped with I/O still in flight (a loop that returned on a failed wait), the
//! buffers are never freed ([`SlotBuffers::never_free`]): the kernel may still write to them.
//! Each check is one compare of a flag the loop already touches, so the hot path keeps no
//! lock, no allocation and no system call of its own.

use std::io;

use super::{Backend, Completion, Io, Op};
use crate::buffers::SlotBuffers;

/// A backend with its buffers, one slot per I/O that can be in flight.
pub struct IoQueue<'q, B: Backend> {
    backend: &'q mut B,
    bufs: &'q mut SlotBuffers,
    /// Per slot: an I/O from it is in flight.
    busy: Vec<bool>,
    inflight: usize,
}

impl<'q, B: Backend> IoQueue<'q, B> {
    /// A queue on `backend` over `bufs`, every slot idle. `bufs` must be the buffers `backend`
    /// was opened with (io_uring registers them) and hold no more slots than its depth.
    pub fn new(backend: &'q mut B, bufs: &'q mut SlotBuffers) -> Self {
        let busy = vec![false; bufs.slots()];
        Self {
            backend,
            bufs,
            busy,
            inflight: 0,
        }
    }

    /// How many slots there are.
    pub fn slots(&self) -> usize {
        self.busy.len()
    }

    /// How many I/Os are in flight.
    #[inline]
    pub fn inflight(&self) -> usize {
        self.inflight
    }

    /// Whether slot `i` has nothing in flight.
    #[inline]
    pub(super) fn is_idle(&self, i: usize) -> bool {
        !self.busy[i]
    }

    /// Slot `i`'s buffer, to fill before a write. Panics if an I/O from it is in flight.
    #[inline]
    pub(super) fn buf(&mut self, i: usize) -> &mut [u8] {
        self.idle(i);
        self.bufs.slot_mut(i)
    }

    /// Makes the first `len` bytes of idle slot `i` a write's data ([`SlotBuffers::stamp`]).
    #[inline]
    pub(super) fn stamp(&mut self, i: usize, len: usize, offset: u64, seq: u64) {
        self.idle(i);
        self.bufs.stamp(i, len, offset, seq);
    }

    /// Queues `op` of `len` bytes at `offset` from idle slot `slot` (a flush moves no bytes). It
    /// reaches the kernel as [`Backend::queue`] says. Panics on a slot in flight or a length
    /// past the slot's buffer: either would let the kernel and the loop share bytes.
    #[inline]
    pub(super) fn queue(&mut self, slot: u32, op: Op, offset: u64, len: u32) {
        let i = slot as usize;
        self.idle(i);
        let buf = if op.is_sync() {
            std::ptr::null_mut()
        } else {
            assert!(
                len as usize <= self.bufs.slot_len(),
                "an I/O of {len} B from a slot of {} B",
                self.bufs.slot_len()
            );
            self.bufs.ptr(i)
        };
        self.busy[i] = true;
        self.inflight += 1;
        let io = Io {
            slot,
            op,
            offset,
            len,
            buf,
        };
        // SAFETY: `buf` is slot `i`'s own buffer (null for a flush), which holds `len` bytes
        // (checked above) and lives in `self.bufs`, borrowed for the queue's life and never
        // freed while an I/O is in flight (see `Drop`). The slot was idle and is marked busy
        // until its completion is reaped, so no `&mut [u8]` to it is handed out meanwhile.
        unsafe { self.backend.queue(io) }
    }

    /// Submits what is queued and waits ([`Backend::submit_and_wait`]).
    #[inline]
    pub(super) fn submit_and_wait(
        &mut self,
        min_complete: u32,
        deadline_ns: Option<u64>,
    ) -> io::Result<()> {
        self.backend.submit_and_wait(min_complete, deadline_ns)
    }

    /// Takes every completion there is: `f` gets each one with its slot's bytes, after which
    /// the slot is idle again.
    #[inline]
    pub(super) fn reap(&mut self, mut f: impl FnMut(Completion, &[u8])) {
        let Self {
            backend,
            bufs,
            busy,
            inflight,
        } = self;
        backend.reap(|c| {
            let i = c.slot as usize;
            debug_assert!(busy[i], "a completion for idle slot {i}");
            busy[i] = false;
            *inflight -= 1;
            f(c, bufs.slot(i));
        });
    }

    /// The backend, for what it says of itself (`submits_at_queue`, `starts_in_queue`).
    pub(crate) fn backend(&self) -> &B {
        self.backend
    }

    /// Switches the backend's submission mode ([`Backend::set_submit_each`]).
    pub(super) fn set_submit_each(&mut self, each: bool) {
        self.backend.set_submit_each(each);
    }

    #[inline]
    fn idle(&self, i: usize) {
        assert!(!self.busy[i], "slot {i} has an I/O in flight");
    }
}

impl<B: Backend> Drop for IoQueue<'_, B> {
    fn drop(&mut self) {
        if self.inflight > 0 {
            // the kernel may still read or write these bytes: they outlive the process's use
            self.bufs.never_free();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::fake::Echo;

    #[test]
    fn a_slot_is_lent_only_while_idle_and_reaped_with_its_bytes() {
        let (mut b, mut bufs) = (Echo::default(), SlotBuffers::new(2, 4096, 1).unwrap());
        let mut q = IoQueue::new(&mut b, &mut bufs);
        q.buf(1)[..4].copy_from_slice(b"page");
        q.queue(1, Op::Write, 8192, 4096);
        assert_eq!((q.inflight(), q.is_idle(0), q.is_idle(1)), (1, true, false));
        q.submit_and_wait(1, None).unwrap();
        let mut seen = Vec::new();
        q.reap(|c, bytes| seen.push((c.slot, c.result, bytes[..4].to_vec())));
        assert_eq!(seen, vec![(1, 4096, b"page".to_vec())]);
        assert!(q.is_idle(1) && q.inflight() == 0);
    }

    #[test]
    #[should_panic(expected = "slot 0 has an I/O in flight")]
    fn the_buffer_of_a_slot_in_flight_is_refused() {
        let (mut b, mut bufs) = (Echo::default(), SlotBuffers::new(1, 4096, 1).unwrap());
        let mut q = IoQueue::new(&mut b, &mut bufs);
        q.queue(0, Op::Read, 0, 4096);
        q.buf(0)[0] = 1;
    }

    #[test]
    #[should_panic(expected = "an I/O of 8192 B from a slot of 4096 B")]
    fn an_io_longer_than_its_slot_is_refused() {
        let (mut b, mut bufs) = (Echo::default(), SlotBuffers::new(1, 4096, 1).unwrap());
        IoQueue::new(&mut b, &mut bufs).queue(0, Op::Read, 0, 8192);
    }

    #[test]
    fn buffers_with_io_in_flight_are_never_freed() {
        let (mut b, mut bufs) = (Echo::default(), SlotBuffers::new(1, 4096, 1).unwrap());
        {
            let mut q = IoQueue::new(&mut b, &mut bufs);
            q.queue(0, Op::Read, 0, 4096);
            q.submit_and_wait(1, None).unwrap();
            q.reap(|_, _| {});
        }
        assert!(!bufs.is_never_freed(), "drained: freed as usual");
        IoQueue::new(&mut b, &mut bufs).queue(0, Op::Fsync, 0, 0);
        assert!(bufs.is_never_freed(), "dropped with a flush in flight");
    }
}

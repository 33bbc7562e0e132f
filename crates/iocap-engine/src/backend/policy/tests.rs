//! The loop on the fake backend: a stop drains, a deadline and a sleep reach the backend and the
//! clock, completions come with their bytes, and a failed wait returns with I/O in flight.

use super::*;
use crate::backend::fake::Echo;
use crate::buffers::SlotBuffers;

/// A policy that plays a script of steps, queueing a write of `b"page"` on every idle slot
/// before each `Wait` and `Submit`, and keeps what it was handed.
#[derive(Default)]
struct Script {
    steps: Vec<Next>,
    /// Per batch: the completions (slot, result, first 4 bytes).
    batches: Vec<Vec<(u32, i32, Vec<u8>)>>,
    /// Per batch: (completions, in flight after).
    reaped: Vec<(usize, usize)>,
    slept: Vec<u64>,
}

impl Policy for Script {
    fn fill<B: Backend>(&mut self, q: &mut Fill<'_, '_, B>) -> Next {
        let next = self.steps.remove(0);
        if matches!(next, Next::Wait { .. } | Next::Submit) {
            for i in 0..q.slots() {
                if !q.is_idle(i) {
                    continue;
                }
                q.buf(i)[..4].copy_from_slice(b"page");
                q.queue(i as u32, Op::Write, 4096 * i as u64, 4096);
            }
        }
        next
    }
    fn reaping(&mut self) {
        self.batches.push(Vec::new());
    }
    fn complete(&mut self, c: Completion, bytes: &[u8]) {
        let batch = self.batches.last_mut().expect("`reaping` came first");
        batch.push((c.slot, c.result, bytes[..4].to_vec()));
    }
    fn reaped(&mut self, n: usize, inflight: usize) {
        self.reaped.push((n, inflight));
    }
    fn sleep_until(&mut self, at_ns: u64) {
        self.slept.push(at_ns);
    }
}

fn script(steps: &[Next]) -> Script {
    Script {
        steps: steps.to_vec(),
        ..Script::default()
    }
}

#[test]
fn completions_reach_the_policy_with_their_bytes_one_batch_per_wait() {
    let (mut b, mut bufs) = (Echo::default(), SlotBuffers::new(2, 4096, 1).unwrap());
    let mut p = script(&[Next::Wait { deadline_ns: None }, Next::Reap, Next::Finish]);
    {
        let mut q = IoQueue::new(&mut b, &mut bufs);
        q.drive(&mut p).unwrap();
        assert_eq!(q.inflight(), 0);
    }
    let page = b"page".to_vec();
    let first = vec![(0, 4096, page.clone()), (1, 4096, page)];
    // the wait's batch, then the reap's: empty
    assert_eq!(p.batches, vec![first, vec![]]);
    assert_eq!(p.reaped, vec![(2, 0), (0, 0)]);
    assert_eq!(
        b.waits,
        vec![(1, None)],
        "a reap is no wait, nor a finish with none out"
    );
    assert!(!bufs.is_never_freed());
}

#[test]
fn a_finish_drains_what_is_in_flight_and_then_returns() {
    let (mut b, mut bufs) = (Echo::default(), SlotBuffers::new(3, 4096, 1).unwrap());
    let mut p = script(&[Next::Submit, Next::Finish]);
    let mut q = IoQueue::new(&mut b, &mut bufs);
    q.drive(&mut p).unwrap();
    assert_eq!(q.inflight(), 0);
    drop(q);
    assert_eq!(p.batches.len(), 1, "one wait drained all three");
    assert_eq!(p.batches[0].len(), 3);
    // `Submit` waits for none; the drain for at least one, with no deadline
    assert_eq!(b.waits, vec![(0, None), (1, None)]);
}

#[test]
fn a_deadline_reaches_the_backend_and_a_sleep_the_policy_s_clock() {
    let (mut b, mut bufs) = (Echo::default(), SlotBuffers::new(1, 4096, 1).unwrap());
    let steps = [
        Next::Sleep { until_ns: 7 },
        Next::Wait {
            deadline_ns: Some(42),
        },
        Next::Yield,
        Next::Finish,
    ];
    let mut p = script(&steps);
    IoQueue::new(&mut b, &mut bufs).drive(&mut p).unwrap();
    assert_eq!(p.slept, vec![7]);
    assert_eq!(b.waits, vec![(1, Some(42))], "nothing left for the drain");
    assert_eq!(
        p.reaped,
        vec![(1, 0)],
        "a sleep and a yield hand nothing over"
    );
}

/// The default sleep is the engine's clock: it returns no earlier than the instant asked.
#[test]
fn the_default_sleep_waits_until_the_instant() {
    /// Sleeps once until `.1`, then finishes.
    struct Nap(bool, u64);
    impl Policy for Nap {
        fn fill<B: Backend>(&mut self, _: &mut Fill<'_, '_, B>) -> Next {
            if std::mem::replace(&mut self.0, true) {
                return Next::Finish;
            }
            Next::Sleep { until_ns: self.1 }
        }
        fn complete(&mut self, _: Completion, _: &[u8]) {}
    }
    let (mut b, mut bufs) = (Echo::default(), SlotBuffers::new(1, 4096, 1).unwrap());
    let until_ns = iocap_platform::clock::now_ns() + 2_000_000;
    let mut nap = Nap(false, until_ns);
    IoQueue::new(&mut b, &mut bufs).drive(&mut nap).unwrap();
    assert!(iocap_platform::clock::now_ns() >= until_ns);
    assert!(b.waits.is_empty(), "a sleep is no wait");
}

#[test]
fn a_failed_wait_returns_with_io_in_flight_and_the_buffers_kept() {
    let (mut b, mut bufs) = (Echo::default(), SlotBuffers::new(2, 4096, 1).unwrap());
    b.fail = true;
    let mut p = script(&[Next::Wait { deadline_ns: None }]);
    {
        let mut q = IoQueue::new(&mut b, &mut bufs);
        assert!(q.drive(&mut p).is_err());
        assert_eq!(
            q.inflight(),
            2,
            "the error came back at once, nothing reaped"
        );
    }
    assert!(p.batches.is_empty());
    assert!(bufs.is_never_freed(), "dropped with I/O in flight");
}

//! What the engine sees of the other ranks while a test runs: the start barrier (every rank's
//! clock for the test starts when all of them are set up), and, once a second, whether a rank
//! that failed asked the others to stop. Rank 0 alone shows progress.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

use iocap_engine::{FillObserver, LiveSample, RunObserver};
use iocap_session::Progress;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// The tag of the message a failed rank sends the others: the test's sequence number.
pub const TAG_STOP: i32 = 17;

/// What one test shares between the executor and the engine's observer.
pub struct Shared {
    /// The ranks that run this test, for the start barrier.
    pub group: Option<SimpleCommunicator>,
    /// The test's sequence number: a stop for another test is ignored.
    pub seq: u64,
    /// When this rank left the start barrier: real-time clock, ns since the Unix epoch.
    pub start_ns: u64,
    /// Set when another rank asked this one to stop.
    pub stopped_by_peer: bool,
    pub stop: &'static AtomicBool,
}

pub fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Receives every stop message waiting; whether one is for test `seq`.
pub fn drain_stops(world: &SimpleCommunicator, seq: u64) -> bool {
    let mut for_this = false;
    while let Some((msg, _)) = world
        .any_process()
        .immediate_matched_probe_with_tag(TAG_STOP)
    {
        let mut got = 0u64;
        msg.matched_receive_into(&mut got);
        for_this |= got == seq;
    }
    for_this
}

/// The rank's progress: rank 0's terminal, silence elsewhere.
pub struct RankProgress {
    pub inner: Box<dyn Progress>,
    pub shared: Rc<RefCell<Shared>>,
    pub root: bool,
}

impl Progress for RankProgress {
    fn fill(&mut self) -> Box<dyn FillObserver> {
        if self.root {
            self.inner.fill()
        } else {
            Box::new(iocap_engine::NoFillProgress)
        }
    }
    fn live(&mut self) -> Box<dyn RunObserver> {
        Box::new(RankLive {
            inner: self.root.then(|| self.inner.live()),
            shared: self.shared.clone(),
        })
    }
    fn label(&mut self, what: &str) {
        if self.root {
            self.inner.label(what);
        }
    }
    fn say(&mut self, line: &str) {
        if self.root {
            self.inner.say(line);
        }
    }
}

/// The observer of one test on one rank.
struct RankLive {
    inner: Option<Box<dyn RunObserver>>,
    shared: Rc<RefCell<Shared>>,
}

impl RunObserver for RankLive {
    fn start(&mut self) {
        let mut sh = self.shared.borrow_mut();
        if let Some(g) = &sh.group {
            g.barrier();
        }
        sh.start_ns = realtime_ns();
        drop(sh);
        if let Some(l) = &mut self.inner {
            l.start();
        }
    }
    fn tick(&mut self, s: &LiveSample) {
        if let Some(l) = &mut self.inner {
            l.tick(s);
        }
        let mut sh = self.shared.borrow_mut();
        if drain_stops(&SimpleCommunicator::world(), sh.seq) {
            sh.stopped_by_peer = true;
            sh.stop.store(true, Ordering::SeqCst);
        }
    }
    fn window_edge(&mut self, t_s: f64) {
        if let Some(l) = &mut self.inner {
            l.window_edge(t_s);
        }
    }
}

//! A backend for the queue's and the loop's tests: no kernel, every I/O queued completes at the
//! next wait with the length asked for. It records each wait, and can be told to fail them.

use std::io;

use super::{Backend, Completion, Io};

#[derive(Default)]
pub(super) struct Echo {
    pub queued: Vec<Io>,
    pub done: Vec<Completion>,
    /// Each `submit_and_wait`: its `min_complete` and deadline.
    pub waits: Vec<(u32, Option<u64>)>,
    /// Every wait fails (and completes nothing).
    pub fail: bool,
}

impl Backend for Echo {
    unsafe fn queue(&mut self, io: Io) {
        self.queued.push(io);
    }
    fn submit_and_wait(&mut self, min: u32, deadline_ns: Option<u64>) -> io::Result<()> {
        self.waits.push((min, deadline_ns));
        if self.fail {
            return Err(io::Error::other("the fake's wait failed"));
        }
        let done = self.queued.drain(..).map(|io| Completion {
            slot: io.slot,
            result: io.len as i32,
        });
        self.done.extend(done);
        Ok(())
    }
    fn reap(&mut self, mut f: impl FnMut(Completion)) {
        self.done.drain(..).for_each(&mut f);
    }
}

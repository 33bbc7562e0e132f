//! The trace, read ahead on its own thread: chunks of [`CHUNK_RECORDS`] records go through a
//! channel of [`CHUNKS_AHEAD`], and the emptied chunks come back to be refilled, so however long
//! the trace, memory holds at most `CHUNKS_AHEAD + 2` chunks (about 3 MiB) and the replay thread
//! never waits on the disk the trace is on unless the reader falls behind.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use iocap_trace::{IoRecord, TraceError, TraceSource};

/// Records per chunk.
pub const CHUNK_RECORDS: usize = 8192;
/// Chunks read ahead.
pub const CHUNKS_AHEAD: usize = 4;

type Chunk = Vec<IoRecord>;

/// The records of a trace, read on another thread; iterate, then [`Feed::finish`].
pub struct Feed {
    rx: Receiver<Result<Chunk, TraceError>>,
    back: SyncSender<Chunk>,
    cur: Chunk,
    pos: usize,
    error: Option<TraceError>,
    reader: Option<JoinHandle<()>>,
}

impl Feed {
    /// Starts reading `source` on a thread of its own.
    pub fn start(mut source: Box<dyn TraceSource>) -> std::io::Result<Self> {
        let (tx, rx) = sync_channel(CHUNKS_AHEAD);
        let (back, spare) = sync_channel::<Chunk>(CHUNKS_AHEAD + 2);
        let reader = std::thread::Builder::new()
            .name("iocap-replay-read".into())
            .spawn(move || read(&mut *source, &tx, &spare))?;
        Ok(Self {
            rx,
            back,
            cur: Vec::new(),
            pos: 0,
            error: None,
            reader: Some(reader),
        })
    }

    /// The error that ended the trace early, if any; stops the reader.
    pub fn finish(mut self) -> Option<TraceError> {
        let err = self.error.take();
        drop(self.rx);
        if let Some(h) = self.reader.take() {
            let _ = h.join();
        }
        err
    }
}

fn read(
    source: &mut dyn TraceSource,
    tx: &SyncSender<Result<Chunk, TraceError>>,
    spare: &Receiver<Chunk>,
) {
    loop {
        let mut chunk = spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(CHUNK_RECORDS));
        chunk.clear();
        let mut failed = None;
        for r in &mut *source {
            match r {
                Ok(r) => chunk.push(r),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
            if chunk.len() == CHUNK_RECORDS {
                break;
            }
        }
        let last = chunk.len() < CHUNK_RECORDS || failed.is_some();
        if !chunk.is_empty() && tx.send(Ok(chunk)).is_err() {
            return;
        }
        if let Some(e) = failed {
            let _ = tx.send(Err(e));
            return;
        }
        if last {
            return;
        }
    }
}

impl Iterator for Feed {
    type Item = IoRecord;

    fn next(&mut self) -> Option<IoRecord> {
        loop {
            if let Some(r) = self.cur.get(self.pos) {
                self.pos += 1;
                return Some(*r);
            }
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    // the spent chunk goes back to the reader, to be refilled
                    let spent = std::mem::replace(&mut self.cur, chunk);
                    self.pos = 0;
                    let _ = self.back.try_send(spent);
                }
                Ok(Err(e)) => {
                    self.error = Some(e);
                    return None;
                }
                Err(_) => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use iocap_trace::{IoRecord, Op, TraceMeta, TraceWriter};

    use super::*;

    #[test]
    fn a_trace_longer_than_the_read_ahead_arrives_whole_and_in_order() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("t.iotrace");
        let mut w = TraceWriter::create_new(&path, &TraceMeta::default()).unwrap();
        let n = (CHUNK_RECORDS * (CHUNKS_AHEAD + 3) + 17) as u64;
        for i in 0..n {
            let r = IoRecord {
                issue_ns: i * 1000,
                ..crate::tests::record(Op::Read, i % 1000 * 4096, 4096)
            };
            w.push(&r).unwrap();
        }
        w.finish().unwrap();
        let mut feed = Feed::start(iocap_trace::open_trace(&[path]).unwrap()).unwrap();
        let mut seen = 0u64;
        for r in &mut feed {
            assert_eq!(r.issue_ns, seen * 1000);
            seen += 1;
        }
        assert_eq!(seen, n);
        assert!(feed.finish().is_none());
    }
}

//! The per-CPU files merged into one stream in time order: a k-way merge that holds one event
//! (and its payload) per file. A file that stops at a bad event leaves the merge there; the
//! others are read to their end, and the first such error is kept for the end of the stream.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::event::{BlkFile, EventError, RawEvent};

pub struct Merger {
    pub files: Vec<BlkFile>,
    heads: Vec<Option<RawEvent>>,
    pdus: Vec<Vec<u8>>,
    /// (time, file): the earliest head first; a tie goes to the lower file.
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    /// The file whose head was just handed out, to be read again on the next call (so that
    /// its error comes after the event before it).
    stale: Option<usize>,
    error: Option<(usize, EventError)>,
}

impl Merger {
    /// Reads every file's first event.
    pub fn new(files: Vec<BlkFile>) -> Merger {
        let n = files.len();
        let mut m = Merger {
            files,
            heads: vec![None; n],
            pdus: vec![Vec::new(); n],
            heap: BinaryHeap::with_capacity(n),
            stale: None,
            error: None,
        };
        (0..n).for_each(|i| m.refill(i));
        m
    }

    /// Each file's first event not yet handed out, with its payload and file.
    pub fn heads(&self) -> impl Iterator<Item = (&RawEvent, &[u8], &BlkFile)> {
        (self.heads.iter().zip(&self.pdus).zip(&self.files))
            .filter_map(|((h, p), f)| Some((h.as_ref()?, p.as_slice(), f)))
    }

    fn refill(&mut self, i: usize) {
        match self.files[i].next(&mut self.pdus[i]) {
            Ok(Some(ev)) => {
                self.heap.push(Reverse((ev.time_ns, i)));
                self.heads[i] = Some(ev);
            }
            Ok(None) => {}
            Err(e) => {
                self.error.get_or_insert((i, e));
            }
        }
    }

    /// The earliest event of all files, its payload in `pdu`; `None` when every file has
    /// ended.
    pub fn next(&mut self, pdu: &mut Vec<u8>) -> Option<RawEvent> {
        if let Some(i) = self.stale.take() {
            self.refill(i);
        }
        let Reverse((_, i)) = self.heap.pop()?;
        let ev = self.heads[i].take()?;
        std::mem::swap(pdu, &mut self.pdus[i]);
        self.stale = Some(i);
        Some(ev)
    }

    /// The first file that stopped at a bad event, and why.
    pub fn take_error(&mut self) -> Option<(usize, EventError)> {
        self.error.take()
    }
}

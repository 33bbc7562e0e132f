//! What every thread of a run shares: the file, the generation map, the failure sink, the
//! journal, the layout of the file (data pages, then the log) and the flags that stop the run.
//! It is its own module so the loops ([`super::slots`], [`super::final_pass`]) and the
//! judgements they call ([`super::judge`]) all depend on it and not on each other.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::error::VerifyError;
use crate::journal::JournalWriter;
use crate::map::GenMap;
use crate::page::FileIdent;
use crate::report::Sink;

/// Longest read-ahead scan, in pages; the size of every read buffer.
pub const MAX_SCAN_PAGES: usize = 64;
/// Bytes per write of the initial fill and per read of the final pass (at most
/// [`MAX_SCAN_PAGES`] pages).
pub const BATCH_BYTES: usize = 1 << 20;

pub(crate) struct Shared<'a> {
    pub f: &'a File,
    pub id: FileIdent,
    pub map: &'a GenMap,
    pub sink: &'a Sink,
    pub journal: Option<&'a JournalWriter>,
    pub pages: u64,
    /// Pages `0..data_pages` take random updates; the rest is the log.
    pub data_pages: u64,
    pub log_pages: u64,
    pub log_cursor: AtomicU64,
    /// Every write is durable (RWF_DSYNC): a journal records only durable writes.
    pub dsync_all: bool,
    /// Set by the caller (Ctrl-C).
    pub stop: &'a AtomicBool,
    /// Set by the run: the duration ended, or a write or the journal failed.
    pub halt: AtomicBool,
    pub fatal: Mutex<Option<VerifyError>>,
}

impl<'a> Shared<'a> {
    /// The state of a run of `pages` pages on `f`, the last 1/16 of them (at least one) the log.
    pub fn new(
        f: &'a File,
        id: FileIdent,
        map: &'a GenMap,
        sink: &'a Sink,
        journal: Option<&'a JournalWriter>,
        stop: &'a AtomicBool,
    ) -> Self {
        let pages = map.len();
        let log_pages = (pages / 16).max(1);
        Self {
            f,
            id,
            map,
            sink,
            journal,
            pages,
            data_pages: pages - log_pages,
            log_pages,
            log_cursor: AtomicU64::new(0),
            dsync_all: journal.is_some(),
            stop,
            halt: AtomicBool::new(false),
            fatal: Mutex::new(None),
        }
    }

    pub fn halted(&self) -> bool {
        self.halt.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }

    /// Stops the run with `e` (the first such error is the one returned).
    pub fn fail(&self, e: VerifyError) {
        self.fatal
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
        self.halt.store(true, Ordering::SeqCst);
    }
}

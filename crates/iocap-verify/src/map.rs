//! The expected generation of every page, in four bytes a page and without a lock.
//!
//! A verifier must know what each page should hold at the moment it reads it, while other
//! threads rewrite pages. One `AtomicU32` per page holds the generation (low 31 bits) and a
//! "write in flight" bit. A writer claims a page with a compare-exchange (a page has at most one
//! writer; a busy page is skipped, not waited for), writes, then publishes generation + 1 with
//! the bit clear. A reader loads the state before and after its read: if a write was in flight
//! or the generation moved, the read overlapped a write and is skipped, never reported.

use std::sync::atomic::{fence, AtomicU32, Ordering};

/// The "write in flight" bit.
pub const BUSY: u32 = 1 << 31;
/// The largest generation the map holds.
pub const MAX_GEN: u32 = BUSY - 1;

pub struct GenMap {
    pages: Box<[AtomicU32]>,
}

/// A state read before a read: the generation the page must show if nothing moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Snapshot(u32);

impl Snapshot {
    pub fn generation(self) -> u32 {
        self.0 & MAX_GEN
    }
    pub fn busy(self) -> bool {
        self.0 & BUSY != 0
    }
}

impl GenMap {
    /// `pages` pages, all at generation `initial`.
    pub fn new(pages: u64, initial: u32) -> Self {
        Self {
            pages: (0..pages).map(|_| AtomicU32::new(initial)).collect(),
        }
    }

    pub fn len(&self) -> u64 {
        self.pages.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Claims `page` for a write; returns its current generation, or `None` if another writer
    /// holds it (pick another page) or the generation cannot grow further.
    pub fn try_begin_write(&self, page: u64) -> Option<u32> {
        let a = &self.pages[page as usize];
        let cur = a.load(Ordering::Acquire);
        if cur & BUSY != 0 || cur >= MAX_GEN {
            return None;
        }
        a.compare_exchange(cur, cur | BUSY, Ordering::AcqRel, Ordering::Relaxed)
            .ok()
            .map(|_| {
                // the claim must be visible before the write it guards is issued
                fence(Ordering::SeqCst);
                cur
            })
    }

    /// Publishes generation `generation` for a page claimed with [`Self::try_begin_write`]
    /// (the old one again if the write failed or the claim was only to hold the page still).
    pub fn end_write(&self, page: u64, generation: u32) {
        debug_assert!(self.pages[page as usize].load(Ordering::Relaxed) & BUSY != 0);
        self.pages[page as usize].store(generation & MAX_GEN, Ordering::Release);
    }

    /// The state before a read.
    pub fn before_read(&self, page: u64) -> Snapshot {
        Snapshot(self.pages[page as usize].load(Ordering::Acquire))
    }

    /// Whether a read that started at `before` saw a page no write touched meanwhile.
    pub fn read_was_stable(&self, page: u64, before: Snapshot) -> bool {
        // the read's data must be ordered before this second look
        fence(Ordering::SeqCst);
        !before.busy() && self.pages[page as usize].load(Ordering::Acquire) == before.0
    }

    /// The current generation (for the final pass, when no writer runs).
    pub fn generation(&self, page: u64) -> u32 {
        self.pages[page as usize].load(Ordering::Acquire) & MAX_GEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn one_writer_at_a_time() {
        let m = GenMap::new(4, 1);
        assert_eq!(m.try_begin_write(2), Some(1));
        assert_eq!(m.try_begin_write(2), None, "busy");
        let s = m.before_read(2);
        assert!(s.busy());
        assert!(!m.read_was_stable(2, s));
        m.end_write(2, 2);
        let s = m.before_read(2);
        assert_eq!(s.generation(), 2);
        assert!(m.read_was_stable(2, s));
        assert_eq!(m.try_begin_write(2), Some(2));
        assert!(
            !m.read_was_stable(2, s),
            "a write began after the first look"
        );
    }

    /// Threads hammering a few pages: a writer always owns its page alone, and a reader that
    /// saw a stable state saw one writer's generation, never a torn one.
    #[test]
    fn hammering_never_shows_a_torn_state() {
        let m = GenMap::new(8, 1);
        // the "page contents": what the last writer wrote, checked by readers
        let content: Vec<AtomicU64> = (0..8).map(|_| AtomicU64::new(1)).collect();
        let writes = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (m, content, writes) = (&m, &content, &writes);
                s.spawn(move || {
                    let mut x = t + 1;
                    for _ in 0..20_000 {
                        x = x
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let p = (x >> 33) % 8;
                        if t % 2 == 0 {
                            if let Some(g) = m.try_begin_write(p) {
                                let c = &content[p as usize];
                                assert_eq!(c.load(Ordering::SeqCst), u64::from(g));
                                c.store(u64::MAX, Ordering::SeqCst); // "half written"
                                c.store(u64::from(g + 1), Ordering::SeqCst);
                                m.end_write(p, g + 1);
                                writes.fetch_add(1, Ordering::Relaxed);
                            }
                        } else {
                            let b = m.before_read(p);
                            let v = content[p as usize].load(Ordering::SeqCst);
                            if m.read_was_stable(p, b) {
                                assert_eq!(v, u64::from(b.generation()));
                            }
                        }
                    }
                });
            }
        });
        let total: u64 = (0..8).map(|p| u64::from(m.generation(p)) - 1).sum();
        assert_eq!(total, writes.load(Ordering::Relaxed));
    }
}

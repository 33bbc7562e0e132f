//! Fault rules: what to inject, where, and how often it happened.
//!
//! A rule is deliberately dumb: a file name (or every file), a byte range of that file, an
//! operation filter and one [`Fault`]. The file system asks the [`RuleSet`] for the rules that
//! match each request and then decides what to do (see `fs.rs`); the rule set only answers
//! "which rules match" and counts firings, so a test can assert that the fault it armed was
//! really injected instead of trusting that the I/O happened to cross the range.
//!
//! When several armed rules match one request: every `Latency` rule applies (their delays add
//! up), every `Cache` rule looks the request up in its own cache (the delays of the caches it
//! misses add up), `StaleReads` rules save and serve old blocks, and of the other rules the oldest one that
//! has an effect on this request decides it alone (a `SizeLimit` that is not exceeded, or
//! `TearWrites` on a write no longer than `keep_bytes`, has no effect and leaves the decision to
//! the next rule). Only the deciding rule's counter goes up. For fallocate only `Eio`, `Enospc`
//! and `SizeLimit` (and `Latency`) apply.

use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;

/// Which requests a rule looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ops {
    /// Only reads.
    Read,
    /// Only writes (and, for the faults where it makes sense, fallocate).
    Write,
    /// Reads and writes.
    Both,
}

impl Ops {
    fn covers(self, kind: Kind) -> bool {
        matches!(
            (self, kind),
            (Ops::Both, _) | (Ops::Read, Kind::Read) | (Ops::Write, Kind::Write)
        )
    }
}

/// The kind of request being matched (internal to the crate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Write,
}

/// The fault a rule injects. Write-only faults ignore reads whatever the [`Ops`] filter says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The request fails with `EIO` (reads and/or writes, after [`Ops`]; fallocate counts as a
    /// write).
    Eio,
    /// Writes and fallocate overlapping the range fail with `ENOSPC`. The whole request fails;
    /// nothing is written (no short write).
    Enospc,
    /// Writes and fallocate that would end beyond this many bytes of the file fail with `ENOSPC`
    /// (the range still limits which requests are looked at; use `0..u64::MAX`). Truncate is not
    /// limited: extending a file with `set_len` allocates nothing on a real file system either.
    SizeLimit(u64),
    /// Writes are acknowledged with their full length but never reach the backing file.
    DropWrites,
    /// Reads return the previous version of each 4 KiB block, saved the last time a write
    /// (while this rule was armed) overwrote it; blocks never overwritten read normally. The
    /// rule looks at writes (to save versions) and reads (to serve them) whatever its [`Ops`];
    /// it counts as fired when a read returned at least one old block.
    StaleReads,
    /// Writes land `shift_bytes` away from where they were aimed; the intended place keeps its
    /// old contents. A write that would land before offset 0 fails with `EIO`.
    Misdirect {
        /// Signed distance in bytes from the intended offset to where the data lands.
        shift_bytes: i64,
    },
    /// A write longer than `keep_bytes` writes only its first `keep_bytes` bytes and is still
    /// acknowledged in full: a torn page.
    TearWrites {
        /// How many leading bytes of the write reach the backing file (4096 is a typical sector
        /// or page that made it before a power cut).
        keep_bytes: u64,
    },
    /// Each matching request is delayed by this long before it is served.
    Latency(Duration),
    /// A read cache of `window_bytes` below the file: reads whose every 4 KiB block is among
    /// the `window_bytes` least recently used are served at once, other reads are delayed by
    /// `miss`. Every read fills the cache; writes fill it too when the rule's [`Ops`] cover
    /// writes (a write-back cache). Rules stack: a read that misses two caches is delayed by
    /// both. The rule counts as fired on every miss.
    Cache {
        /// Size of the cache, in bytes (whole 4 KiB blocks).
        window_bytes: u64,
        /// Delay of a read that misses the cache.
        miss: Duration,
    },
}

impl Fault {
    /// `TearWrites` with the usual 4 KiB kept.
    pub fn tear_4k() -> Fault {
        Fault::TearWrites { keep_bytes: 4096 }
    }

    fn applies_to(&self, kind: Kind) -> bool {
        match self {
            Fault::Eio | Fault::Latency(_) | Fault::StaleReads | Fault::Cache { .. } => true,
            Fault::Enospc
            | Fault::SizeLimit(_)
            | Fault::DropWrites
            | Fault::Misdirect { .. }
            | Fault::TearWrites { .. } => kind == Kind::Write,
        }
    }
}

/// One fault rule. Build it with [`Rule::new`] and the builder methods, or fill the fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The file (its path relative to the backing directory, e.g. `"data.iocap"`), or `None`
    /// for every file.
    pub file: Option<String>,
    /// Byte range of the file; a request overlapping `[start, end)` triggers the rule.
    pub range: Range<u64>,
    /// Which requests the rule looks at.
    pub ops: Ops,
    /// What happens.
    pub fault: Fault,
}

impl Rule {
    /// A rule for every file, every byte, reads and writes.
    pub fn new(fault: Fault) -> Rule {
        Rule {
            file: None,
            range: 0..u64::MAX,
            ops: Ops::Both,
            fault,
        }
    }

    /// Limit the rule to one file (path relative to the backing directory).
    pub fn file(mut self, name: impl Into<String>) -> Rule {
        self.file = Some(name.into());
        self
    }

    /// Limit the rule to the byte range `[range.start, range.end)`.
    pub fn range(mut self, range: Range<u64>) -> Rule {
        self.range = range;
        self
    }

    /// Limit the rule to reads or to writes.
    pub fn ops(mut self, ops: Ops) -> Rule {
        self.ops = ops;
        self
    }

    pub(crate) fn matches(&self, file: &str, kind: Kind, offset: u64, len: u64) -> bool {
        if let Some(f) = &self.file {
            if f != file {
                return false;
            }
        }
        // StaleReads must see the writes it versions, whatever the filter says.
        let ops_ok = self.fault == Fault::StaleReads || self.ops.covers(kind);
        if !ops_ok || !self.fault.applies_to(kind) {
            return false;
        }
        // A zero-length request overlaps nothing, except that it sits inside the range.
        let end = offset.saturating_add(len.max(1));
        offset < self.range.end && self.range.start < end
    }
}

/// Identifies a rule added to a mounted [`crate::FaultFs`]. Ids are never reused, so a counter
/// read after [`crate::FaultFs::clear`] still answers for the cleared rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuleId(pub u64);

/// The armed rules in the order they were added, and every rule's firing count.
#[derive(Debug, Default)]
pub(crate) struct RuleSet {
    next: u64,
    armed: BTreeMap<RuleId, Rule>,
    fired: BTreeMap<RuleId, u64>,
}

impl RuleSet {
    pub(crate) fn add(&mut self, rule: Rule) -> RuleId {
        self.next += 1;
        let id = RuleId(self.next);
        self.armed.insert(id, rule);
        self.fired.insert(id, 0);
        id
    }

    pub(crate) fn remove(&mut self, id: RuleId) -> Option<Rule> {
        self.armed.remove(&id)
    }

    pub(crate) fn clear(&mut self) {
        self.armed.clear();
    }

    pub(crate) fn list(&self) -> Vec<(RuleId, Rule)> {
        self.armed.iter().map(|(i, r)| (*i, r.clone())).collect()
    }

    pub(crate) fn fired(&self, id: RuleId) -> u64 {
        self.fired.get(&id).copied().unwrap_or(0)
    }

    pub(crate) fn fire(&mut self, id: RuleId) {
        *self.fired.entry(id).or_insert(0) += 1;
    }

    /// The armed rules matching a request, oldest first.
    pub(crate) fn matching(
        &self,
        file: &str,
        kind: Kind,
        offset: u64,
        len: u64,
    ) -> Vec<(RuleId, Rule)> {
        self.armed
            .iter()
            .filter(|(_, r)| r.matches(file, kind, offset, len))
            .map(|(i, r)| (*i, r.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_and_filters() {
        let r = Rule::new(Fault::Eio)
            .file("a")
            .range(8192..16384)
            .ops(Ops::Write);
        assert!(r.matches("a", Kind::Write, 8192, 8192));
        assert!(r.matches("a", Kind::Write, 0, 8193));
        assert!(!r.matches("a", Kind::Write, 0, 8192));
        assert!(!r.matches("a", Kind::Write, 16384, 10));
        assert!(!r.matches("a", Kind::Read, 8192, 10));
        assert!(!r.matches("b", Kind::Write, 8192, 10));
        let d = Rule::new(Fault::DropWrites);
        assert!(
            !d.matches("x", Kind::Read, 0, 10),
            "write faults ignore reads"
        );
        assert!(d.matches("x", Kind::Write, 0, 10));
    }

    #[test]
    fn ids_count_and_survive_clear() {
        let mut s = RuleSet::default();
        let a = s.add(Rule::new(Fault::Eio));
        let b = s.add(Rule::new(Fault::DropWrites));
        assert_ne!(a, b);
        s.fire(a);
        s.fire(a);
        s.clear();
        assert_eq!(s.fired(a), 2);
        assert_eq!(s.fired(b), 0);
        assert!(s.list().is_empty());
        assert!(s.add(Rule::new(Fault::Eio)) > b);
    }
}

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
//! misses add up), every `TokenBucket` rule takes a token from its own bucket (their delays add
//! up, and to the latency and cache delays: each bucket schedules its own requests and knows
//! nothing of the others' delays, so two buckets on one file do not make one bucket of the
//! lower rates), `StaleReads` rules save and serve old blocks, and of the other rules the
//! oldest one that has an effect on this request decides it alone (a `SizeLimit` that is not
//! exceeded, or `TearWrites` on a write no longer than `keep_bytes`, has no effect and leaves
//! the decision to the next rule). Only the deciding rule's counter goes up (and every delaying
//! rule's, as each says). For fallocate only `Eio`, `Enospc` and `SizeLimit` (and `Latency`)
//! apply; a token bucket, like a cache, lets it pass without taking a token.
//!
//! A rule with parameters that make no sense (so far only a `TokenBucket` with a rate that is
//! not finite and above 0, a peak below the fill rate, or a bucket of 0) is refused when it is
//! armed: [`crate::FaultFs::add`] panics with the reason. Build it with [`Fault::token_bucket`]
//! to get the reason as an error instead.

use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;

use crate::bucket::Bucket;

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
///
/// (`PartialEq` only: [`Fault::TokenBucket`] holds rates as `f64`.)
#[derive(Clone, Debug, PartialEq)]
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
    /// A cloud volume's burst bucket, counted in I/Os (as AWS gp2 volumes and Azure's
    /// credit-based bursting behave): matching requests run at up to `peak_per_s` while the
    /// bucket has tokens, and at `fill_per_s`, the baseline, once it is empty.
    ///
    /// The bucket starts full, with `bucket_ios` tokens. Tokens are added at `fill_per_s`
    /// continuously, busy or idle, up to `bucket_ios`. Each matching read or write (after the
    /// rule's file, range and [`Ops`]) takes one token and is served at the earliest time that
    /// is (a) not before it arrived, (b) at least `1 / peak_per_s` after the previous matching
    /// request was served, and (c) when the bucket holds a token. So a client driving the file
    /// as hard as it can gets `peak_per_s` for about `bucket_ios / (peak_per_s - fill_per_s)`
    /// seconds, then `fill_per_s`; after an idle pause of `P` seconds it gets about
    /// `min(bucket_ios, fill_per_s * P)` I/Os above the baseline again, at `peak_per_s`.
    ///
    /// Counted per FUSE request, whatever its size (a 1 MiB request takes one token, like an
    /// 8 KiB one; see the crate docs on request granularity). The waiting is done on the single
    /// serving thread, as for `Latency`: while one request waits for its token, every other
    /// request on the mount waits behind it, as on a volume whose every I/O goes through the
    /// bucket. A request that arrives while the one before it is still waiting is scheduled
    /// after it, in order. Fallocate passes without a token.
    ///
    /// The rule counts as fired on every request that took a token, delayed or not (so a test
    /// can count the I/Os the bucket saw). Several buckets matching one request each delay it
    /// (the delays add up, as for `Latency`). The bucket's state lives as long as the rule is
    /// armed; removing the rule and adding it again gives a full bucket.
    ///
    /// The parameters must make sense: `bucket_ios` at least 1, both rates finite and above 0,
    /// and `peak_per_s >= fill_per_s` (equal is a plain rate limit). [`crate::FaultFs::add`]
    /// panics on a rule that breaks this; [`Fault::token_bucket`] checks it and returns the
    /// reason as an error.
    TokenBucket {
        /// Size of the bucket in I/Os; it starts full.
        bucket_ios: u64,
        /// Tokens added per second (the sustained, baseline I/O rate), at all times.
        fill_per_s: f64,
        /// The most I/Os per second served while the bucket has tokens (the burst rate).
        peak_per_s: f64,
    },
}

impl Fault {
    /// `TearWrites` with the usual 4 KiB kept.
    pub fn tear_4k() -> Fault {
        Fault::TearWrites { keep_bytes: 4096 }
    }

    /// [`Fault::TokenBucket`], checked: an error saying what is wrong with the parameters (a
    /// bucket of 0, a rate that is not finite and above 0, a peak below the fill rate).
    pub fn token_bucket(
        bucket_ios: u64,
        fill_per_s: f64,
        peak_per_s: f64,
    ) -> Result<Fault, String> {
        Bucket::new(bucket_ios, fill_per_s, peak_per_s)?;
        Ok(Fault::TokenBucket {
            bucket_ios,
            fill_per_s,
            peak_per_s,
        })
    }

    /// Whether the fault's parameters make sense; the reason if not.
    pub(crate) fn check(&self) -> Result<(), String> {
        match *self {
            Fault::TokenBucket {
                bucket_ios,
                fill_per_s,
                peak_per_s,
            } => Bucket::new(bucket_ios, fill_per_s, peak_per_s)
                .map(drop)
                .map_err(|e| format!("invalid TokenBucket rule: {e}")),
            _ => Ok(()),
        }
    }

    fn applies_to(&self, kind: Kind) -> bool {
        match self {
            Fault::Eio
            | Fault::Latency(_)
            | Fault::StaleReads
            | Fault::Cache { .. }
            | Fault::TokenBucket { .. } => true,
            Fault::Enospc
            | Fault::SizeLimit(_)
            | Fault::DropWrites
            | Fault::Misdirect { .. }
            | Fault::TearWrites { .. } => kind == Kind::Write,
        }
    }
}

/// One fault rule. Build it with [`Rule::new`] and the builder methods, or fill the fields.
#[derive(Clone, Debug, PartialEq)]
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

    #[test]
    fn token_buckets_see_reads_and_writes_and_refuse_nonsense() {
        let f = Fault::token_bucket(100, 10.0, 1000.0).unwrap();
        assert_eq!(
            f,
            Fault::TokenBucket {
                bucket_ios: 100,
                fill_per_s: 10.0,
                peak_per_s: 1000.0
            }
        );
        assert_eq!(f.check(), Ok(()));
        let r = Rule::new(f).file("a").range(0..4096);
        assert!(r.matches("a", Kind::Read, 0, 10));
        assert!(r.matches("a", Kind::Write, 4095, 10));
        assert!(!r.matches("a", Kind::Write, 4096, 10));
        assert!(!r.clone().ops(Ops::Write).matches("a", Kind::Read, 0, 10));
        for (size, fill, peak) in [
            (0, 1.0, 1.0),
            (1, 0.0, 1.0),
            (1, 2.0, 1.0),
            (1, 1.0, f64::NAN),
        ] {
            assert!(Fault::token_bucket(size, fill, peak).is_err());
            let raw = Fault::TokenBucket {
                bucket_ios: size,
                fill_per_s: fill,
                peak_per_s: peak,
            };
            assert!(raw
                .check()
                .unwrap_err()
                .starts_with("invalid TokenBucket rule: "));
        }
        assert_eq!(Fault::Eio.check(), Ok(()));
    }
}

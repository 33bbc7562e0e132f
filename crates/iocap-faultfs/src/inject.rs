//! Deciding and carrying out faults: the state a test changes at runtime and the rule logic.
//!
//! [`Shared`] is what the [`crate::FaultFs`] handle and the serving thread have in common: the
//! rules, the write log, the saved block versions and the caches' and token buckets' state,
//! each behind its own mutex. The handlers in `fs.rs` ask [`Shared::decide`] what to do with a
//! request (under the rules lock, which is never held across I/O or a sleep), then sleep with
//! [`sleep_until`] and do the I/O.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use libc::c_int;

use crate::bucket::Bucket;
use crate::cache::Lru;
use crate::log::WriteRecord;
use crate::rules::{Fault, Kind, Rule, RuleId, RuleSet};

/// Size of the blocks whose previous versions [`Fault::StaleReads`] keeps.
pub(crate) const STALE_BLOCK: u64 = 4096;

/// State shared between the mounted file system and the [`crate::FaultFs`] handle.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub(crate) rules: Mutex<RuleSet>,
    pub(crate) log: Mutex<Vec<WriteRecord>>,
    /// Per file, per 4 KiB block number: the block's contents before its latest write.
    pub(crate) stale: Mutex<HashMap<String, HashMap<u64, Vec<u8>>>>,
    /// Per cache rule, the blocks it holds (taken after the rules lock, never before it).
    pub(crate) caches: Mutex<HashMap<RuleId, Lru>>,
    /// Per token-bucket rule, its bucket and the instant its times count from (its first
    /// request). Made at the rule's first request: a bucket starts full and cannot fill beyond
    /// that, so it is the same as one made when the rule was armed. Taken after the rules lock,
    /// never before it.
    pub(crate) buckets: Mutex<HashMap<RuleId, (Instant, Bucket)>>,
}

/// Lock, ignoring poisoning: a panicking test must not wedge the file system.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sleep until `deadline` without overshooting by more than a few microseconds: the kernel
/// sleep covers all but the last 100 µs, which are spun. (The serving thread's timer slack is
/// also lowered in `init`.)
pub(crate) fn sleep_until(deadline: Instant) {
    const SPIN: Duration = Duration::from_micros(100);
    loop {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let left = deadline - now;
        if left > SPIN {
            std::thread::sleep(left - SPIN);
        } else {
            std::hint::spin_loop();
        }
    }
}

/// What the rules say about one request.
pub(crate) struct Decision {
    /// Summed delay of the matching latency, cache and token-bucket rules, counted from the
    /// request's arrival (the `now` given to [`Shared::decide`]).
    pub(crate) delay: Duration,
    /// The oldest matching rule with an effect, and the effect.
    pub(crate) decisive: Option<(RuleId, Action)>,
    /// The matching StaleReads rules.
    pub(crate) stale: Vec<(RuleId, Rule)>,
}

/// What a write-side request will do, decided under the rules lock and carried out after it.
pub(crate) enum Action {
    Pass,
    Fail(c_int),
    Drop,
    Misdirect(u64),
    Tear(u64),
}

/// How a request reaches the file: with data (a read or a write), or as a fallocate, which
/// carries none (caches and the write-only faults that change data pass it by).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    Data,
    Fallocate,
}

impl Shared {
    /// Match the rules for a request that arrived at `now`; fire the delaying rules and the
    /// decisive one.
    pub(crate) fn decide(
        &self,
        name: &str,
        kind: Kind,
        offset: u64,
        len: u64,
        via: Via,
        now: Instant,
    ) -> Decision {
        let fallocate = via == Via::Fallocate;
        let mut rules = lock(&self.rules);
        let matched = rules.matching(name, kind, offset, len);
        let mut delay = Duration::ZERO;
        let mut decisive = None;
        let mut stale = Vec::new();
        for (id, rule) in matched {
            let action = match rule.fault {
                Fault::Latency(d) => {
                    rules.fire(id);
                    delay += d;
                    continue;
                }
                Fault::StaleReads => {
                    stale.push((id, rule));
                    continue;
                }
                Fault::Cache { window_bytes, miss } => {
                    if fallocate {
                        continue;
                    }
                    let mut caches = lock(&self.caches);
                    let lru = caches.entry(id).or_insert_with(|| Lru::new(window_bytes));
                    let hit = lru.access(name, offset, len);
                    if kind == Kind::Read && !hit {
                        rules.fire(id);
                        delay += miss;
                    }
                    continue;
                }
                Fault::TokenBucket {
                    bucket_ios,
                    fill_per_s,
                    peak_per_s,
                } => {
                    if fallocate {
                        continue;
                    }
                    let mut buckets = lock(&self.buckets);
                    let (origin, bucket) = match buckets.entry(id) {
                        Entry::Occupied(e) => e.into_mut(),
                        Entry::Vacant(e) => match Bucket::new(bucket_ios, fill_per_s, peak_per_s) {
                            Ok(b) => e.insert((now, b)),
                            // FaultFs::add refuses such a rule; never panic on this thread
                            Err(_) => continue,
                        },
                    };
                    rules.fire(id);
                    delay += bucket.take(now.saturating_duration_since(*origin));
                    continue;
                }
                _ if decisive.is_some() => continue,
                Fault::Eio => Action::Fail(libc::EIO),
                Fault::Enospc => Action::Fail(libc::ENOSPC),
                Fault::SizeLimit(limit) if offset.saturating_add(len) > limit => {
                    Action::Fail(libc::ENOSPC)
                }
                Fault::SizeLimit(_) => continue,
                _ if fallocate => continue,
                Fault::DropWrites => Action::Drop,
                Fault::Misdirect { shift_bytes } => match offset.checked_add_signed(shift_bytes) {
                    Some(at) => Action::Misdirect(at),
                    None => Action::Fail(libc::EIO),
                },
                Fault::TearWrites { keep_bytes } if len > keep_bytes => Action::Tear(keep_bytes),
                Fault::TearWrites { .. } => continue,
            };
            rules.fire(id);
            decisive = Some((id, action));
        }
        Decision {
            delay,
            decisive,
            stale,
        }
    }

    /// Save the current contents of every 4 KiB block in `range` as its previous version.
    pub(crate) fn save_versions(&self, name: &str, file: &File, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        let mut stale = lock(&self.stale);
        let per = stale.entry(name.to_string()).or_default();
        for block in offset / STALE_BLOCK..=(offset + len - 1) / STALE_BLOCK {
            let mut buf = vec![0u8; STALE_BLOCK as usize];
            let n = read_full_at(file, &mut buf, block * STALE_BLOCK).unwrap_or(0);
            buf.truncate(n);
            per.insert(block, buf);
        }
    }

    /// Overlay saved previous versions on `buf` (read from `offset`) where `rule` covers them;
    /// true if anything was replaced.
    pub(crate) fn serve_stale(&self, name: &str, rule: &Rule, offset: u64, buf: &mut [u8]) -> bool {
        let stale = lock(&self.stale);
        let Some(per) = stale.get(name) else {
            return false;
        };
        let end = offset + buf.len() as u64;
        let mut replaced = false;
        for block in offset / STALE_BLOCK..end.div_ceil(STALE_BLOCK) {
            let Some(old) = per.get(&block) else { continue };
            let b0 = block * STALE_BLOCK;
            let lo = offset.max(b0).max(rule.range.start);
            let hi = end.min(b0 + old.len() as u64).min(rule.range.end);
            if lo >= hi {
                continue;
            }
            buf[(lo - offset) as usize..(hi - offset) as usize]
                .copy_from_slice(&old[(lo - b0) as usize..(hi - b0) as usize]);
            replaced = true;
        }
        replaced
    }
}

/// `read_at` until `buf` is full or end of file; the number of bytes read.
pub(crate) fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

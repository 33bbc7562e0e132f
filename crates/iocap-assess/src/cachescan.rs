//! Reading a cache sweep: which working sets to try, where a cache ends, whether a write cache
//! keeps recent writes, and how large preflight's test files must be to measure past the
//! caches found.
//!
//! The level rule works on the mean qd-1 latency because of what an LRU cache of size C does
//! to random reads over a working set W: it holds about C/W of it, so the mean latency is
//! `hit·C/W + miss·(1 - C/W)`. From the last working set that fits (W ≤ C) to the next (2W),
//! the mean rises by at least 1.6 times whenever a miss costs at least 2.2 hits. The doubling
//! after that can rise as steeply (when C is close below 2W, the hit share falls from near 1 to
//! near 1/2), so the rise right after an edge belongs to the same cache; every later doubling
//! rises by at most 1.5 times (the hit share, at most 1/2 by then, only halves again), so the
//! slow climb past a cache does not count twice, and a steeper rise there is another cache.
//! Two caches less than two doublings apart are therefore seen as one.
//! The qd-32 IOPS must fall with the latency rise (by a tenth at least), and both must hold at
//! the working set after the next one too, so that one noisy reading (a stall of the host in
//! one step) is not called a cache. For the same reason a step cannot end a cache when it is
//! itself faster, by the rise, than an earlier step of the same level: under LRU the mean only
//! grows with the working set, so such a step was a lucky reading, and a rise from it is the
//! noise coming back (seen on a memory-backed device whose reads vary from 5 to 25 µs).
//! Last, every edge is measured again after the sweep (the step that fit, then the one past
//! it) and stands only if the rise and the fall hold again: a sweep only goes up, so load that
//! grows during it looks like a cache at whichever step it begins (a memory-backed device
//! beside other tests once showed a level that way).

use iocap_model::{
    format_bytes, human_bytes, CacheLevel, CacheRecheck, CacheScan, CacheStep, ReadAfterWrite,
};

/// Smallest working set of a sweep.
pub const FIRST_WORKING_SET_BYTES: u64 = 16 << 20;
/// A rise of the mean qd-1 latency between two neighbouring working sets at least this large
/// ends a cache level.
pub const LEVEL_LAT_RISE: f64 = 1.6;
/// ... and the qd-32 IOPS must fall to at most this share.
pub const LEVEL_IOPS_FALL: f64 = 0.9;
/// At the sweep's last step nothing later can confirm a rise, so it must be this steep ...
pub const LAST_LAT_RISE: f64 = 2.5;
/// ... and the IOPS fall to at most this share.
pub const LAST_IOPS_FALL: f64 = 0.7;
/// A test file is made this many times larger than the largest cache found.
pub const FILE_PER_CACHE: u64 = 4;
/// A read right after its write at most this share of an old read's latency: a write cache.
pub const RAW_HIT_SHARE: f64 = 0.5;

/// The working sets of a sweep up to `max_bytes`: 16 MiB doubling, and `max_bytes` itself last
/// when it is more than a quarter past the last doubling. A maximum below 16 MiB is one step.
pub fn working_sets(max_bytes: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut w = FIRST_WORKING_SET_BYTES.min(max_bytes);
    while w <= max_bytes && w > 0 {
        out.push(w);
        match w.checked_mul(2) {
            Some(n) => w = n,
            None => break,
        }
    }
    if let Some(&last) = out.last() {
        if max_bytes > last + last / 4 {
            out.push(max_bytes);
        }
    }
    out
}

fn finite(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// Whether step `b` (a larger working set) is slower than step `a` by `rise` in latency with
/// the IOPS down to `fall`.
fn slower(a: &CacheStep, b: &CacheStep, rise: f64, fall: f64) -> bool {
    finite(a.lat_us_trim_mean)
        && finite(b.lat_us_trim_mean)
        && b.lat_us_trim_mean >= a.lat_us_trim_mean * rise
        && (!finite(a.iops_qd32) || b.iops_qd32 <= a.iops_qd32 * fall)
}

/// Whether going from step `k` to the next leaves a cache: the next step is slower, and so is
/// the one after it (past a cache latency never falls back: a step that does was a stall of
/// the host, not a cache). Where the next step is the last, nothing can confirm it, and the
/// rise must be steeper ([`LAST_LAT_RISE`], [`LAST_IOPS_FALL`]).
fn leaves_cache(steps: &[CacheStep], k: usize) -> bool {
    if k + 2 >= steps.len() {
        return slower(&steps[k], &steps[k + 1], LAST_LAT_RISE, LAST_IOPS_FALL);
    }
    steps[k + 1..k + 3]
        .iter()
        .all(|b| slower(&steps[k], b, LEVEL_LAT_RISE, LEVEL_IOPS_FALL))
}

/// The rise of the last step over the one before when it is steep enough for a level but has
/// nothing after it to confirm it and is not steep enough alone: a larger sweep would tell.
pub fn unconfirmed_last_rise(steps: &[CacheStep], levels: &[CacheLevel]) -> Option<f64> {
    let [.., a, b] = steps else { return None };
    let counted = levels
        .iter()
        .any(|l| l.exceeds_bytes == b.working_set_bytes);
    (!counted && slower(a, b, LEVEL_LAT_RISE, LEVEL_IOPS_FALL))
        .then(|| b.lat_us_trim_mean / a.lat_us_trim_mean)
}

/// Whether step `k` is faster, by a level's rise, than an earlier step since `start` (the
/// first step of its level) and the step after it is not past that earlier step too: a lucky
/// reading, not the last working set that fits. Where the next step is past the slow earlier
/// one, that one was the host's (a first step beside other work read 459 µs, the next 274,
/// the one past a 40 MiB cache 1,230) and `k` fits.
fn lucky(steps: &[CacheStep], start: usize, k: usize) -> bool {
    let here = steps[k].lat_us_trim_mean;
    // past `a`: slower by a rise, or slower with the IOPS down by a level's fall (a first step
    // read 455 µs and 2,773 IOPS, the one past the cache 606 µs and 1,493)
    let past = |a: &CacheStep| {
        steps.get(k + 1).is_some_and(|n| {
            n.lat_us_trim_mean >= a.lat_us_trim_mean * LEVEL_LAT_RISE
                || (n.lat_us_trim_mean > a.lat_us_trim_mean
                    && finite(a.iops_qd32)
                    && n.iops_qd32 <= a.iops_qd32 * LEVEL_IOPS_FALL)
        })
    };
    finite(here)
        && steps[start..k]
            .iter()
            .any(|a| a.lat_us_trim_mean >= here * LEVEL_LAT_RISE && !past(a))
}

/// The cache levels of a sweep, smallest first (see the module doc for the rule).
pub fn levels(steps: &[CacheStep]) -> Vec<CacheLevel> {
    levels_at(steps, &edges(steps, &[]))
}

/// The steps after which a cache ends (the last step that fits each level), leaving out the
/// `rejected` ones: edges whose recheck failed (see [`recheck_holds`]).
pub fn edges(steps: &[CacheStep], rejected: &[usize]) -> Vec<usize> {
    // the rise right after an edge is the same cache still emptying (see the module doc)
    let mut edges: Vec<usize> = Vec::new();
    for k in 0..steps.len().saturating_sub(1) {
        let just_after = edges.last().is_some_and(|&e| e + 1 == k);
        let start = edges.last().map_or(0, |&e| e + 1);
        if !just_after
            && !rejected.contains(&k)
            && !lucky(steps, start, k)
            && leaves_cache(steps, k)
        {
            edges.push(k);
        }
    }
    edges
}

/// The levels ending after the steps `edges` (from [`edges`]).
pub fn levels_at(steps: &[CacheStep], edges: &[usize]) -> Vec<CacheLevel> {
    edges
        .iter()
        .enumerate()
        .map(|(n, &k)| {
            // the slowest step before the next level (or the end) stands for a miss
            let end = edges.get(n + 1).copied().unwrap_or(steps.len() - 1);
            let (fit, over, miss) = (&steps[k], &steps[k + 1], &steps[end]);
            CacheLevel {
                fits_bytes: fit.working_set_bytes,
                exceeds_bytes: over.working_set_bytes,
                estimated_bytes: estimate(fit, over, miss.lat_us_trim_mean, end == k + 1),
                hit_lat_us: fit.lat_us_trim_mean,
                miss_lat_us: miss.lat_us_trim_mean,
                hit_iops_qd32: fit.iops_qd32,
                miss_iops_qd32: miss.iops_qd32,
            }
        })
        .collect()
}

/// How many times an edge is measured again before it is called the host's load.
pub const RECHECKS: usize = 2;

/// Whether a recheck of an edge holds: the working set that fit, measured again after the
/// sweep, and then the one past it, are apart by a level's rise and fall once more. A sweep
/// only goes up, so load that grows during it rises like a cache at whichever step it begins;
/// measured again, it has no reason to rise at the same edge. Noise only slows a reading, so
/// one recheck of [`RECHECKS`] that holds is enough.
pub fn recheck_holds(fit: &CacheStep, over: &CacheStep) -> bool {
    slower(fit, over, LEVEL_LAT_RISE, LEVEL_IOPS_FALL)
}

/// The note on an edge whose every recheck failed.
pub fn rejected_note(first: (&CacheStep, &CacheStep), again: &[CacheRecheck]) -> String {
    let (a, b) = first;
    let ms = |s: &CacheStep| crate::fmt::ms(s.lat_us_trim_mean);
    let again: Vec<String> = again
        .iter()
        .map(|r| format!("{} then {}", ms(&r.fit), ms(&r.over)))
        .collect();
    format!(
        "reads rose from {} at {} to {} at {}, but not when measured again ({}): the host's \
         load changed during the sweep, not a cache",
        ms(a),
        human_bytes(a.working_set_bytes),
        ms(b),
        human_bytes(b.working_set_bytes),
        again.join("; ")
    )
}

/// The cache size from the hit share at the first working set past it (about C/W), kept
/// between the two working sets; their geometric middle when no later step shows what a miss
/// costs.
fn estimate(fit: &CacheStep, over: &CacheStep, miss_us: f64, no_later_step: bool) -> u64 {
    let (lo, hi) = (fit.working_set_bytes, over.working_set_bytes);
    let middle = ((lo as f64) * (hi as f64)).sqrt() as u64;
    if no_later_step || miss_us <= fit.lat_us_trim_mean {
        return middle;
    }
    let hit_share =
        ((miss_us - over.lat_us_trim_mean) / (miss_us - fit.lat_us_trim_mean)).clamp(0.0, 1.0);
    ((hit_share * hi as f64) as u64).clamp(lo, hi)
}

/// The read-after-write verdict: fresh reads at most [`RAW_HIT_SHARE`] of old reads.
pub fn holds_recent_writes(fresh_p50_us: f64, old_p50_us: f64) -> bool {
    finite(fresh_p50_us) && finite(old_p50_us) && fresh_p50_us <= old_p50_us * RAW_HIT_SHARE
}

/// Sentences on what a scan found and what it could not rule out.
pub fn scan_notes(scan: &CacheScan) -> Vec<String> {
    let mut notes = Vec::new();
    let upto = human_bytes(scan.tried_up_to_bytes);
    if let Some(r) = unconfirmed_last_rise(&scan.steps, &scan.levels) {
        notes.push(format!(
            "latency rose {r:.1} times at the last working set ({upto}) and nothing after it \
             could confirm a cache there: a larger sweep (--max) would tell"
        ));
    }
    if scan.levels.is_empty() {
        notes.push(format!(
            "no cache found up to {upto}: a cache larger than {upto} is not ruled out"
        ));
    } else if let Some(last) = scan.levels.last() {
        let end = scan.steps.last().map_or(0, |s| s.working_set_bytes);
        if end < last.exceeds_bytes.saturating_mul(2) {
            notes.push(format!(
                "the sweep ended at {upto}, close past the largest cache: its miss latency \
                 ({}) still includes hits",
                crate::fmt::ms(last.miss_lat_us)
            ));
        }
    }
    if let Some(r) = &scan.read_after_write {
        notes.push(raw_sentence(r));
    }
    notes
}

/// `reads right after a write took 0.05 ms against 1.2 ms for old data: ...`.
pub fn raw_sentence(r: &ReadAfterWrite) -> String {
    let (fresh, old) = (
        crate::fmt::ms(r.fresh_lat_us_p50),
        crate::fmt::ms(r.old_lat_us_p50),
    );
    if r.holds_recent_writes {
        format!(
            "reads right after a write took {fresh} against {old} for old data: a write cache \
             below the OS holds recent writes, so a test that reads what it just wrote measures \
             that cache"
        )
    } else {
        format!(
            "reads right after a write took {fresh} against {old} for old data: no sign of a \
             cache that keeps recent writes for reading"
        )
    }
}

/// How large preflight's test files are made after a scan.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSizing {
    pub bytes: u64,
    /// The files are smaller than [`FILE_PER_CACHE`] times the largest cache, or a cache could
    /// not be ruled out: the figures may include cache hits.
    pub cache_included: bool,
    /// What was decided and why, in one sentence.
    pub sentence: String,
}

/// Limits on the files' size besides the caches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizeLimits {
    /// What the mode uses without a scan (1 GiB quick, 8 GiB full): never less.
    pub default_bytes: u64,
    /// The largest size the free space allows for one file.
    pub space_bytes: u64,
    /// The largest size the time left for creating files allows.
    pub time_bytes: u64,
}

/// The test files' size after `scan`: [`FILE_PER_CACHE`] times the largest cache found, at
/// least the default, at most what space and time allow, in whole MiB.
pub fn size_files(scan: &CacheScan, lim: SizeLimits) -> FileSizing {
    let cap = lim.space_bytes.min(lim.time_bytes);
    let Some(cache) = scan.largest_cache_bytes() else {
        let upto = human_bytes(scan.tried_up_to_bytes);
        let covered = lim.default_bytes >= scan.tried_up_to_bytes.saturating_mul(FILE_PER_CACHE);
        return FileSizing {
            bytes: lim.default_bytes,
            cache_included: false,
            sentence: if covered {
                format!(
                    "the cache scan found no cache up to {upto}; the test files are {}",
                    format_bytes(lim.default_bytes)
                )
            } else {
                format!(
                    "the cache scan found no cache up to {upto} and could not rule out a larger \
                     one; the test files are {}",
                    format_bytes(lim.default_bytes)
                )
            },
        };
    };
    let want = cache.saturating_mul(FILE_PER_CACHE).max(lim.default_bytes);
    let bytes = (want.min(cap.max(lim.default_bytes)) >> 20 << 20).max(1 << 20);
    let (c, w, b) = (format_bytes(cache), format_bytes(want), format_bytes(bytes));
    if bytes >= want {
        FileSizing {
            bytes,
            cache_included: false,
            sentence: format!(
                "the largest cache found holds up to {c}; the test files are {b}, {FILE_PER_CACHE} \
                 times that or more, so the figures are the storage's"
            ),
        }
    } else {
        let why = if lim.space_bytes < lim.time_bytes {
            "the free space"
        } else {
            "the time budget"
        };
        FileSizing {
            bytes,
            cache_included: true,
            sentence: format!(
                "cache included: the largest cache found holds up to {c} and the test files \
                 should be {w}, but {why} allowed {b}; part of the reads are cache hits"
            ),
        }
    }
}

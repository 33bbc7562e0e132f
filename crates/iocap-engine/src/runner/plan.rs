//! Planning a test or a group of concurrent tests: every rule that needs the prepared targets
//! (engine, ranges, O_DIRECT alignment of every size, thread and memory limits, equal windows),
//! then one worker context per thread (per outstanding I/O for psync), each with its own seed and
//! sequential cursor.

use iocap_model::{human_bytes, BsWeight, JobSpec};

use super::{select_engine, EngineKind, RunError};
use crate::offsets::{self, Pattern, SeqCursor, Walk};
use crate::target::{direct_alignment_problem, PreparedTarget};
use iocap_platform::host;

/// Upper bound on the OS threads one test (or group) may start.
const MAX_WORKER_THREADS: usize = 4096;

/// Durations longer than this (about 31 years) are clamped, so instants never overflow.
const MAX_SPAN_NS: u64 = 1 << 60;

/// Seconds to nanoseconds, clamped to `[0, MAX_SPAN_NS]` (NaN becomes 0).
pub(super) fn to_ns(s: f64) -> u64 {
    (s * 1e9).clamp(0.0, MAX_SPAN_NS as f64) as u64
}

/// One workload of a test, resolved against its targets.
pub(super) struct Job<'a> {
    pub spec: &'a JobSpec,
    pub targets: &'a [PreparedTarget],
    pub engine: EngineKind,
    pub engine_warning: Option<String>,
    /// The sizes its I/Os draw from (the mix, or the one block size).
    pub sizes: Vec<BsWeight>,
    pub rate_interval_ns: Option<u64>,
    pub rate_process: crate::pace::Process,
    pub burst_ns: Option<(u64, u64)>,
    /// Its contexts in the group's list.
    pub ctxs: std::ops::Range<usize>,
}

pub(super) struct Context {
    pub job: usize,
    pub target_idx: usize,
    pub depth: u32,
    pub cursor: SeqCursor,
    /// How the sequential stream walks (iocap's, or DiskSpd's `-s`/`-T`).
    pub walk: Walk,
    pub seed: u64,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The I/O rate limit of `spec`; MB/s is turned into I/Os with the mean size of its mix.
pub(super) fn rate_iops(spec: &JobSpec) -> Option<f64> {
    let from_mb = spec.rate_mb_s.map(|mb| mb * 1e6 / spec.mean_bs_bytes());
    match (spec.rate_iops, from_mb) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn check_targets(spec: &JobSpec, targets: &[PreparedTarget]) -> Result<(), RunError> {
    if targets.is_empty() {
        return Err(RunError::Invalid(format!(
            "test {}: no prepared target to run on",
            spec.name
        )));
    }
    for t in targets {
        let shown = t.path.display().to_string();
        if t.range_bytes < spec.bs_bytes {
            return Err(RunError::Invalid(format!(
                "{shown} holds {} B, less than one block of {} B",
                t.range_bytes, spec.bs_bytes
            )));
        }
        if t.direct {
            if let Some(why) = direct_alignment_problem(spec, t.logical_block, &shown) {
                return Err(RunError::Invalid(why));
            }
        }
    }
    Ok(())
}

/// The walk with what DiskSpd's patterns add to it: the base offset, `-rs` (random with a
/// probability, else following by the alignment, starting again at 0), `-p` (one walk per queue
/// slot, by the stride or the block size) and `-i`/`-j`.
fn patterned(spec: &JobSpec, mut walk: Walk, depth: u32) -> Walk {
    walk.base = spec.base_bytes;
    if let Some(random_pct) = spec.random_pct {
        walk.pattern = Pattern::Mixed { random_pct };
        walk.step = Some(spec.align_bytes);
        walk.wrap_to = 0;
    } else if spec.parallel {
        walk.pattern = Pattern::Parallel { slots: depth };
        walk.step = Some(walk.step.unwrap_or(spec.bs_bytes));
    }
    walk.think = spec
        .think
        .map(|t| (t.ios, u64::from(t.think_ms).saturating_mul(1_000_000)));
    walk
}

/// Part `k` of `n` of `total`, the remainder going to the first parts; at least 1.
fn share(total: u32, n: u32, k: u32) -> u32 {
    let n = n.max(1);
    (total / n + u32::from(k < total % n)).max(1)
}

/// Checks every workload and plans the contexts of all of them.
pub(super) fn plan_group<'a>(
    members: &[(&'a JobSpec, &'a [PreparedTarget])],
) -> Result<(Vec<Job<'a>>, Vec<Context>), RunError> {
    let Some(&(first, _)) = members.first() else {
        return Err(RunError::Invalid("no workload to run".into()));
    };
    let mut jobs = Vec::with_capacity(members.len());
    let mut ctxs = Vec::new();
    let mut needed = 0usize;
    for (ji, &(spec, targets)) in members.iter().enumerate() {
        spec.validate()
            .map_err(|e| RunError::Invalid(e.to_string()))?;
        for (what, a, b) in [
            ("warmup", first.warmup_s, spec.warmup_s),
            ("duration", first.duration_s, spec.duration_s),
            ("cooldown", first.cooldown_s, spec.cooldown_s),
        ] {
            if to_ns(a) != to_ns(b) {
                return Err(RunError::Invalid(format!(
                    "workloads that run together share one timeline: {} has a {what} of {a} s \
                     and {} of {b} s; give them the same warmup, duration and cooldown",
                    first.name, spec.name
                )));
            }
        }
        check_targets(spec, targets)?;
        let (engine, engine_warning) = select_engine(spec.engine)?;
        let sizes = offsets::spec_sizes(spec);
        let granule = offsets::granule(&sizes);
        let from = ctxs.len();
        // psync runs one thread per outstanding I/O: count before building any
        let per_thread = |ti: usize| {
            if engine.one_io_per_thread() {
                spec.target_depth(ti) as usize
            } else {
                1
            }
        };
        needed += targets
            .iter()
            .enumerate()
            .map(|(ti, t)| t.threads as usize * per_thread(ti))
            .sum::<usize>();
        for (ti, t) in targets.iter().enumerate() {
            let qd = spec.target_depth(ti);
            // -si: one stream for all the target's threads
            let shared = spec
                .streams
                .filter(|s| s.shared)
                .map(|_| SeqCursor::new(0.into()));
            for th in 0..t.threads {
                let (cursor, walk) = match &spec.streams {
                    Some(s) => {
                        let (walk, start) = Walk::diskspd(s, u64::from(th));
                        let largest = sizes.iter().map(|b| b.bs_bytes).max().unwrap_or(0);
                        if !spec.rw.is_random() && start.saturating_add(largest) > t.range_bytes {
                            return Err(RunError::Invalid(format!(
                                "thread {th} of {} would start at {} (thread stride {}), past \
                                 the end of its {} range",
                                t.path.display(),
                                human_bytes(start),
                                human_bytes(s.thread_stride_bytes),
                                human_bytes(t.range_bytes)
                            )));
                        }
                        let own = || SeqCursor::new(start.into());
                        (shared.clone().unwrap_or_else(own), walk)
                    }
                    None => (
                        offsets::seq_cursor(
                            t.range_bytes,
                            granule,
                            u64::from(th),
                            u64::from(t.threads),
                        ),
                        Walk::default(),
                    ),
                };
                // psync has a depth of one: N outstanding I/Os need N contexts on one stream
                let (n, depth) = if engine.one_io_per_thread() {
                    (qd, 1)
                } else {
                    (1, qd)
                };
                let walk = patterned(spec, walk, depth);
                for k in 0..n {
                    let mut walk = walk;
                    // psync's N contexts of one thread share its burst: each its part of it
                    walk.think = walk.think.map(|(ios, pause)| (share(ios, n, k), pause));
                    let id = (ji as u64) << 52 | (ti as u64) << 40 | u64::from(th) << 20;
                    ctxs.push(Context {
                        job: ji,
                        target_idx: ti,
                        depth,
                        cursor: cursor.clone(),
                        walk,
                        seed: splitmix(spec.seed ^ splitmix(id | u64::from(k))),
                    });
                }
            }
            if ctxs.len() > MAX_WORKER_THREADS {
                break;
            }
        }
        let n = ctxs.len() - from;
        let rate_interval_ns = rate_iops(spec).map(|r| ((n as f64) * 1e9 / r).max(1.0) as u64);
        let burst_ns = spec.burst.and_then(|b| {
            let (on, off) = (to_ns(b.on_s).max(1), to_ns(b.off_s));
            (off > 0).then_some((on, off))
        });
        jobs.push(Job {
            spec,
            targets,
            engine,
            engine_warning,
            sizes,
            rate_interval_ns,
            rate_process: match spec.rate_process {
                iocap_model::RateProcess::Linear => crate::pace::Process::Linear,
                iocap_model::RateProcess::Poisson => crate::pace::Process::Poisson,
            },
            burst_ns,
            ctxs: from..ctxs.len(),
        });
        if ctxs.len() > MAX_WORKER_THREADS {
            return Err(RunError::Invalid(format!(
                "this test needs {needed} worker threads (the psync engine runs one per \
                 outstanding I/O), more than the limit of {MAX_WORKER_THREADS}; lower --qd or \
                 --threads, or use io_uring"
            )));
        }
    }
    let buf_bytes: u64 = ctxs
        .iter()
        .map(|c| u64::from(c.depth) * jobs[c.job].spec.bs_bytes)
        .sum();
    if let Some(avail) = host::mem_available_bytes() {
        if buf_bytes > avail / 2 {
            return Err(RunError::Invalid(format!(
                "the I/O buffers would take {} (queue depth x threads x block size), more than half \
                 of the {} of memory available; lower --qd, --threads or --bs",
                human_bytes(buf_bytes),
                human_bytes(avail)
            )));
        }
    }
    Ok((jobs, ctxs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mb_s_limits_use_the_mean_size_of_a_mix() {
        let spec = JobSpec {
            bs_bytes: 65536,
            bs_split: vec![
                BsWeight {
                    bs_bytes: 8192,
                    weight: 1,
                },
                BsWeight {
                    bs_bytes: 65536,
                    weight: 1,
                },
            ],
            rate_mb_s: Some(36.864),
            ..JobSpec::default()
        };
        // mean 36 KiB: 36.864 MB/s is 1000 I/Os a second
        assert!((rate_iops(&spec).unwrap() - 1000.0).abs() < 1e-6);
    }

    /// psync's contexts of one thread split its burst (`-i`) between them.
    #[test]
    fn a_burst_is_shared_by_the_contexts_of_a_thread() {
        assert_eq!(
            (0..4).map(|k| share(10, 4, k)).collect::<Vec<_>>(),
            [3, 3, 2, 2]
        );
        assert_eq!(share(10, 1, 0), 10);
        assert_eq!(share(2, 4, 3), 1);
    }

    #[test]
    fn spans_never_overflow() {
        assert_eq!(to_ns(f64::INFINITY), MAX_SPAN_NS);
        assert_eq!(to_ns(f64::NAN), 0);
        assert_eq!(to_ns(-1.0), 0);
        assert_eq!(to_ns(0.5), 500_000_000);
    }
}

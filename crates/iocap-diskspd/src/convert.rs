//! From DiskSpd's parameters to an iocap [`JobSpec`]. Every default and every mapping rule is
//! here, and every place where iocap runs something other than DiskSpd would adds a note.
//!
//! The mappings that are not one-to-one (docs/diskspd.md has the full table):
//!
//! - `-F<n>` (n threads, each issuing I/O to every target) becomes n threads per target: each
//!   target sees the same load, from n × targets threads instead of n.
//! - `-si` (a target's threads share one sequential offset) becomes one thread per target with
//!   all of their outstanding I/Os (`-t4 -o2 -si`: one thread, 8 in flight): one strictly
//!   sequential stream with the same queue depth. The wiki's `-T<block> -s<threads × block>`
//!   idiom, threads interleaving blocks to make one stream, is the same pattern and maps alike.
//! - `-g` (per thread, per target) becomes the equivalent total rate, which iocap spreads evenly.
//! - `-O<n>` with `-F` on several targets: DiskSpd sends each of a thread's n I/Os to a target
//!   drawn at random; iocap gives each target its share of the n (`JobSpec::target_qd`), the
//!   same load on average.
//! - `-i<count>` is per target, shared by its threads (DiskSpd divides it), so each thread
//!   pauses `-j` ms after count ÷ threads completions (`JobSpec::think`).

use crate::args::Draft;
use crate::{
    Access, DiskspdError, DiskspdRun, Profile, Throttle, WriteBuffers, DEFAULT_DURATION_S,
    DEFAULT_INTERVAL_MS, DEFAULT_REQUESTS, DEFAULT_WARMUP_S,
};
use iocap_model::{format_bytes, JobSpec, RwMode, SeqStreams, TargetSpec, ThinkTime};

/// Threads and queue depth per target as iocap runs them.
struct Shape {
    threads: u32,
    qd: u32,
    /// `-O` split over several targets: each target's share; empty: `qd` everywhere.
    target_qd: Vec<u32>,
}

pub(crate) fn finish(d: Draft, command_line: String) -> Result<DiskspdRun, DiskspdError> {
    if d.targets.is_empty() {
        return Err(DiskspdError::Usage(
            "DiskSpd needs at least one target after its options: a file, #<disk> or <letter>:"
                .into(),
        ));
    }
    if d.no_affinity && !d.affinity.is_empty() {
        return Err(DiskspdError::Usage(
            "-n (no affinity) and -a (affinity) conflict: give one".into(),
        ));
    }
    let mut notes = Vec::new();
    let access = d.access.unwrap_or(Access::Sequential {
        stride_bytes: d.block_bytes,
        interlocked: false,
    });
    patterns(&d, access)?;
    let shape = shape(&d, access, &mut notes)?;
    let spec = job_spec(&d, access, &shape, &mut notes)?;
    spec.validate()
        .map_err(|e| DiskspdError::Spec(e.to_string()))?;
    behaviour_notes(&d, &mut notes);
    let profile = profile(&d, access);
    Ok(DiskspdRun {
        specs: vec![spec],
        output: d.output,
        latency: d.latency,
        per_interval_std: d.interval_ms.is_some(),
        interval_ms: d.interval_ms.unwrap_or(DEFAULT_INTERVAL_MS),
        create_bytes: d.create_bytes,
        seed_from_clock: d.seed_from_clock,
        command_line,
        profile,
        notes,
    })
}

/// DiskSpd's threads per target: `-t`, or every thread of a `-F` pool.
fn diskspd_threads(d: &Draft) -> u32 {
    d.total_threads.or(d.threads).unwrap_or(1)
}

/// Outstanding I/Os per thread per target: `-o`, or `-O` for a `-F` pool; on several targets
/// the pool's I/Os are split over them (each target's share, in target order, the remainder to
/// the first ones).
fn requests(d: &Draft, notes: &mut Vec<String>) -> Result<(u32, Vec<u32>), DiskspdError> {
    let targets = d.targets.len() as u32;
    match (d.pool_requests, d.total_threads) {
        (None, _) => Ok((d.requests.unwrap_or(DEFAULT_REQUESTS), vec![])),
        (Some(_), None) => Err(DiskspdError::Usage(
            "-O sets the outstanding I/Os of a -F thread pool; without -F use -o".into(),
        )),
        (Some(o), Some(_)) if targets > 1 && o < targets => Err(DiskspdError::Usage(format!(
            "-O{o} with {targets} targets: DiskSpd sends each of a thread's {o} I/Os to a \
             target drawn at random, so a target may have none in flight; iocap's threads each \
             keep at least one I/O on their own target, so it needs -O{targets} or more here"
        ))),
        (Some(o), Some(_)) if targets > 1 => {
            let split: Vec<u32> = (0..targets)
                .map(|i| o / targets + u32::from(i < o % targets))
                .collect();
            let shares: Vec<String> = split.iter().map(u32::to_string).collect();
            notes.push(format!(
                "-O{o} with {targets} targets: each thread keeps its {o} I/Os split {} over \
                 the targets, where DiskSpd sends each I/O to a target drawn at random (the \
                 same load on average)",
                shares.join("/")
            ));
            Ok((split[0], split))
        }
        (Some(o), Some(_)) => Ok((o, vec![])),
    }
}

/// DiskSpd's own refusals of combinations its patterns cannot take (its messages' facts), and
/// the base offset against the end of the range.
fn patterns(d: &Draft, access: Access) -> Result<(), DiskspdError> {
    let usage = |m: &str| Err(DiskspdError::Usage(m.into()));
    let random = matches!(access, Access::Random { .. });
    let interlocked = matches!(
        access,
        Access::Sequential {
            interlocked: true,
            ..
        }
    );
    if d.burst_ios.is_some() != d.think_ms.is_some() {
        return usage("-i (I/Os per burst) and -j (think time) go together: give both");
    }
    if d.parallel && random {
        return usage(
            "-p (parallel I/O at one offset) conflicts with -r: it walks a sequential stream",
        );
    }
    if d.parallel && interlocked {
        return usage("-p (parallel I/O at one offset) conflicts with -si");
    }
    if d.pool_requests.is_some() && d.total_threads.is_some() {
        if d.parallel {
            return usage("-p (parallel I/O at one offset) cannot be used with -O, as in DiskSpd");
        }
        if d.think_ms.is_some() {
            return usage("-j (think time) cannot be used with -O, as in DiskSpd");
        }
    }
    let base = d.base_bytes.unwrap_or(0);
    if base > 0 && d.max_size_bytes > 0 && d.max_size_bytes <= base {
        return usage(
            "the end of the range (-f) must be past the base offset (-B): -f is an offset from \
             the start of the target, not a length",
        );
    }
    Ok(())
}

/// Threads and queue depth per target, with the notes their mapping needs.
fn shape(d: &Draft, access: Access, notes: &mut Vec<String>) -> Result<Shape, DiskspdError> {
    let threads = diskspd_threads(d);
    let (qd, target_qd) = requests(d, notes)?;
    if let (Some(n), true) = (d.total_threads, d.targets.len() > 1) {
        notes.push(format!(
            "-F{n} with {} targets: iocap runs {n} threads on each target ({} in all), where \
             DiskSpd's {n} threads each issue I/O to every target",
            d.targets.len(),
            n as usize * d.targets.len()
        ));
    }
    let Access::Sequential { interlocked, .. } = access else {
        if d.thread_stride_bytes > 0 {
            notes.push("-T has no effect on iocap's random I/O".into());
        }
        return Ok(Shape {
            threads,
            qd,
            target_qd,
        });
    };
    // each thread walks its own stream from k × -T by the stride, or all share one (-si): the
    // engine lays them out as DiskSpd does (`SeqStreams`), so nothing is folded or spread
    if interlocked && d.thread_stride_bytes > 0 {
        return Err(DiskspdError::Usage("-si conflicts with -T".into()));
    }
    Ok(Shape {
        threads,
        qd,
        target_qd,
    })
}

fn job_spec(
    d: &Draft,
    access: Access,
    shape: &Shape,
    notes: &mut Vec<String>,
) -> Result<JobSpec, DiskspdError> {
    let random = matches!(access, Access::Random { .. });
    let rw = match (random, d.write_pct) {
        (true, 0) => RwMode::RandRead,
        (true, 100) => RwMode::RandWrite,
        (true, _) => RwMode::RandRw,
        (false, 0) => RwMode::Read,
        (false, 100) => RwMode::Write,
        (false, _) => RwMode::Rw,
    };
    let align_bytes = match access {
        Access::Random { align_bytes } => align_bytes,
        Access::Sequential { .. } => d.block_bytes,
    };
    let mask = d.affinity.iter().fold(0u64, |m, &cpu| m | 1 << cpu);
    // -f (and -B<base>:<length>) give the end offset; iocap's target size is the length of
    // the range from the base
    let base = d.base_bytes.unwrap_or(0);
    let end = (d.max_size_bytes > 0).then_some(d.max_size_bytes);
    let range = end.map(|e| e - base);
    if let (Some(end), Some(create)) = (end, d.create_bytes) {
        if end != create {
            notes.push(format!(
                "a missing target is created at the -f size ({}), not the -c size ({})",
                format_bytes(end),
                format_bytes(create)
            ));
        }
    }
    let targets = d
        .targets
        .iter()
        .map(|path| TargetSpec {
            path: path.clone(),
            size_bytes: range,
            threads: None,
            cpu_mask: (mask != 0).then_some(mask),
        })
        .collect();
    let pairs = f64::from(diskspd_threads(d)) * d.targets.len() as f64;
    let defaults = JobSpec::default();
    Ok(JobSpec {
        name: name(d, random),
        targets,
        rw,
        write_pct: d.write_pct,
        bs_bytes: d.block_bytes,
        qd: shape.qd,
        threads: shape.threads,
        size_bytes: d.create_bytes.unwrap_or(defaults.size_bytes),
        duration_s: f64::from(d.duration_s.unwrap_or(DEFAULT_DURATION_S)),
        warmup_s: f64::from(d.warmup_s.unwrap_or(DEFAULT_WARMUP_S)),
        cooldown_s: f64::from(d.cooldown_s.unwrap_or(0)),
        seed: u64::from(d.seed.unwrap_or(0)),
        align_bytes,
        rate_iops: match d.throttle {
            Some(Throttle::Iops(n)) => Some(n as f64 * pairs),
            _ => None,
        },
        rate_mb_s: match d.throttle {
            Some(Throttle::BytesPerMs(b)) => Some(b as f64 * 1000.0 * pairs / 1e6),
            _ => None,
        },
        direct: d.disable_os_cache.unwrap_or(false),
        write_through: d.write_through.unwrap_or(false),
        compressible_pct: if d.write_buffers == WriteBuffers::Zero {
            100
        } else {
            0
        },
        engine: d.engine.unwrap_or_default(),
        allow_overwrite: d.allow_overwrite,
        streams: match access {
            Access::Sequential {
                stride_bytes,
                interlocked,
            } => Some(SeqStreams {
                stride_bytes,
                thread_stride_bytes: d.thread_stride_bytes,
                shared: interlocked,
            }),
            Access::Random { .. } => None,
        },
        interval_ms: d.interval_ms,
        base_bytes: base,
        random_pct: d.random_pct.filter(|&p| p < 100),
        parallel: d.parallel,
        think: think(d, notes),
        target_qd: shape.target_qd.clone(),
        ..defaults
    })
}

/// `-i`/`-j` per thread: DiskSpd divides the burst between a target's threads (a share of 0
/// pauses after every completion, as a share of 1 does). A throttle (`-g`) turns it off in
/// DiskSpd, so it is dropped with a note.
fn think(d: &Draft, notes: &mut Vec<String>) -> Option<ThinkTime> {
    let (ios, think_ms) = (d.burst_ios?, d.think_ms?);
    if d.throttle.is_some() {
        notes.push(format!(
            "-i{ios} -j{think_ms}: DiskSpd throttles by -g instead of pausing when both are \
             given, and so does iocap"
        ));
        return None;
    }
    Some(ThinkTime {
        ios: (ios / diskspd_threads(d)).max(1),
        think_ms,
    })
}

/// The test's name in iocap's history: DiskSpd's flags that shape the workload.
fn name(d: &Draft, random: bool) -> String {
    let threads = match d.total_threads {
        Some(n) => format!("-F{n}"),
        None => format!("-t{}", d.threads.unwrap_or(1)),
    };
    let access = match (random, d.random_pct.filter(|&p| p < 100), d.parallel) {
        (true, Some(pct), _) => format!("-rs{pct}"),
        (true, None, _) => "-r".into(),
        (false, _, true) => "-s -p".into(),
        (false, _, false) => "-s".into(),
    };
    format!(
        "diskspd -b{} -o{} {threads} {access} -w{}",
        format_bytes(d.block_bytes),
        d.pool_requests.or(d.requests).unwrap_or(DEFAULT_REQUESTS),
        d.write_pct
    )
}

/// Notes on options whose effect iocap does not reproduce.
fn behaviour_notes(d: &Draft, notes: &mut Vec<String>) {
    if !d.affinity.is_empty() {
        let list: Vec<String> = d.affinity.iter().map(u32::to_string).collect();
        notes.push(format!(
            "-a: every thread may run on any of CPUs {}, where DiskSpd places threads on them \
             round-robin, one CPU each",
            list.join(",")
        ));
    }
    if d.write_pct > 0 {
        match d.write_buffers {
            WriteBuffers::Pattern => notes.push(
                "writes carry iocap's random, incompressible data, not DiskSpd's repeating \
                 0-255 byte pattern (which an array may compress)"
                    .into(),
            ),
            WriteBuffers::Zero => notes
                .push("-Z: writes are zeros except for iocap's stamp in each 4 KiB block".into()),
            WriteBuffers::RandomPerIo => notes.push(
                "-Zr: writes are random and stamped per write, without the CPU cost of \
                 DiskSpd's fresh random buffer per I/O"
                    .into(),
            ),
            WriteBuffers::Random { bytes } => notes.push(format!(
                "-Z{}: writes are random from iocap's own buffers; the buffer size is not used",
                format_bytes(bytes)
            )),
        }
    }
    if let Some(e) = d.linux_engine {
        let theirs = if e == 'k' { "libaio" } else { "POSIX aio" };
        notes.push(format!(
            "-x{e}: DiskSpd for Linux's {theirs} engine; iocap runs its own asynchronous \
             engine (io_uring on Linux, IOCP on Windows) with the same requests in flight"
        ));
    }
    let inert: Vec<&str> = [
        (d.completion_routines, "-x"),
        (d.large_pages, "-l"),
        (d.verbose, "-v"),
        (d.verbose_stats, "-vs"),
        (d.progress > 0, "-P"),
        (d.hints != crate::Hints::default(), "-f<rst>"),
    ]
    .into_iter()
    .filter_map(|(on, flag)| on.then_some(flag))
    .collect();
    if !inert.is_empty() {
        notes.push(format!(
            "{}: accepted, with no effect in iocap",
            inert.join(", ")
        ));
    }
}

fn profile(d: &Draft, access: Access) -> Profile {
    let mut affinity = d.affinity.clone();
    affinity.sort_unstable();
    affinity.dedup();
    Profile {
        block_bytes: d.block_bytes,
        duration_s: d.duration_s.unwrap_or(DEFAULT_DURATION_S),
        warmup_s: d.warmup_s.unwrap_or(DEFAULT_WARMUP_S),
        cooldown_s: d.cooldown_s.unwrap_or(0),
        threads_per_target: d.total_threads.is_none().then(|| d.threads.unwrap_or(1)),
        total_threads: d.total_threads,
        requests: d.requests.unwrap_or(DEFAULT_REQUESTS),
        pool_requests: d.pool_requests,
        write_pct: d.write_pct,
        access,
        thread_stride_bytes: d.thread_stride_bytes,
        max_size_bytes: d.max_size_bytes,
        disable_os_cache: d.disable_os_cache.unwrap_or(false),
        write_through: d.write_through.unwrap_or(false),
        throttle: d.throttle,
        seed: d.seed.unwrap_or(0),
        write_buffers: d.write_buffers,
        affinity,
        no_affinity: d.no_affinity,
        hints: d.hints,
        completion_routines: d.completion_routines,
        large_pages: d.large_pages,
        verbose: d.verbose,
        progress: d.progress,
        targets: d.targets.clone(),
        base_bytes: d.base_bytes.unwrap_or(0),
        random_pct: d.random_pct,
        parallel_async: d.parallel,
        burst_ios: d.burst_ios,
        think_ms: d.think_ms,
        verbose_stats: d.verbose_stats,
    }
}

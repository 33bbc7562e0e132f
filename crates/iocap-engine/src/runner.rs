//! Runs one test: plans the worker contexts, starts them on a common timeline, samples them once
//! a second, and merges their measurements into the [`TestResult`].
//!
//! The calling thread is the monitor: it sleeps on absolute deadlines (the start and end of the
//! measured window and every second in between), reads the workers' live counters, takes the
//! process CPU time at the window's edges and reports progress to an observer. Workers never
//! wait for it.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Barrier, OnceLock};

use iocap_model::{
    human_bytes, CpuStats, IoFault, JobSpec, SecondSample, TargetResult, TestResult,
};
use thiserror::Error;

use crate::backend::psync::Psync;
use crate::backend::uring::{self, Uring};
use crate::buffers::SlotBuffers;
use crate::clock::{self, now_ns};
use crate::host;
use crate::offsets::{OffsetGen, SeqCursor};
use crate::stats::{LiveCounters, LiveSnapshot, WorkerStats};
use crate::target::PreparedTarget;
use crate::worker::{self, Timeline, WorkerConfig};

/// Upper bound on the OS threads one test may start.
const MAX_WORKER_THREADS: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    IoUring,
    Psync,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Psync => "psync",
        }
    }
}

#[derive(Debug, Error)]
pub enum RunError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Setup(String),
}

/// Picks the engine for `choice`; `auto` falls back to psync with a warning.
pub fn select_engine(
    choice: iocap_model::EngineChoice,
) -> Result<(EngineKind, Option<String>), RunError> {
    use iocap_model::EngineChoice::*;
    match choice {
        Psync => Ok((EngineKind::Psync, None)),
        IoUring => uring::probe()
            .map(|_| (EngineKind::IoUring, None))
            .map_err(|e| RunError::Setup(format!("io_uring is not available here: {e}"))),
        Auto => Ok(match uring::probe() {
            Ok(()) => (EngineKind::IoUring, None),
            Err(e) => (
                EngineKind::Psync,
                Some(format!(
                    "io_uring is not available ({e}); ran the psync engine instead"
                )),
            ),
        }),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Warmup,
    Measure,
    Cooldown,
}

/// What the progress line shows, about once a second.
#[derive(Debug, Clone)]
pub struct LiveSample {
    pub phase: Phase,
    pub elapsed_s: f64,
    pub total_s: f64,
    pub iops: f64,
    pub mb_s: f64,
    pub lat_us_mean: Option<f64>,
    pub lat_us_p99: Option<f64>,
}

pub trait RunObserver {
    fn tick(&mut self, _s: &LiveSample) {}
}

/// An observer that ignores progress.
pub struct Quiet;
impl RunObserver for Quiet {}

/// The result plus the merged histograms, for views that need the full distribution.
pub struct TestOutcome {
    pub result: TestResult,
    pub stats: WorkerStats,
    pub per_target: Vec<WorkerStats>,
}

struct Context {
    target_idx: usize,
    stream: u64,
    streams: u64,
    depth: u32,
    cursor: SeqCursor,
    seed: u64,
}

struct WorkerReport {
    target_idx: usize,
    stats: WorkerStats,
    features: Vec<String>,
    notes: Vec<String>,
    error: Option<String>,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn plan(spec: &JobSpec, targets: &[PreparedTarget], engine: EngineKind) -> Vec<Context> {
    let mut ctxs = Vec::new();
    for (ti, t) in targets.iter().enumerate() {
        for th in 0..t.threads {
            let cursor = SeqCursor::default();
            // psync has a depth of one: N outstanding I/Os need N contexts on one stream
            let (n, depth) = match engine {
                EngineKind::IoUring => (1, spec.qd),
                EngineKind::Psync => (spec.qd, 1),
            };
            for k in 0..n {
                ctxs.push(Context {
                    target_idx: ti,
                    stream: u64::from(th),
                    streams: u64::from(t.threads),
                    depth,
                    cursor: cursor.clone(),
                    seed: splitmix(
                        spec.seed
                            ^ splitmix((ti as u64) << 40 | u64::from(th) << 20 | u64::from(k)),
                    ),
                });
            }
        }
    }
    ctxs
}

fn set_affinity(mask: u64) {
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET writes inside it; the call affects only this
    // thread. Failure leaves the thread unpinned, which is reported by nothing worse than noise.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in 0..64 {
            if mask & (1 << cpu) != 0 {
                libc::CPU_SET(cpu, &mut set);
            }
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn sample(
    prev: &LiveSnapshot,
    cur: &LiveSnapshot,
    secs: f64,
) -> (f64, f64, Option<f64>, Option<f64>) {
    let ios = cur.ios - prev.ios;
    let bytes = cur.bytes - prev.bytes;
    let mean = (ios > 0).then(|| (cur.lat_sum_ns - prev.lat_sum_ns) as f64 / ios as f64 / 1e3);
    let p99 = cur.quantile_since(prev, 0.99).map(|ns| ns / 1e3);
    (ios as f64 / secs, bytes as f64 / secs / 1e6, mean, p99)
}

/// Runs `spec` on the prepared `targets`.
pub fn run_test(
    spec: &JobSpec,
    targets: &[PreparedTarget],
    interrupt: &'static AtomicBool,
    obs: &mut dyn RunObserver,
) -> Result<TestOutcome, RunError> {
    spec.validate()
        .map_err(|e| RunError::Invalid(e.to_string()))?;
    let (engine, engine_warning) = select_engine(spec.engine)?;
    let ctxs = plan(spec, targets, engine);
    if ctxs.len() > MAX_WORKER_THREADS {
        return Err(RunError::Invalid(format!(
            "this test needs {} worker threads (the psync engine runs one per outstanding I/O), \
             more than the limit of {MAX_WORKER_THREADS}; lower --qd or --threads, or use io_uring",
            ctxs.len()
        )));
    }
    let buf_bytes: u64 = ctxs
        .iter()
        .map(|c| u64::from(c.depth) * spec.bs_bytes)
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
    let rate_interval_ns = spec
        .effective_rate_iops()
        .map(|r| ((ctxs.len() as f64) * 1e9 / r).max(1.0) as u64);

    let tl = Timeline::new(interrupt);
    let n = ctxs.len();
    let ready = Barrier::new(n + 1);
    let go = Barrier::new(n + 1);
    let setup_failed: OnceLock<String> = OnceLock::new();
    let finished = AtomicUsize::new(0);
    let live: Vec<LiveCounters> = (0..n).map(|_| LiveCounters::default()).collect();

    let mut per_second = Vec::new();
    let mut cpu = (0.0, 0.0);
    let mut reports: Vec<WorkerReport> = Vec::with_capacity(n);

    std::thread::scope(|scope| {
        let handles: Vec<_> = ctxs
            .iter()
            .zip(&live)
            .map(|(c, live)| {
                let t = &targets[c.target_idx];
                let (tl, ready, go, setup_failed, finished) =
                    (&tl, &ready, &go, &setup_failed, &finished);
                scope.spawn(move || {
                    let rep = run_context(
                        spec,
                        t,
                        c,
                        engine,
                        rate_interval_ns,
                        tl,
                        live,
                        ready,
                        go,
                        setup_failed,
                    );
                    finished.fetch_add(1, Relaxed);
                    rep
                })
            })
            .collect();

        ready.wait();
        if setup_failed.get().is_some() {
            tl.halt.store(true, Relaxed);
        }
        let to_ns = |s: f64| (s * 1e9) as u64;
        let t0 = now_ns() + 1_000_000;
        let measure_start = t0 + to_ns(spec.warmup_s);
        let measure_end = measure_start + to_ns(spec.duration_s);
        let issue_end = measure_end + to_ns(spec.cooldown_s);
        tl.start_ns.store(t0, Relaxed);
        tl.measure_start_ns.store(measure_start, Relaxed);
        tl.window_end_ns.store(measure_end, Relaxed);
        tl.issue_end_ns.store(issue_end, Relaxed);
        go.wait();

        monitor(
            &tl,
            &live,
            &finished,
            n,
            t0,
            measure_start,
            issue_end,
            obs,
            &mut per_second,
            &mut cpu,
        );
        for h in handles {
            reports.push(h.join().unwrap_or_else(|_| WorkerReport {
                target_idx: 0,
                stats: WorkerStats::default(),
                features: vec![],
                notes: vec![],
                error: Some("a worker thread panicked".into()),
            }));
        }
    });

    if let Some(e) = setup_failed.get() {
        return Err(RunError::Setup(e.clone()));
    }
    if let Some(e) = reports.iter().find_map(|r| r.error.clone()) {
        return Err(RunError::Setup(e));
    }
    Ok(assemble(
        spec,
        targets,
        engine,
        engine_warning,
        &tl,
        reports,
        per_second,
        cpu,
    ))
}

#[allow(clippy::too_many_arguments)]
fn run_context(
    spec: &JobSpec,
    t: &PreparedTarget,
    c: &Context,
    engine: EngineKind,
    rate_interval_ns: Option<u64>,
    tl: &Timeline,
    live: &LiveCounters,
    ready: &Barrier,
    go: &Barrier,
    setup_failed: &OnceLock<String>,
) -> WorkerReport {
    clock::tighten_timer_slack();
    if let Some(mask) = t.cpu_mask {
        set_affinity(mask);
    }
    let mut rep = WorkerReport {
        target_idx: c.target_idx,
        stats: WorkerStats::default(),
        features: vec![],
        notes: vec![],
        error: None,
    };
    let cfg = WorkerConfig {
        target_idx: c.target_idx,
        depth: c.depth,
        bs: spec.bs_bytes as u32,
        fsync_every: spec.fsync_every,
        rate_interval_ns,
        write_seed: c.seed,
    };
    let mut gen = OffsetGen::new(
        spec.rw.is_random(),
        t.range_bytes,
        spec.bs_bytes,
        spec.align_bytes,
        spec.write_pct,
        c.seed,
        c.stream,
        c.streams,
        c.cursor.clone(),
    );
    let fd = t.file.as_raw_fd();
    let mut bufs = match SlotBuffers::new(c.depth as usize, spec.bs_bytes as usize, c.seed) {
        Ok(b) => b,
        Err(e) => {
            let _ = setup_failed.set(format!("cannot allocate I/O buffers: {e}"));
            ready.wait();
            go.wait();
            return rep;
        }
    };
    let result = match engine {
        EngineKind::Psync => {
            ready.wait();
            go.wait();
            if tl.halt.load(Relaxed) {
                return rep;
            }
            let mut b = Psync::new(fd);
            worker::run(&cfg, &mut b, &mut bufs, &mut gen, tl, live, &mut rep.stats)
        }
        EngineKind::IoUring => {
            let mut b = match Uring::new(fd, c.depth, &bufs, true) {
                Ok(b) => b,
                Err(e) => {
                    let _ = setup_failed.set(format!("cannot set up an io_uring ring: {e}"));
                    ready.wait();
                    go.wait();
                    return rep;
                }
            };
            rep.features = std::mem::take(&mut b.features);
            rep.notes = std::mem::take(&mut b.notes);
            ready.wait();
            go.wait();
            if tl.halt.load(Relaxed) {
                return rep;
            }
            worker::run(&cfg, &mut b, &mut bufs, &mut gen, tl, live, &mut rep.stats)
        }
    };
    if let Err(e) = result {
        // I/Os may still be in flight: never free memory the kernel may write to.
        std::mem::forget(bufs);
        tl.halt.store(true, Relaxed);
        tl.cut(now_ns());
        rep.error = Some(format!("the {} engine failed: {e}", engine.name()));
    }
    rep
}

#[allow(clippy::too_many_arguments)]
fn monitor(
    tl: &Timeline,
    live: &[LiveCounters],
    finished: &AtomicUsize,
    n: usize,
    t0: u64,
    measure_start: u64,
    issue_end: u64,
    obs: &mut dyn RunObserver,
    per_second: &mut Vec<SecondSample>,
    cpu: &mut (f64, f64),
) {
    let snap = || {
        let mut s = LiveSnapshot::default();
        for l in live {
            l.accumulate(&mut s);
        }
        s
    };
    let total_s = (issue_end - t0) as f64 / 1e9;
    let mut prev = snap();
    let mut prev_t = t0;
    let mut window_prev: Option<(LiveSnapshot, u64)> = None;
    let mut cpu_start = None;
    let mut window_closed = false;
    let mut next_tick = t0 + 1_000_000_000;
    while finished.load(Relaxed) < n {
        let window_end = tl.window_end_ns.load(Relaxed);
        let mut wake = next_tick.min(now_ns() + 100_000_000);
        if cpu_start.is_none() {
            wake = wake.min(measure_start);
        }
        if !window_closed {
            wake = wake.min(window_end);
        }
        clock::sleep_until(wake);
        let now = now_ns();
        if tl.interrupt.load(Relaxed) {
            tl.cut(now);
        }
        let window_end = tl.window_end_ns.load(Relaxed);
        if cpu_start.is_none() && now >= measure_start && now < window_end {
            cpu_start = Some(host::process_cpu_s());
            window_prev = Some((snap(), measure_start));
            next_tick = measure_start + 1_000_000_000;
        }
        if !window_closed && now >= window_end {
            window_closed = true;
            if let Some((u0, s0)) = cpu_start {
                let (u1, s1) = host::process_cpu_s();
                *cpu = (u1 - u0, s1 - s0);
            }
            if let Some((p, pt)) = window_prev.take() {
                let end = window_end.max(pt);
                let secs = (end - pt) as f64 / 1e9;
                if secs >= 0.1 {
                    let cur = snap();
                    let (iops, mb_s, mean, p99) = sample(&p, &cur, secs);
                    per_second.push(SecondSample {
                        t_s: (end - measure_start) as f64 / 1e9,
                        iops,
                        mb_s,
                        lat_us_mean: mean,
                        lat_us_p99: p99,
                    });
                }
            }
        }
        if now >= next_tick {
            let cur = snap();
            if let Some((p, pt)) = window_prev.as_mut() {
                if now < window_end {
                    let (iops, mb_s, mean, p99) = sample(p, &cur, (next_tick - *pt) as f64 / 1e9);
                    per_second.push(SecondSample {
                        t_s: (next_tick - measure_start) as f64 / 1e9,
                        iops,
                        mb_s,
                        lat_us_mean: mean,
                        lat_us_p99: p99,
                    });
                    *p = cur.clone();
                    *pt = next_tick;
                }
            }
            let (iops, mb_s, mean, p99) = sample(&prev, &cur, (now - prev_t) as f64 / 1e9);
            let phase = if now < measure_start {
                Phase::Warmup
            } else if now < tl.window_end_ns.load(Relaxed) {
                Phase::Measure
            } else {
                Phase::Cooldown
            };
            if now < issue_end {
                obs.tick(&LiveSample {
                    phase,
                    elapsed_s: (now - t0) as f64 / 1e9,
                    total_s,
                    iops,
                    mb_s,
                    lat_us_mean: mean,
                    lat_us_p99: p99,
                });
            }
            prev = cur;
            prev_t = now;
            while next_tick <= now {
                next_tick += 1_000_000_000;
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    spec: &JobSpec,
    targets: &[PreparedTarget],
    engine: EngineKind,
    engine_warning: Option<String>,
    tl: &Timeline,
    reports: Vec<WorkerReport>,
    per_second: Vec<SecondSample>,
    cpu: (f64, f64),
) -> TestOutcome {
    let measure_start = tl.measure_start_ns.load(Relaxed);
    let window_end = tl.window_end_ns.load(Relaxed);
    let duration_s = window_end.saturating_sub(measure_start) as f64 / 1e9;
    let mut per_target: Vec<WorkerStats> = targets.iter().map(|_| WorkerStats::default()).collect();
    let mut all = WorkerStats::default();
    let mut features: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = targets.iter().flat_map(|t| t.warnings.clone()).collect();
    warnings.extend(engine_warning);
    for r in &reports {
        per_target[r.target_idx].merge(&r.stats);
        all.merge(&r.stats);
        for f in &r.features {
            if !features.contains(f) {
                features.push(f.clone());
            }
        }
        for n in &r.notes {
            if !warnings.contains(n) {
                warnings.push(n.clone());
            }
        }
    }
    let total = all.total();
    let interrupted = tl.interrupt.load(Relaxed);
    if interrupted {
        warnings.push(format!(
            "interrupted: the figures cover the {duration_s:.1} s measured before Ctrl-C"
        ));
    }
    if duration_s <= 0.0 {
        warnings.push("nothing was measured: the test stopped before the warmup ended".into());
    }
    let error = tl.fault.get().map(|f| {
        let t = &targets[f.target_idx];
        let message = if f.errno != 0 {
            std::io::Error::from_raw_os_error(f.errno).to_string()
        } else {
            format!(
                "short {}: {} of {} bytes",
                f.op.name(),
                f.transferred,
                f.len
            )
        };
        IoFault {
            op: f.op.name().to_string(),
            path: t.path.display().to_string(),
            offset_bytes: f.offset,
            len_bytes: f.len,
            errno: f.errno,
            message,
        }
    });
    if let Some(e) = &error {
        warnings.push(format!(
            "stopped by an I/O error: {e}; the figures cover the {duration_s:.1} s before it"
        ));
    }
    let ios = total.ios;
    let result = TestResult {
        name: spec.name.clone(),
        role: None,
        group: None,
        spec: spec.clone(),
        engine: engine.name().to_string(),
        engine_features: features,
        direct: targets.iter().all(|t| t.direct),
        duration_s,
        total: total.to_op_stats(duration_s),
        read: all.read.to_op_stats(duration_s),
        write: all.write.to_op_stats(duration_s),
        sync: all.sync.to_op_stats(duration_s),
        cpu: CpuStats {
            user_s: cpu.0,
            sys_s: cpu.1,
            us_per_io: if ios > 0 {
                (cpu.0 + cpu.1) * 1e6 / ios as f64
            } else {
                0.0
            },
        },
        qd_mean: if duration_s > 0.0 {
            all.inflight_ns as f64 / (duration_s * 1e9)
        } else {
            0.0
        },
        targets: targets
            .iter()
            .zip(&per_target)
            .map(|(t, s)| {
                let (device, fs_type) = crate::devinfo::device_and_fs(&t.file);
                TargetResult {
                    path: t.path.display().to_string(),
                    size_bytes: t.range_bytes,
                    kind: t.kind.name().to_string(),
                    device,
                    fs_type,
                    direct: t.direct,
                    logical_block_bytes: t.logical_block,
                    created: t.created,
                    threads: t.threads,
                    total: s.total().to_op_stats(duration_s),
                    read: s.read.to_op_stats(duration_s),
                    write: s.write.to_op_stats(duration_s),
                }
            })
            .collect(),
        per_second,
        warnings,
        interrupted,
        error,
    };
    TestOutcome {
        result,
        stats: all,
        per_target,
    }
}

//! Runs one test, or several workloads at once as one test: plans the worker contexts
//! (`plan`), starts them on a common timeline, samples them once a second (`monitor`) and
//! merges their measurements into one [`TestResult`] per workload (`assemble`).
//!
//! A single test is the one-workload case of a group: [`run_test`] calls [`run_group`].

mod assemble;
mod monitor;
mod plan;
mod series;
pub mod spread;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Barrier, OnceLock};

use iocap_model::{JobSpec, TestResult};
use thiserror::Error;

use crate::backend::IoQueue;
use crate::backend::{self, Backend, Drive, EngineKind, Handle, Opened, Options, Registration};
use crate::buffers::SlotBuffers;
use crate::live::LiveCounters;
use crate::offsets::OffsetGen;
use crate::stats::WorkerStats;
use crate::target::PreparedTarget;
use crate::worker::{self, Timeline, WorkerConfig};
use iocap_platform::clock::{self, now_ns};
use plan::{to_ns, Context, Job};

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
    let (kind, fallback) = EngineKind::resolve(choice)
        .map_err(|e| RunError::Setup(format!("io_uring is not available here: {e}")))?;
    let warning =
        fallback.map(|e| format!("io_uring is not available ({e}); ran the psync engine instead"));
    Ok((kind, warning))
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
    /// Once, when every worker is set up and just before the clock of the test starts: the
    /// warm-up, the measured window and the cool-down are timed from the moment this returns.
    /// Called on the calling thread, also when a worker's set-up failed.
    fn start(&mut self) {}
    /// About once a second, for a progress line.
    fn tick(&mut self, _s: &LiveSample) {}
    /// An edge of the measured window: when it opens (`t_s` = 0), at the end of each
    /// per-second interval of the result's `per_second` series (`t_s` = that sample's `t_s`) and
    /// when it closes. Called on the monitor thread right after iocap's own counters were read,
    /// so an observer sampling the OS's counters here gets the same intervals. Never called on
    /// a worker thread; a slow observer delays only the progress line.
    fn window_edge(&mut self, _t_s: f64) {}
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

struct WorkerReport {
    job: usize,
    target_idx: usize,
    stats: WorkerStats,
    features: Vec<iocap_model::EngineFeature>,
    notes: Vec<String>,
    error: Option<String>,
}

#[cfg(windows)]
fn set_affinity(mask: u64) {
    use windows_sys::Win32::System::Threading::{GetCurrentThread, SetThreadAffinityMask};
    // SAFETY: the pseudo-handle of the calling thread; a mask of CPUs in its group. Failure
    // leaves the thread unpinned.
    unsafe { SetThreadAffinityMask(GetCurrentThread(), mask as usize) };
}

#[cfg(target_os = "linux")]
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

/// Runs `spec` on the prepared `targets`.
pub fn run_test(
    spec: &JobSpec,
    targets: &[PreparedTarget],
    interrupt: &'static AtomicBool,
    obs: &mut dyn RunObserver,
) -> Result<TestOutcome, RunError> {
    let mut outcomes = run_group(&[(spec, targets)], interrupt, obs)?;
    Ok(outcomes.remove(0))
}

/// Runs several workloads at the same time, each on its own prepared targets, as one test
/// (e.g. OLTP on the data file while the log is written), and returns one outcome per workload,
/// in the order given.
///
/// - One timeline: every worker of every workload starts at the same instant, and all share
///   one warmup, measured window and cooldown. The workloads must therefore have the same
///   `warmup_s`, `duration_s` and `cooldown_s` (an [`RunError::Invalid`] says which differ).
/// - Each outcome has its own figures, targets and per-second series; bursts of different
///   workloads are all timed from the common start.
/// - CPU figures are the whole process's over the shared window and are the same in every
///   outcome; `cpu.us_per_io` divides them by the I/Os of the whole group.
/// - The observer sees the sum of all workloads.
/// - An I/O fault in any workload (or Ctrl-C) stops all of them; every outcome then carries the
///   fault in `error`, and a warning says which workload it came from.
/// - `role` and `group` of the results are left unset for the caller to fill in.
pub fn run_group(
    members: &[(&JobSpec, &[PreparedTarget])],
    interrupt: &'static AtomicBool,
    obs: &mut dyn RunObserver,
) -> Result<Vec<TestOutcome>, RunError> {
    let (jobs, ctxs) = plan::plan_group(members)?;
    let spec = jobs[0].spec;

    let tl = Timeline::new(interrupt);
    let n = ctxs.len();
    let ready = Barrier::new(n + 1);
    let go = Barrier::new(n + 1);
    let setup_failed: OnceLock<String> = OnceLock::new();
    let finished = AtomicUsize::new(0);
    let live: Vec<LiveCounters> = (0..n).map(|_| LiveCounters::default()).collect();

    let mut reports: Vec<WorkerReport> = Vec::with_capacity(n);
    let mut monitored = None;

    std::thread::scope(|scope| {
        let handles: Vec<_> = ctxs
            .iter()
            .zip(&live)
            .map(|(c, live)| {
                let job = &jobs[c.job];
                let (tl, ready, go, setup_failed, finished) =
                    (&tl, &ready, &go, &setup_failed, &finished);
                scope.spawn(move || {
                    let rep = run_context(job, c, tl, live, ready, go, setup_failed);
                    finished.fetch_add(1, Relaxed);
                    rep
                })
            })
            .collect();

        ready.wait();
        if setup_failed.get().is_some() {
            tl.halt.store(true, Relaxed);
        }
        // every worker is set up: the observer may hold the start (a barrier across hosts)
        obs.start();
        let t0 = now_ns() + 1_000_000;
        let measure_start = t0.saturating_add(to_ns(spec.warmup_s));
        // `--until-stable` may run the window up to its longest; the monitor ends it earlier
        let window_s = spec.until_stable.map_or(spec.duration_s, |u| u.max_s);
        let measure_end = measure_start.saturating_add(to_ns(window_s));
        let issue_end = measure_end.saturating_add(to_ns(spec.cooldown_s));
        tl.start_ns.store(t0, Relaxed);
        tl.measure_start_ns.store(measure_start, Relaxed);
        tl.window_end_ns.store(measure_end, Relaxed);
        tl.issue_end_ns.store(issue_end, Relaxed);
        go.wait();

        let m = monitor::Monitor {
            tl: &tl,
            live: &live,
            jobs: jobs.iter().map(|j| j.ctxs.clone()).collect(),
            uring: jobs.iter().map(|j| j.engine.is_uring()).collect(),
            per_worker: jobs.iter().map(|j| j.spec.interval_ms.is_some()).collect(),
            interval_ns: series_interval_ns(&jobs),
            finished: &finished,
            t0,
            measure_start,
            until_stable: spec.until_stable.map(|u| monitor::StopWhenSure {
                ci_pct: u.ci_pct,
                min_end_ns: measure_start.saturating_add(to_ns(spec.duration_s)),
                cooldown_ns: to_ns(spec.cooldown_s),
            }),
        };
        monitored = Some(m.run(obs));
        for (h, c) in handles.into_iter().zip(&ctxs) {
            reports.push(h.join().unwrap_or_else(|_| WorkerReport {
                job: c.job,
                target_idx: c.target_idx,
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
    let monitored = monitored.expect("the monitor ran");
    let group_ios = reports
        .iter()
        .map(|r| r.stats.read.ios + r.stats.write.ios)
        .sum();
    let window = monitored.window;
    let steal_pct = monitored.steal_pct;
    Ok(monitored
        .per_second
        .into_iter()
        .enumerate()
        .map(|(ji, series)| {
            let measured = assemble::Measured {
                per_second: series,
                per_worker: &monitored.per_worker,
                cpu: monitored.cpu,
                cpus: &monitored.cpus,
                group_ios,
            };
            let mut o = assemble::assemble(&jobs, ji, &tl, &reports, measured);
            let u = spread::uncertainty(&o.result.per_second, steal_pct);
            if let Some(w) = until_stable_missed(jobs[ji].spec, &o.result, &u) {
                o.result.warnings.push(w);
            }
            o.result.uncertainty = Some(u);
            if jobs[ji].engine.is_uring() {
                let each_pct = window.get(ji).and_then(|(a, b)| series::each_pct(a, b));
                assemble::record_submit(&mut o.result, &reports, ji, &tl, each_pct);
            } else if jobs[ji].spec.submit == iocap_model::SubmitMode::Each {
                // psync issues each I/O with its own call anyway: what was asked is moot
                o.result.warnings.push(format!(
                    "--submit each applies to io_uring only; the {} engine issues every I/O \
                     with its own system call anyway",
                    jobs[ji].engine.name()
                ));
            }
            o
        })
        .collect())
}

/// The interval of the series of a group: the shortest any of its workloads asked for
/// (`JobSpec.interval_ms`), one second when none did.
fn series_interval_ns(jobs: &[plan::Job]) -> u64 {
    jobs.iter()
        .filter_map(|j| j.spec.interval_ms)
        .min()
        .map_or(1_000_000_000, |ms| u64::from(ms) * 1_000_000)
}

/// The warning for an `--until-stable` window that ran to its longest without the IOPS'
/// interval narrowing to the target.
fn until_stable_missed(
    spec: &JobSpec,
    r: &TestResult,
    u: &iocap_model::Uncertainty,
) -> Option<String> {
    let want = spec.until_stable?;
    let got = u.iops.as_ref().map(|s| s.ci95_half_pct);
    if r.interrupted || r.error.is_some() || got.is_some_and(|g| g <= want.ci_pct) {
        return None;
    }
    Some(format!(
        "--until-stable {}%: after {:.0} s the IOPS' 95 % interval was still {}; the storage \
         did not settle within the longest window",
        want.ci_pct,
        r.duration_s,
        got.map_or("unknown".to_string(), |g| format!("±{g:.1} %"))
    ))
}

/// A worker on whichever backend [`backend::drive`] opened: it waits for every worker to be
/// set up and for the start, then runs the engine's loop with its policy ([`worker::run`]). It gives back what opening
/// the backend brought, and the loop's result: `None` when the test was halted before it
/// started.
struct Work<'a> {
    cfg: &'a WorkerConfig,
    gen: &'a mut OffsetGen,
    tl: &'a Timeline,
    live: &'a LiveCounters,
    stats: &'a mut WorkerStats,
    ready: &'a Barrier,
    go: &'a Barrier,
}

impl Drive for Work<'_> {
    type Out = (Opened, Option<std::io::Result<()>>);

    fn run<B: Backend>(self, q: IoQueue<'_, B>, opened: Opened) -> Self::Out {
        self.ready.wait();
        self.go.wait();
        if self.tl.halt.load(Relaxed) {
            return (opened, None);
        }
        let ran = worker::run(self.cfg, q, self.gen, self.tl, self.live, self.stats);
        (opened, Some(ran))
    }
}

fn run_context(
    job: &Job,
    c: &Context,
    tl: &Timeline,
    live: &LiveCounters,
    ready: &Barrier,
    go: &Barrier,
    setup_failed: &OnceLock<String>,
) -> WorkerReport {
    let (spec, t, engine) = (job.spec, &job.targets[c.target_idx], job.engine);

    clock::tighten_timer_slack();
    if let Some(mask) = t.cpu_mask {
        set_affinity(mask);
    }
    let mut rep = WorkerReport {
        job: c.job,
        target_idx: c.target_idx,
        stats: WorkerStats::default(),
        features: vec![],
        notes: vec![],
        error: None,
    };
    let cfg = WorkerConfig {
        job: c.job,
        target_idx: c.target_idx,
        depth: c.depth,
        fsync_every: spec.fsync_every,
        datasync: spec.datasync,
        rate_interval_ns: job.rate_interval_ns,
        rate_process: job.rate_process,
        burst_ns: job.burst_ns,
        write_seed: c.seed,
        auto_submit: engine.is_uring() && spec.submit == iocap_model::SubmitMode::Auto,
    };
    let mut gen = OffsetGen::new(
        spec.rw.is_random(),
        t.range_bytes,
        &job.sizes,
        spec.align_bytes,
        spec.write_pct,
        c.seed,
        c.cursor.clone(),
    )
    .with_walk(c.walk);
    let bufs =
        SlotBuffers::new(c.depth as usize, spec.bs_bytes as usize, c.seed).and_then(|mut b| {
            b.set_shape(spec.compressible_pct, spec.dedupe_pct, c.seed)?;
            Ok(b)
        });
    let mut bufs = match bufs {
        Ok(b) => b,
        Err(e) => {
            let _ = setup_failed.set(format!("cannot allocate I/O buffers: {e}"));
            ready.wait();
            go.wait();
            return rep;
        }
    };
    let options = Options {
        depth: c.depth,
        registration: if spec.engine == iocap_model::EngineChoice::IoUringUnregistered {
            Registration::Plain
        } else {
            Registration::Registered
        },
        submit: spec.submit,
    };
    let work = Work {
        cfg: &cfg,
        gen: &mut gen,
        tl,
        live,
        stats: &mut rep.stats,
        ready,
        go,
    };
    #[cfg(target_os = "linux")]
    let handle = Handle { file: &t.file };
    #[cfg(windows)]
    let reopen = |overlapped| {
        crate::target::worker_handle(t, spec.writes(), overlapped)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", t.path.display())))
    };
    #[cfg(windows)]
    let handle = Handle { reopen: &reopen };
    let (opened, result) = match backend::drive(engine, handle, &mut bufs, options, work) {
        Ok(ran) => ran,
        Err(e) => {
            let _ = setup_failed.set(e.to_string());
            ready.wait();
            go.wait();
            return rep;
        }
    };
    rep.features = opened.features;
    rep.notes = opened.notes;
    let Some(result) = result else {
        return rep;
    };
    if let Err(e) = result {
        // I/Os may still be in flight: the queue left `bufs` never to be freed
        tl.halt.store(true, Relaxed);
        tl.cut(now_ns());
        rep.error = Some(format!("the {} engine failed: {e}", engine.name()));
    }
    rep
}

//! The monitor: the calling thread sleeps on absolute deadlines (the start and end of the
//! measured window, each interval of the series in between, and each second for progress),
//! reads the workers' live counters, takes the process's and every CPU's time at the window's
//! edges and reports progress to an observer. Workers never wait for it. With several
//! workloads it keeps one series per workload (`series`) and shows their sum as progress.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use iocap_model::{CpuShare, SecondSample, WorkerInterval};

use super::series::{rates, read_jobs, Series};
use super::{LiveSample, Phase, RunObserver};
use crate::live::{LiveCounters, LiveSnapshot};
use crate::worker::Timeline;
use iocap_platform::clock::{self, now_ns};
use iocap_platform::{host, procstat};

const SECOND: u64 = 1_000_000_000;

/// What the monitor measured: one series per workload (and per worker where asked), the
/// process CPU (user, sys) seconds and every CPU's share over the window.
pub(super) struct Monitored {
    pub per_second: Vec<Vec<SecondSample>>,
    /// One series per worker, in `live`'s order; empty for workloads that kept none.
    pub per_worker: Vec<Vec<WorkerInterval>>,
    pub cpu: (f64, f64),
    /// Each CPU's time over the window, system-wide; empty when it could not be read.
    pub cpus: Vec<CpuShare>,
    /// Each workload's counters when the window opened and when it closed.
    pub window: Vec<(LiveSnapshot, LiveSnapshot)>,
    /// Share of all CPU time the hypervisor stole over the window, in percent.
    pub steal_pct: Option<f64>,
}

pub(super) struct Monitor<'a> {
    pub tl: &'a Timeline,
    pub live: &'a [LiveCounters],
    /// Each workload's workers in `live`.
    pub jobs: Vec<Range<usize>>,
    /// Whether each workload runs on io_uring (the submission share is recorded).
    pub uring: Vec<bool>,
    /// Whether each workload keeps a series per worker.
    pub per_worker: Vec<bool>,
    /// The interval of the series.
    pub interval_ns: u64,
    pub finished: &'a AtomicUsize,
    pub t0: u64,
    pub measure_start: u64,
    /// `--until-stable`: end the window once the IOPS are known this well.
    pub until_stable: Option<StopWhenSure>,
}

/// When `--until-stable` ends the measured window.
pub(super) struct StopWhenSure {
    /// Largest half-width of the IOPS' 95 % interval, in percent of the mean.
    pub ci_pct: f64,
    /// The window runs at least until here (`--duration`).
    pub min_end_ns: u64,
    pub cooldown_ns: u64,
}

impl StopWhenSure {
    /// Whether the per-second series so far (all workloads together) pins the IOPS down well
    /// enough to end the window at `at_ns`.
    fn sure(&self, series: &[Vec<SecondSample>], at_ns: u64) -> bool {
        if at_ns < self.min_end_ns {
            return false;
        }
        let n = series.iter().map(Vec::len).min().unwrap_or(0);
        let total: Vec<f64> = (0..n)
            .map(|i| series.iter().map(|s| s[i].iops).sum())
            .collect();
        iocap_stats::batch_means_ci(&total, 0.95)
            .is_some_and(|ci| ci.mean > 0.0 && ci.half_width / ci.mean * 100.0 <= self.ci_pct)
    }
}

impl Monitor<'_> {
    /// Runs until every worker has finished.
    pub fn run(&self, obs: &mut dyn RunObserver) -> Monitored {
        let (tl, t0, measure_start) = (self.tl, self.t0, self.measure_start);
        let n = self.live.len();
        let mut series = Series::new(
            self.live,
            &self.jobs,
            &self.uring,
            self.per_worker.clone(),
            measure_start,
        );
        let mut out = Monitored {
            per_second: Vec::new(),
            per_worker: Vec::new(),
            cpu: (0.0, 0.0),
            cpus: Vec::new(),
            window: Vec::new(),
            steal_pct: None,
        };
        let mut window_open: Vec<LiveSnapshot> = Vec::new();
        let (mut stat_open, mut cpus_open) = (None, None);
        let mut progress = Progress::new(self, t0);
        let mut cpu_start = None;
        let mut window_closed = false;
        // the next edge of the series; none before the window opens
        let mut next_edge = u64::MAX;
        while self.finished.load(Relaxed) < n {
            let mut wake = progress
                .next_tick
                .min(next_edge)
                .min(now_ns() + 100_000_000);
            if cpu_start.is_none() {
                wake = wake.min(measure_start);
            }
            if !window_closed {
                wake = wake.min(tl.window_end_ns.load(Relaxed));
            }
            clock::sleep_until(wake);
            let now = now_ns();
            if tl.interrupt.load(Relaxed) {
                tl.cut(now);
            }
            let window_end = tl.window_end_ns.load(Relaxed);
            if cpu_start.is_none() && now >= measure_start && now < window_end {
                cpu_start = Some(host::process_cpu_s());
                stat_open = procstat::read();
                cpus_open = procstat::read_per_cpu();
                window_open = series.open(measure_start);
                obs.window_edge(0.0);
                next_edge = measure_start + self.interval_ns;
            }
            if !window_closed && now >= window_end {
                window_closed = true;
                if let Some((u0, s0)) = cpu_start {
                    let (u1, s1) = host::process_cpu_s();
                    out.cpu = (u1 - u0, s1 - s0);
                }
                out.steal_pct = stat_open
                    .filter(|_| procstat::STEAL_KNOWN)
                    .zip(procstat::read())
                    .and_then(|(a, b)| b.since(&a).steal_pct());
                out.cpus = cpus_open
                    .take()
                    .zip(procstat::read_per_cpu())
                    .map_or_else(Vec::new, |(a, b)| procstat::shares(&a, &b));
                if cpu_start.is_some() {
                    let end = window_end.max(measure_start);
                    // the ragged end counts if it is a tenth of an interval or more
                    let (t_s, closing) = series.edge(end, self.interval_ns / 10);
                    if let Some(t_s) = t_s {
                        obs.window_edge(t_s);
                    }
                    out.window = std::mem::take(&mut window_open)
                        .into_iter()
                        .zip(closing)
                        .collect();
                }
                next_edge = u64::MAX;
            }
            if now >= next_edge {
                if now < window_end {
                    if let (Some(t_s), _) = series.edge(next_edge, 1) {
                        obs.window_edge(t_s);
                    }
                    if let Some(u) = &self.until_stable {
                        if u.sure(&series.tests, next_edge) {
                            tl.cut(next_edge);
                            tl.issue_end_ns
                                .fetch_min(next_edge.saturating_add(u.cooldown_ns), Relaxed);
                        }
                    }
                }
                while next_edge <= now {
                    next_edge += self.interval_ns;
                }
            }
            if now >= progress.next_tick {
                progress.tick(self, obs, now);
            }
        }
        out.per_second = series.tests;
        out.per_worker = series.workers;
        out
    }
}

/// The progress line: the sum of every workload, once a second, whatever the interval of the
/// series.
struct Progress {
    prev: LiveSnapshot,
    prev_t: u64,
    t0: u64,
    next_tick: u64,
}

impl Progress {
    fn new(m: &Monitor<'_>, t0: u64) -> Self {
        Self {
            prev: Self::total(m),
            prev_t: t0,
            t0,
            next_tick: t0 + SECOND,
        }
    }

    fn total(m: &Monitor<'_>) -> LiveSnapshot {
        let mut t = LiveSnapshot::default();
        for s in read_jobs(m.live, &m.jobs, true).0 {
            t.add(&s);
        }
        t
    }

    fn tick(&mut self, m: &Monitor<'_>, obs: &mut dyn RunObserver, now: u64) {
        let tl = m.tl;
        let cur = Self::total(m);
        let (iops, mb_s, mean, p99) = rates(&self.prev, &cur, (now - self.prev_t) as f64 / 1e9);
        let phase = if now < m.measure_start {
            Phase::Warmup
        } else if now < tl.window_end_ns.load(Relaxed) {
            Phase::Measure
        } else {
            Phase::Cooldown
        };
        let end = tl.issue_end_ns.load(Relaxed);
        if now < end {
            obs.tick(&LiveSample {
                phase,
                elapsed_s: (now - self.t0) as f64 / 1e9,
                total_s: (end - self.t0) as f64 / 1e9,
                iops,
                mb_s,
                lat_us_mean: mean,
                lat_us_p99: p99,
            });
        }
        self.prev = cur;
        self.prev_t = now;
        while self.next_tick <= now {
            self.next_tick += SECOND;
        }
    }
}

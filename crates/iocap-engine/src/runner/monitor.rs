//! The monitor: the calling thread sleeps on absolute deadlines (the start and end of the
//! measured window and every second in between), reads the workers' live counters, takes the
//! process CPU time at the window's edges and reports progress to an observer. Workers never
//! wait for it. With several workloads it keeps one per-second series per workload and shows
//! their sum as progress.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use iocap_model::SecondSample;

use super::{LiveSample, Phase, RunObserver};
use crate::clock::{self, now_ns};
use crate::stats::{LiveCounters, LiveSnapshot};
use crate::worker::Timeline;
use crate::{host, procstat};

const SECOND: u64 = 1_000_000_000;

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

/// Percent of the I/Os queued between `prev` and `cur` that were submitted one by one.
pub(super) fn each_pct(prev: &LiveSnapshot, cur: &LiveSnapshot) -> Option<f64> {
    let n = cur.submitted - prev.submitted;
    (n > 0).then(|| (cur.submitted_each - prev.submitted_each) as f64 * 100.0 / n as f64)
}

fn second(
    prev: &LiveSnapshot,
    cur: &LiveSnapshot,
    secs: f64,
    t_s: f64,
    uring: bool,
) -> SecondSample {
    let (iops, mb_s, lat_us_mean, lat_us_p99) = sample(prev, cur, secs);
    SecondSample {
        t_s,
        iops,
        mb_s,
        lat_us_mean,
        lat_us_p99,
        submit_each_pct: if uring { each_pct(prev, cur) } else { None },
        read: None,
        write: None,
    }
}

/// What the monitor measured: one per-second series per workload, and the process CPU
/// (user, sys) seconds over the window.
pub(super) struct Monitored {
    pub per_second: Vec<Vec<SecondSample>>,
    pub cpu: (f64, f64),
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
    fn snaps(&self) -> Vec<LiveSnapshot> {
        self.jobs
            .iter()
            .map(|r| {
                let mut s = LiveSnapshot::default();
                for l in &self.live[r.clone()] {
                    l.accumulate(&mut s);
                }
                s
            })
            .collect()
    }

    fn total(snaps: &[LiveSnapshot]) -> LiveSnapshot {
        let mut t = LiveSnapshot::default();
        for s in snaps {
            t.add(s);
        }
        t
    }

    /// Runs until every worker has finished.
    pub fn run(&self, obs: &mut dyn RunObserver) -> Monitored {
        let (tl, t0, measure_start) = (self.tl, self.t0, self.measure_start);
        let n = self.live.len();
        let mut out = Monitored {
            per_second: vec![Vec::new(); self.jobs.len()],
            cpu: (0.0, 0.0),
            window: Vec::new(),
            steal_pct: None,
        };
        let mut window_open: Vec<LiveSnapshot> = Vec::new();
        let mut stat_open = None;
        let issue_end = || tl.issue_end_ns.load(Relaxed);
        let mut prev = Self::total(&self.snaps());
        let mut prev_t = t0;
        let mut window_prev: Option<(Vec<LiveSnapshot>, u64)> = None;
        let mut cpu_start = None;
        let mut window_closed = false;
        let mut next_tick = t0 + SECOND;
        while self.finished.load(Relaxed) < n {
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
                stat_open = procstat::read();
                window_open = self.snaps();
                window_prev = Some((window_open.clone(), measure_start));
                obs.window_edge(0.0);
                next_tick = measure_start + SECOND;
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
                let closing = self.snaps();
                if let Some((p, pt)) = window_prev.take() {
                    let end = window_end.max(pt);
                    let secs = (end - pt) as f64 / 1e9;
                    if secs >= 0.1 {
                        let t_s = (end - measure_start) as f64 / 1e9;
                        for (j, (series, p)) in out.per_second.iter_mut().zip(&p).enumerate() {
                            series.push(second(p, &closing[j], secs, t_s, self.uring[j]));
                        }
                        obs.window_edge(t_s);
                    }
                }
                out.window = std::mem::take(&mut window_open)
                    .into_iter()
                    .zip(closing)
                    .collect();
            }
            if now >= next_tick {
                let cur = self.snaps();
                if let Some((p, pt)) = window_prev.as_mut() {
                    if now < window_end {
                        let secs = (next_tick - *pt) as f64 / 1e9;
                        let t_s = (next_tick - measure_start) as f64 / 1e9;
                        for (j, (series, p)) in out.per_second.iter_mut().zip(p.iter()).enumerate()
                        {
                            series.push(second(p, &cur[j], secs, t_s, self.uring[j]));
                        }
                        obs.window_edge(t_s);
                        p.clone_from(&cur);
                        *pt = next_tick;
                        if let Some(u) = &self.until_stable {
                            if u.sure(&out.per_second, next_tick) {
                                tl.cut(next_tick);
                                tl.issue_end_ns
                                    .fetch_min(next_tick.saturating_add(u.cooldown_ns), Relaxed);
                            }
                        }
                    }
                }
                let cur = Self::total(&cur);
                let (iops, mb_s, mean, p99) = sample(&prev, &cur, (now - prev_t) as f64 / 1e9);
                let phase = if now < measure_start {
                    Phase::Warmup
                } else if now < tl.window_end_ns.load(Relaxed) {
                    Phase::Measure
                } else {
                    Phase::Cooldown
                };
                let end = issue_end();
                if now < end {
                    obs.tick(&LiveSample {
                        phase,
                        elapsed_s: (now - t0) as f64 / 1e9,
                        total_s: (end - t0) as f64 / 1e9,
                        iops,
                        mb_s,
                        lat_us_mean: mean,
                        lat_us_p99: p99,
                    });
                }
                prev = cur;
                prev_t = now;
                while next_tick <= now {
                    next_tick += SECOND;
                }
            }
        }
        out
    }
}

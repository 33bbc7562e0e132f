//! What the integration tests share: a constructed result with the finer grain filled in
//! (workers, their intervals, every CPU, the topology), and a tiny XML reader.
#![allow(dead_code)] // each test file uses its part

pub mod reader;

use iocap_model::detail::{
    CpuPlace, CpuShare, CpuTopology, IntervalLatency, IntervalOps, PowerPolicy, WorkerInterval,
    WorkerResult,
};
use iocap_model::fixture::{run as fixture, FixtureRun};
use iocap_model::{OpStats, RunResult, RwMode, SecondSample};

/// What to construct: `fixture`'s test, its I/Os shared out over `threads` workers per target
/// and over intervals of `interval_ms` (a second when `None`, and then no series per worker,
/// as the engine keeps one only with `-D`).
pub struct Detail {
    pub targets: Vec<String>,
    pub threads: u32,
    pub rw: RwMode,
    pub bs_bytes: u64,
    pub duration_s: u32,
    pub iops: f64,
    pub interval_ms: Option<u32>,
    /// The host's CPUs: `cores` cores of `smt` threads on one socket, Linux-numbered (a core's
    /// threads `cores` apart).
    pub cores: u32,
    pub smt: u32,
}

impl Default for Detail {
    fn default() -> Self {
        Detail {
            targets: vec!["/data/t.dat".into()],
            threads: 1,
            rw: RwMode::RandRead,
            bs_bytes: 8192,
            duration_s: 4,
            iops: 20_000.0,
            interval_ms: None,
            cores: 4,
            smt: 2,
        }
    }
}

/// `total` shared out in proportion to `weights`, exactly.
pub fn split(total: u64, weights: &[f64]) -> Vec<u64> {
    let sum: f64 = weights.iter().sum();
    let (mut acc, mut prev) = (0.0, 0u64);
    weights
        .iter()
        .map(|w| {
            acc += w;
            let upto = ((total as f64) * acc / sum).round() as u64;
            let part = upto - prev;
            prev = upto;
            part
        })
        .collect()
}

/// `base` with `ios` I/Os of `bs` bytes over `secs`, its mean latency scaled by `scale`, and
/// no histogram (the engine keeps one for the test and each target, not each worker).
fn share(base: &OpStats, ios: u64, bs: u64, secs: f64, scale: f64) -> OpStats {
    let mut lat = base.lat_us.clone().filter(|_| ios > 0);
    if let Some(l) = &mut lat {
        l.mean *= scale;
    }
    OpStats {
        ios,
        bytes: ios * bs,
        iops: ios as f64 / secs,
        mib_s: (ios * bs) as f64 / secs / 1_048_576.0,
        mb_s: (ios * bs) as f64 / secs / 1e6,
        lat_us: lat,
        lat_hist_ns: None,
    }
}

/// One interval's I/Os of a kind, their latency around `base`'s.
fn interval(ios: u64, base: &OpStats, wobble: f64) -> IntervalOps {
    let lat_us = base
        .lat_us
        .as_ref()
        .filter(|_| ios > 0)
        .map(|l| IntervalLatency {
            min: l.min,
            mean: l.mean * wobble,
            max: l.max * wobble.min(1.0),
            stddev: l.stddev,
        });
    IntervalOps { ios, lat_us }
}

/// The constructed run: every figure adds up (workers to targets to the test, intervals to
/// workers, the test's series to the workers' intervals).
pub fn build(d: &Detail) -> RunResult {
    let mut run = fixture(&FixtureRun {
        targets: d.targets.clone(),
        rw: d.rw,
        bs_bytes: d.bs_bytes,
        duration_s: d.duration_s,
        iops: d.iops,
        ..FixtureRun::default()
    });
    let cpus: Vec<CpuPlace> = (0..d.cores * d.smt)
        .map(|id| CpuPlace {
            id,
            socket: 0,
            node: 0,
            core: id % d.cores,
        })
        .collect();
    run.host.cpus = cpus.len() as u32;
    run.host.topology = Some(CpuTopology { cpus: cpus.clone() });
    run.host.power_policy = Some(PowerPolicy {
        name: "performance".into(),
        guid: None,
    });
    let test = &mut run.tests[0];
    test.cpu.system = cpus
        .iter()
        .map(|c| {
            let usage = 8.0 + f64::from(c.id * 7 % 23);
            CpuShare {
                id: c.id,
                usage_pct: usage,
                user_pct: usage * 0.25,
                kernel_pct: usage * 0.75,
                idle_pct: 100.0 - usage,
            }
        })
        .collect();
    let secs = test.duration_s;
    let interval_ms = d.interval_ms.unwrap_or(1000);
    let n_intervals = (d.duration_s * 1000 / interval_ms).max(1) as usize;
    let n_targets = d.targets.len();
    let n_workers = n_targets * d.threads as usize;
    let weights: Vec<f64> = (0..n_workers)
        .map(|k| 1.0 + 0.05 * ((k * 7 % 5) as f64 - 2.0))
        .collect();
    let (reads, writes) = (
        split(test.read.ios, &weights),
        split(test.write.ios, &weights),
    );
    let bs = d.bs_bytes;
    test.workers = (0..n_workers)
        .map(|k| {
            let wobble: Vec<f64> = (0..n_intervals)
                .map(|i| 1.0 + 0.06 * ((i as f64) * 1.3 + k as f64).sin())
                .collect();
            let (r, w) = (split(reads[k], &wobble), split(writes[k], &wobble));
            let scale = 1.0 + 0.02 * k as f64;
            WorkerResult {
                target: (k / d.threads as usize) as u32,
                thread: (k % d.threads as usize) as u32,
                read: share(&test.read, reads[k], bs, secs, scale),
                write: share(&test.write, writes[k], bs, secs, scale),
                intervals: (0..n_intervals)
                    .map(|i| WorkerInterval {
                        read: interval(r[i], &test.read, wobble[i]),
                        write: interval(w[i], &test.write, wobble[i]),
                    })
                    .collect(),
            }
        })
        .collect();
    for (j, t) in test.targets.iter_mut().enumerate() {
        let mine: Vec<&WorkerResult> = test
            .workers
            .iter()
            .filter(|w| w.target as usize == j)
            .collect();
        let (r, w): (u64, u64) = (
            mine.iter().map(|w| w.read.ios).sum(),
            mine.iter().map(|w| w.write.ios).sum(),
        );
        t.threads = d.threads;
        t.read = share(&test.read, r, bs, secs, 1.0);
        t.read.lat_hist_ns = test.read.lat_hist_ns.clone().filter(|_| r > 0);
        t.write = share(&test.write, w, bs, secs, 1.0);
        t.write.lat_hist_ns = test.write.lat_hist_ns.clone().filter(|_| w > 0);
        t.total = share(&test.total, r + w, bs, secs, 1.0);
        t.total.lat_hist_ns = test.total.lat_hist_ns.clone();
    }
    test.per_second = (0..n_intervals)
        .map(|i| {
            let at = |f: fn(&WorkerInterval) -> IntervalOps| {
                let parts: Vec<IntervalOps> =
                    test.workers.iter().map(|w| f(&w.intervals[i])).collect();
                IntervalOps::combine(&parts)
            };
            let (r, w) = (at(|v| v.read), at(|v| v.write));
            let per_s = 1000.0 / f64::from(interval_ms);
            let both = IntervalOps::combine(&[r, w]);
            SecondSample {
                t_s: (i as f64 + 1.0) * f64::from(interval_ms) / 1000.0,
                iops: both.ios as f64 * per_s,
                mb_s: (both.ios * bs) as f64 * per_s / 1e6,
                lat_us_mean: both.lat_us.map(|l| l.mean),
                lat_us_p99: None,
                submit_each_pct: None,
                read: Some(r),
                write: Some(w),
            }
        })
        .collect();
    test.spec.threads = d.threads;
    test.spec.interval_ms = d.interval_ms;
    if d.interval_ms.is_none() {
        for w in &mut test.workers {
            w.intervals.clear();
        }
    }
    run
}

/// The four runs: a command line and a result built for it.
pub fn runs() -> [(&'static str, &'static str, RunResult); 4] {
    [
        (
            "four_threads",
            "-b8K -d4 -W0 -o8 -t4 -r -Sh -L -D /data/t.dat",
            build(&Detail {
                threads: 4,
                interval_ms: Some(1000),
                ..Detail::default()
            }),
        ),
        (
            "mixed_d500",
            "-b8K -d3 -W0 -o4 -t1 -r -w30 -Sh -L -D500 /data/t.dat",
            build(&Detail {
                rw: RwMode::RandRw,
                duration_s: 3,
                interval_ms: Some(500),
                ..Detail::default()
            }),
        ),
        (
            "pool_of_two_on_two_files",
            "-b64K -d3 -W0 -F2 -o4 -s -w30 -L -D /data/a.dat /data/b.dat",
            build(&Detail {
                targets: vec!["/data/a.dat".into(), "/data/b.dat".into()],
                threads: 2,
                rw: RwMode::Rw,
                bs_bytes: 64 << 10,
                duration_s: 3,
                iops: 4_000.0,
                interval_ms: Some(1000),
                ..Detail::default()
            }),
        ),
        (
            "strided",
            "-b4K -d3 -W0 -o2 -t2 -T1b -s8b -L -D /data/s.dat",
            build(&Detail {
                targets: vec!["/data/s.dat".into()],
                threads: 2,
                rw: RwMode::Read,
                bs_bytes: 4096,
                duration_s: 3,
                interval_ms: Some(1000),
                ..Detail::default()
            }),
        ),
    ]
}

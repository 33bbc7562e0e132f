//! One test run on several hosts at once (MPI ranks), merged into one result exactly: counts,
//! bytes and rates summed, latency percentiles read from the ranks' histograms added together
//! (never an average of percentiles), and every rank's own figures kept in the result's
//! [`Ranks`] scope. Pure: the transport (MPI) gathers the parts, this adds them up.

use iocap_model::hist::{decode_hist, encode_hist, quantile_within_us};
use iocap_model::{
    CpuStats, HostInfo, IoFault, JobSpec, LatencyUs, OpStats, RankScope, Ranks, SecondSample,
    TestResult,
};

/// One rank's result of one test, and when it left the start barrier.
#[derive(Debug, Clone)]
pub struct RankPart {
    pub rank: u32,
    pub host: String,
    /// Real-time clock when the rank left the start barrier, in ns since the Unix epoch.
    pub start_ns: u64,
    pub result: TestResult,
    /// The host's details (kernel, CPU, memory), when the transport gathered them.
    pub host_info: Option<HostInfo>,
}

/// `{host}` and `{rank}` in a spec's target paths replaced by this rank's, so a shared file
/// system gets one file per rank.
pub fn place(spec: &JobSpec, host: &str, rank: u32) -> JobSpec {
    let mut s = spec.clone();
    for t in &mut s.targets {
        t.path = place_path(&t.path, host, rank);
    }
    s
}

/// `{host}` and `{rank}` in one path replaced by this rank's.
pub fn place_path(path: &str, host: &str, rank: u32) -> String {
    path.replace("{host}", host)
        .replace("{rank}", &rank.to_string())
}

/// Latency statistics of several ranks together: extremes of the extremes, the mean weighted
/// by I/Os, the pooled standard deviation, percentiles from the merged histogram.
fn merge_latency(parts: &[&OpStats], ios: u64) -> Option<LatencyUs> {
    let lats: Vec<(&LatencyUs, u64)> = parts
        .iter()
        .filter_map(|o| o.lat_us.as_ref().map(|l| (l, o.ios)))
        .collect();
    if lats.is_empty() || ios == 0 {
        return None;
    }
    let n = ios as f64;
    let mean = lats.iter().map(|(l, k)| l.mean * *k as f64).sum::<f64>() / n;
    // pooled variance: the spread within each rank plus the spread of the ranks' means
    let ss: f64 = lats
        .iter()
        .map(|(l, k)| {
            let k = *k as f64;
            (k - 1.0).max(0.0) * l.stddev * l.stddev + k * (l.mean - mean).powi(2)
        })
        .sum();
    let min = lats
        .iter()
        .map(|(l, _)| l.min)
        .fold(f64::INFINITY, f64::min);
    let max = lats.iter().map(|(l, _)| l.max).fold(0.0, f64::max);
    let h = merged_hist(parts)?;
    let q = |p: f64| quantile_within_us(&h, p, min, max);
    let stddev = if ios > 1 {
        (ss / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    Some(LatencyUs::from_quantiles(min, mean, stddev, max, q))
}

/// The ranks' latency histograms added together; `None` when a rank with I/O has none.
pub fn merged_hist(parts: &[&OpStats]) -> Option<hdrhistogram::Histogram<u64>> {
    let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
    for o in parts.iter().filter(|o| o.ios > 0) {
        let h = decode_hist(o.lat_hist_ns.as_deref()?).ok()?;
        match &mut merged {
            Some(m) => m.add(&h).ok()?,
            None => merged = Some(h),
        }
    }
    merged
}

/// Counts, bytes and rates summed; latency from the merged histogram.
pub fn merge_op(parts: &[&OpStats]) -> OpStats {
    let ios = parts.iter().map(|o| o.ios).sum();
    OpStats {
        ios,
        bytes: parts.iter().map(|o| o.bytes).sum(),
        iops: parts.iter().map(|o| o.iops).sum(),
        mib_s: parts.iter().map(|o| o.mib_s).sum(),
        mb_s: parts.iter().map(|o| o.mb_s).sum(),
        lat_us: merge_latency(parts, ios),
        lat_hist_ns: merged_hist(parts)
            .filter(|h| !h.is_empty())
            .map(|h| encode_hist(&h)),
    }
}

/// The per-second series added second by second (the ranks started together, so their
/// seconds line up): rates summed, the mean latency weighted by IOPS, the p99 the worst
/// rank's (a per-second histogram is not kept, so this one is an upper bound).
/// One class of an interval over the ranks; `None` when a rank did not record it.
fn split(
    at: &[&SecondSample],
    class: impl Fn(&SecondSample) -> Option<iocap_model::IntervalOps>,
) -> Option<iocap_model::IntervalOps> {
    let parts: Option<Vec<_>> = at.iter().map(|s| class(s)).collect();
    parts.map(|p| iocap_model::IntervalOps::combine(&p))
}

fn merge_seconds(parts: &[RankPart]) -> Vec<SecondSample> {
    let n = parts
        .iter()
        .map(|p| p.result.per_second.len())
        .max()
        .unwrap_or(0);
    (0..n)
        .map(|i| {
            let at: Vec<&SecondSample> = parts
                .iter()
                .filter_map(|p| p.result.per_second.get(i))
                .collect();
            let iops: f64 = at.iter().map(|s| s.iops).sum();
            let weighted: f64 = at
                .iter()
                .filter_map(|s| s.lat_us_mean.map(|m| m * s.iops))
                .sum();
            SecondSample {
                t_s: at[0].t_s,
                iops,
                mb_s: at.iter().map(|s| s.mb_s).sum(),
                lat_us_mean: (iops > 0.0).then_some(weighted / iops),
                lat_us_p99: at.iter().filter_map(|s| s.lat_us_p99).reduce(f64::max),
                submit_each_pct: None,
                read: split(&at, |s| s.read),
                write: split(&at, |s| s.write),
            }
        })
        .collect()
}

/// The first fault of any rank, naming the rank and its host.
fn first_fault(parts: &[RankPart]) -> Option<IoFault> {
    parts.iter().find_map(|p| {
        p.result.error.as_ref().map(|e| IoFault {
            path: format!("{} (rank {} on {})", e.path, p.rank, p.host),
            ..e.clone()
        })
    })
}

/// Marks the ranks whose IOPS are below the median by more than their own noise.
fn flag_slow(scopes: &mut [RankScope]) {
    let mut iops: Vec<f64> = scopes.iter().map(|s| s.result.total.iops).collect();
    iops.sort_by(f64::total_cmp);
    let median = match iops.len() {
        0 => return,
        n if n % 2 == 1 => iops[n / 2],
        n => (iops[n / 2 - 1] + iops[n / 2]) / 2.0,
    };
    for s in scopes {
        let noise_pct = s
            .result
            .uncertainty
            .as_ref()
            .and_then(|u| u.iops.as_ref())
            .map_or(0.0, |x| x.ci95_half_pct)
            .max(2.0);
        s.below_median = s.result.total.iops < median * (1.0 - noise_pct / 100.0);
    }
}

/// One test's parts from every rank, merged: the result rank 0 would state if one host had
/// done all of it, with each rank's own figures in `ranks`.
pub fn merge_test(parts: Vec<RankPart>) -> TestResult {
    let first = parts[0].result.clone();
    let ops = |f: fn(&TestResult) -> &OpStats| {
        merge_op(&parts.iter().map(|p| f(&p.result)).collect::<Vec<_>>())
    };
    let total = ops(|t| &t.total);
    let (user_s, sys_s) = parts.iter().fold((0.0, 0.0), |(u, s), p| {
        (u + p.result.cpu.user_s, s + p.result.cpu.sys_s)
    });
    let per_second = merge_seconds(&parts);
    let earliest = parts.iter().map(|p| p.start_ns).min().unwrap_or(0);
    let latest = parts.iter().map(|p| p.start_ns).max().unwrap_or(0);
    let mut merged = TestResult {
        read: ops(|t| &t.read),
        write: ops(|t| &t.write),
        sync: ops(|t| &t.sync),
        cpu: CpuStats {
            user_s,
            sys_s,
            us_per_io: if total.ios > 0 {
                (user_s + sys_s) * 1e6 / total.ios as f64
            } else {
                0.0
            },
            // each host's CPUs are its own: they stay in the ranks' results
            system: vec![],
        },
        total,
        duration_s: parts
            .iter()
            .map(|p| p.result.duration_s)
            .fold(0.0, f64::max),
        qd_mean: parts.iter().map(|p| p.result.qd_mean).sum(),
        direct: parts.iter().all(|p| p.result.direct),
        targets: parts
            .iter()
            .flat_map(|p| {
                p.result.targets.iter().map(|t| iocap_model::TargetResult {
                    path: format!("{}:{}", p.host, t.path),
                    ..t.clone()
                })
            })
            .collect(),
        uncertainty: Some(iocap_engine::uncertainty(&per_second, None)),
        per_second,
        warnings: parts
            .iter()
            .flat_map(|p| {
                p.result
                    .warnings
                    .iter()
                    .map(move |w| format!("rank {} ({}): {w}", p.rank, p.host))
            })
            .collect(),
        interrupted: parts.iter().any(|p| p.result.interrupted),
        error: first_fault(&parts),
        os_counters: None,
        ..first
    };
    let mut scopes: Vec<RankScope> = parts
        .into_iter()
        .map(|p| RankScope {
            rank: p.rank,
            host: p.host,
            start_offset_us: (p.start_ns - earliest) as f64 / 1e3,
            below_median: false,
            result: p.result,
            host_info: p.host_info,
        })
        .collect();
    flag_slow(&mut scopes);
    merged.ranks = Some(Ranks {
        start_spread_us: (latest - earliest) as f64 / 1e3,
        merge_us: 0.0,
        ranks: scopes,
    });
    merged
}

//! The finer grain of a test's result: each worker's share, the read/write split of each
//! interval of the series, every CPU's time over the window, and where the host's CPUs sit.
//!
//! Why: a test's totals answer "what can the storage do", but the people who compare iocap with
//! DiskSpd check thread balance (one row per thread), the read and write IOPS of each interval
//! (a mixed test's standard deviation), every core's load (a hot core is a bottleneck the
//! average hides) and the processor topology the threads ran on. These are the figures DiskSpd
//! reports beside its totals; the engine keeps them for every test, and any view may show them.
//! Like the rest of `result`, fields are added, never renamed or removed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::opstats::OpStats;

/// One operation class (reads or writes) in one interval of the series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct IntervalOps {
    /// I/Os completed in the interval.
    pub ios: u64,
    /// Their latency; `null` when none completed.
    pub lat_us: Option<IntervalLatency>,
}

impl IntervalOps {
    /// The same interval over several parts (ranks, workers): counts add up, the extremes are
    /// the parts' extremes, the mean and standard deviation are those of all the I/Os together.
    pub fn combine<'a>(parts: impl IntoIterator<Item = &'a IntervalOps>) -> IntervalOps {
        let (mut n, mut sum, mut sum_sq) = (0u64, 0.0f64, 0.0f64);
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in parts {
            n += p.ios;
            if let Some(l) = p.lat_us.filter(|_| p.ios > 0) {
                let k = p.ios as f64;
                sum += k * l.mean;
                // (k - 1) s² + k m², the sum of the squares the part's figures stand for
                sum_sq += (k - 1.0) * l.stddev * l.stddev + k * l.mean * l.mean;
                lo = lo.min(l.min);
                hi = hi.max(l.max);
            }
        }
        let lat_us = (n > 0 && lo.is_finite()).then(|| {
            let k = n as f64;
            let mean = sum / k;
            let var = if n > 1 {
                ((sum_sq - k * mean * mean) / (k - 1.0)).max(0.0)
            } else {
                0.0
            };
            IntervalLatency {
                min: lo,
                mean,
                max: hi,
                stddev: var.sqrt(),
            }
        });
        IntervalOps { ios: n, lat_us }
    }
}

/// Latency of the I/Os completed in one interval, in microseconds. The mean and standard
/// deviation are exact; the minimum and maximum are exact up to the one I/O completing as the
/// interval closes, which may count in the next one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct IntervalLatency {
    pub min: f64,
    pub mean: f64,
    pub max: f64,
    pub stddev: f64,
}

/// One worker's interval: its reads and its writes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct WorkerInterval {
    pub read: IntervalOps,
    pub write: IntervalOps,
}

/// One worker of a test: one thread issuing I/O to one target. Its counts and latency are
/// measured by the worker itself, and the test's totals are their merge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct WorkerResult {
    /// Index of its target in the test's `targets`.
    pub target: u32,
    /// Its number among the threads of that target, from 0.
    pub thread: u32,
    /// Its reads and writes over the window (`lat_hist_ns` is left out: the test's carries
    /// the merged histogram).
    pub read: OpStats,
    pub write: OpStats,
    /// Its series, interval by interval as the test's `per_second`, when the test asked for
    /// one per worker (`JobSpec.interval_ms`); empty otherwise.
    #[serde(default)]
    pub intervals: Vec<WorkerInterval>,
}

/// One CPU's time over the measured window, system-wide (every process, not only iocap), in
/// percent of the window: Linux's /proc/stat, Windows' processor performance counters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct CpuShare {
    /// The CPU's number, as the OS numbers it.
    pub id: u32,
    /// 100 less idle.
    pub usage_pct: f64,
    /// User and nice time.
    pub user_pct: f64,
    /// System, interrupt and softirq time (Windows: kernel less idle).
    pub kernel_pct: f64,
    /// Idle and I/O wait time.
    pub idle_pct: f64,
}

/// The CPU power policy: Linux's cpufreq governor of CPU 0 (`performance`, `powersave`,
/// `schedutil`), or Windows' active power scheme (`High performance`) and its GUID.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub struct PowerPolicy {
    pub name: String,
    /// Windows' scheme GUID, braces left out; `null` on Linux, which has none.
    pub guid: Option<String>,
}

/// Where one CPU sits: its socket (package), NUMA node and core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub struct CpuPlace {
    /// The CPU's number, as the OS numbers it.
    pub id: u32,
    pub socket: u32,
    pub node: u32,
    /// The core's number within its socket; CPUs with the same socket and core are hardware
    /// threads of one core.
    pub core: u32,
}

/// The host's online CPUs and where each sits, from /sys (Linux) or
/// GetLogicalProcessorInformationEx (Windows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
pub struct CpuTopology {
    /// In the order of their numbers.
    pub cpus: Vec<CpuPlace>,
}

impl CpuTopology {
    /// Distinct values of one coordinate, in order.
    fn distinct(&self, f: impl Fn(&CpuPlace) -> u32) -> Vec<u32> {
        let mut v: Vec<u32> = self.cpus.iter().map(f).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
    pub fn sockets(&self) -> Vec<u32> {
        self.distinct(|c| c.socket)
    }
    pub fn nodes(&self) -> Vec<u32> {
        self.distinct(|c| c.node)
    }
    /// The physical cores, as (socket, core) pairs in order.
    pub fn cores(&self) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = self.cpus.iter().map(|c| (c.socket, c.core)).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
    /// The place of CPU `id`, if it is online.
    pub fn place(&self, id: u32) -> Option<&CpuPlace> {
        self.cpus.iter().find(|c| c.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two parts of one interval combine as the I/Os of both would: 1, 3 (mean 2) and 5, 7
    /// (mean 6) are 1, 3, 5, 7: mean 4, sample standard deviation 2.582.
    #[test]
    fn combined_intervals_have_the_figures_of_all_their_ios() {
        let part = |mean: f64| IntervalOps {
            ios: 2,
            lat_us: Some(IntervalLatency {
                min: mean - 1.0,
                mean,
                max: mean + 1.0,
                stddev: 2f64.sqrt(),
            }),
        };
        let empty = IntervalOps::default();
        let c = IntervalOps::combine(&[part(2.0), empty, part(6.0)]);
        let l = c.lat_us.unwrap();
        assert_eq!(c.ios, 4);
        assert_eq!((l.min, l.mean, l.max), (1.0, 4.0, 7.0));
        assert!((l.stddev - 2.582).abs() < 1e-3, "{}", l.stddev);
        assert_eq!(IntervalOps::combine(&[empty]), empty);
    }

    #[test]
    fn a_two_socket_host_with_hyperthreads_has_its_cores_counted_once() {
        let place = |id, socket, core| CpuPlace {
            id,
            socket,
            node: socket,
            core,
        };
        let t = CpuTopology {
            cpus: vec![
                place(0, 0, 0),
                place(1, 0, 1),
                place(2, 1, 0),
                place(3, 1, 1),
                place(4, 0, 0),
                place(5, 0, 1),
                place(6, 1, 0),
                place(7, 1, 1),
            ],
        };
        assert_eq!(t.sockets(), vec![0, 1]);
        assert_eq!(t.nodes(), vec![0, 1]);
        assert_eq!(t.cores(), vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(t.place(6).map(|p| p.core), Some(0));
        assert_eq!(t.place(9), None);
    }
}

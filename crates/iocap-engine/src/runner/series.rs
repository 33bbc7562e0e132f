//! The series a test keeps over its measured window: at each interval's edge the monitor
//! reads every worker's live counters once, and this turns the differences into one sample per
//! workload (its rates, latency, p99 and the interval's reads and writes apart) and, for the
//! workloads that asked (`JobSpec.interval_ms`, DiskSpd's `-D`), one interval per worker.
//!
//! Why in one place: the test's interval is the sum of its workers' intervals, read at the same
//! instant, so a script that adds the threads' counts up per interval gets the test's count.

use std::ops::Range;

use iocap_model::{SecondSample, WorkerInterval};

use crate::live::{interval, ClassSnapshot, Extremes, LiveCounters, LiveSnapshot};

/// Every worker's counters at one edge.
struct Edge {
    at_ns: u64,
    /// Each workload's sums (with buckets).
    jobs: Vec<LiveSnapshot>,
    /// Each worker's sums, reads and writes.
    workers: Vec<[ClassSnapshot; 2]>,
}

pub(super) struct Series<'a> {
    live: &'a [LiveCounters],
    jobs: &'a [Range<usize>],
    uring: &'a [bool],
    /// Whether each workload keeps a series per worker.
    per_worker: Vec<bool>,
    measure_start: u64,
    prev: Option<Edge>,
    /// One series per workload.
    pub tests: Vec<Vec<SecondSample>>,
    /// One series per worker (empty for the workloads that did not ask).
    pub workers: Vec<Vec<WorkerInterval>>,
}

/// Percent of the I/Os queued between `prev` and `cur` that were submitted one by one.
pub(super) fn each_pct(prev: &LiveSnapshot, cur: &LiveSnapshot) -> Option<f64> {
    let n = cur.submitted - prev.submitted;
    (n > 0).then(|| (cur.submitted_each - prev.submitted_each) as f64 * 100.0 / n as f64)
}

/// Every workload's sums at one instant, each worker read once; with the latency buckets when
/// `buckets`.
pub(super) fn read_jobs(
    live: &[LiveCounters],
    jobs: &[Range<usize>],
    buckets: bool,
) -> (Vec<LiveSnapshot>, Vec<[ClassSnapshot; 2]>) {
    let mut workers = Vec::with_capacity(live.len());
    let sums = jobs
        .iter()
        .map(|r| {
            let mut job = LiveSnapshot::default();
            for l in &live[r.clone()] {
                let mut w = LiveSnapshot::default();
                l.accumulate(&mut w, false);
                job.add(&w);
                workers.push(w.class);
                if buckets {
                    l.add_buckets(&mut job.buckets);
                }
            }
            job
        })
        .collect();
    (sums, workers)
}

impl<'a> Series<'a> {
    pub fn new(
        live: &'a [LiveCounters],
        jobs: &'a [Range<usize>],
        uring: &'a [bool],
        per_worker: Vec<bool>,
        measure_start: u64,
    ) -> Self {
        Self {
            live,
            jobs,
            uring,
            per_worker,
            measure_start,
            prev: None,
            tests: vec![Vec::new(); jobs.len()],
            workers: vec![Vec::new(); live.len()],
        }
    }

    fn read(&self, at_ns: u64) -> (Edge, Vec<[Extremes; 2]>) {
        let (jobs, workers) = read_jobs(self.live, self.jobs, true);
        let ext = self.live.iter().map(LiveCounters::take_extremes).collect();
        let edge = Edge {
            at_ns,
            jobs,
            workers,
        };
        (edge, ext)
    }

    /// Opens the window at `at_ns`: the first interval starts here. Returns the workloads'
    /// sums then.
    pub fn open(&mut self, at_ns: u64) -> Vec<LiveSnapshot> {
        let (edge, _) = self.read(at_ns);
        let sums = edge.jobs.clone();
        self.prev = Some(edge);
        sums
    }

    /// Closes the interval ending at `at_ns` and starts the next; an interval shorter than
    /// `min_ns` (the window's ragged end) is not kept. Returns the `t_s` of the sample kept and
    /// the workloads' sums now.
    pub fn edge(&mut self, at_ns: u64, min_ns: u64) -> (Option<f64>, Vec<LiveSnapshot>) {
        let (cur, ext) = self.read(at_ns);
        let sums = cur.jobs.clone();
        let Some(prev) = self.prev.replace(cur) else {
            return (None, sums);
        };
        let cur = self.prev.as_ref().expect("just set");
        let span = at_ns.saturating_sub(prev.at_ns);
        if span < min_ns.max(1) {
            return (None, sums);
        }
        let secs = span as f64 / 1e9;
        let t_s = at_ns.saturating_sub(self.measure_start) as f64 / 1e9;
        for (j, r) in self.jobs.iter().enumerate() {
            let joined = ext[r.clone()]
                .iter()
                .fold([Extremes::default(); 2], |a, e| {
                    [a[0].join(e[0]), a[1].join(e[1])]
                });
            let (p, c) = (&prev.jobs[j], &cur.jobs[j]);
            let mut s = sample(p, c, secs, t_s, self.uring[j]);
            s.read = Some(interval(&p.class[0], &c.class[0], joined[0]));
            s.write = Some(interval(&p.class[1], &c.class[1], joined[1]));
            self.tests[j].push(s);
            if self.per_worker[j] {
                for w in r.clone() {
                    let (p, c, e) = (&prev.workers[w], &cur.workers[w], &ext[w]);
                    self.workers[w].push(WorkerInterval {
                        read: interval(&p[0], &c[0], e[0]),
                        write: interval(&p[1], &c[1], e[1]),
                    });
                }
            }
        }
        (Some(t_s), sums)
    }
}

/// Rates and latency between two sums `secs` apart.
pub(super) fn rates(
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

fn sample(
    prev: &LiveSnapshot,
    cur: &LiveSnapshot,
    secs: f64,
    t_s: f64,
    uring: bool,
) -> SecondSample {
    let (iops, mb_s, lat_us_mean, lat_us_p99) = rates(prev, cur, secs);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::Class;

    /// Two workers of one workload, each kept apart: the test's interval is the sum of the
    /// workers', and an interval shorter than the minimum (the ragged end) is dropped.
    #[test]
    fn the_test_s_interval_is_the_sum_of_its_workers() {
        let live: Vec<LiveCounters> = (0..2).map(|_| LiveCounters::default()).collect();
        let jobs = [Range { start: 0, end: 2 }];
        let mut s = Series::new(&live, &jobs, &[false], vec![true], 1_000);
        s.open(1_000);
        live[0].add(Class::Read, 100_000, 4096);
        live[0].add(Class::Write, 300_000, 4096);
        live[1].add(Class::Read, 200_000, 4096);
        let (t, _) = s.edge(500_001_000, 100_000_000);
        assert_eq!(t, Some(0.5));
        live[1].add(Class::Read, 200_000, 4096);
        assert_eq!(s.edge(510_001_000, 100_000_000).0, None);
        let test = &s.tests[0];
        assert_eq!(test.len(), 1);
        let (r, w) = (test[0].read.unwrap(), test[0].write.unwrap());
        assert_eq!((r.ios, w.ios), (2, 1));
        assert_eq!(test[0].iops, 6.0, "3 I/Os in half a second");
        let rl = r.lat_us.unwrap();
        assert_eq!((rl.min, rl.mean, rl.max), (100.0, 150.0, 200.0));
        assert_eq!(s.workers[0][0].read.ios + s.workers[1][0].read.ios, r.ios);
        assert_eq!(s.workers[0][0].write.ios, 1);
        assert_eq!(s.workers[1][0].write.lat_us, None);
    }

    #[test]
    fn workers_keep_no_series_unless_asked() {
        let live: Vec<LiveCounters> = (0..1).map(|_| LiveCounters::default()).collect();
        let jobs = [Range { start: 0, end: 1 }];
        let mut s = Series::new(&live, &jobs, &[false], vec![false], 0);
        s.open(0);
        live[0].add(Class::Read, 100_000, 4096);
        s.edge(1_000_000_000, 1);
        assert_eq!(s.tests[0].len(), 1);
        assert!(s.workers[0].is_empty());
    }
}

//! IOPS and MB/s over time, its bursts, and the time-by-offset heat map. Both keep a fixed
//! number of buckets whose width doubles when the trace outgrows them, so memory is bounded.

use iocap_model::workload::{Bursts, Heatmap, Rate, RatePoint};
use iocap_trace::{IoRecord, Op};

use super::depth::MAX_POINTS;

const GRID: usize = 64;

#[derive(Default, Clone, Copy)]
struct Bucket {
    reads: u64,
    writes: u64,
    other: u64,
    bytes: u64,
}

#[derive(Default)]
pub struct RateSeries {
    buckets: Vec<Bucket>,
    bucket_ns: u64,
    /// heat map: GRID columns of `col_ns`, GRID rows of `row_bytes`
    grid: Vec<u32>,
    col_ns: u64,
    row_bytes: u64,
}

impl RateSeries {
    /// `t`: ns since the first issue.
    pub fn push(&mut self, r: &IoRecord, t: u64) {
        if self.bucket_ns == 0 {
            self.bucket_ns = 1_000_000_000;
            self.col_ns = 1_000_000_000;
            self.row_bytes = 16 << 20;
            self.grid = vec![0; GRID * GRID];
        }
        let mut b = (t / self.bucket_ns) as usize;
        while b >= MAX_POINTS {
            self.buckets = self.buckets.chunks(2).map(merge).collect();
            self.bucket_ns *= 2;
            b = (t / self.bucket_ns) as usize;
        }
        if b >= self.buckets.len() {
            self.buckets.resize(b + 1, Bucket::default());
        }
        let k = &mut self.buckets[b];
        match r.op {
            Op::Read => k.reads += 1,
            Op::Write => k.writes += 1,
            _ => k.other += 1,
        }
        k.bytes += u64::from(r.bytes);
        if r.op != Op::Flush {
            self.heat(t, r.offset_bytes());
        }
    }

    fn heat(&mut self, t: u64, offset: u64) {
        while t / self.col_ns >= GRID as u64 {
            self.grid = (0..GRID * GRID)
                .map(|i| {
                    let (row, col) = (i / GRID, i % GRID);
                    let get = |c: usize| {
                        if c < GRID {
                            self.grid[row * GRID + c]
                        } else {
                            0
                        }
                    };
                    if col < GRID / 2 {
                        get(2 * col) + get(2 * col + 1)
                    } else {
                        0
                    }
                })
                .collect();
            self.col_ns *= 2;
        }
        while offset / self.row_bytes >= GRID as u64 {
            self.grid = (0..GRID * GRID)
                .map(|i| {
                    let (row, col) = (i / GRID, i % GRID);
                    let get = |r: usize| {
                        if r < GRID {
                            self.grid[r * GRID + col]
                        } else {
                            0
                        }
                    };
                    if row < GRID / 2 {
                        get(2 * row) + get(2 * row + 1)
                    } else {
                        0
                    }
                })
                .collect();
            self.row_bytes *= 2;
        }
        let (col, row) = (
            (t / self.col_ns) as usize,
            (offset / self.row_bytes) as usize,
        );
        let cell = &mut self.grid[row * GRID + col];
        *cell = cell.saturating_add(1);
    }

    /// The rate and the heat map; the last bucket is scaled to the part of it the trace covers.
    pub fn finish(self, duration_s: f64, max_end_bytes: u64) -> (Rate, Heatmap) {
        let width_s = self.bucket_ns.max(1) as f64 / 1e9;
        let n = self.buckets.len();
        let points: Vec<RatePoint> = self
            .buckets
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let span = if i + 1 == n {
                    (duration_s - i as f64 * width_s).clamp(width_s.min(0.001), width_s)
                } else {
                    width_s
                };
                let all = b.reads + b.writes + b.other;
                RatePoint {
                    iops: all as f64 / span,
                    read_iops: b.reads as f64 / span,
                    write_iops: b.writes as f64 / span,
                    mb_s: b.bytes as f64 / span / 1e6,
                }
            })
            .collect();
        let total: u64 = self
            .buckets
            .iter()
            .map(|b| b.reads + b.writes + b.other)
            .sum();
        let bytes: u64 = self.buckets.iter().map(|b| b.bytes).sum();
        let d = duration_s.max(1e-9);
        let iops_mean = total as f64 / d;
        let iops_peak = points.iter().map(|p| p.iops).fold(0.0, f64::max);
        let mut sorted: Vec<f64> = points.iter().map(|p| p.iops).collect();
        sorted.sort_by(f64::total_cmp);
        let p99 = sorted
            .get(((sorted.len() as f64 * 0.99).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0.0);
        let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
        let rate = Rate {
            bucket_s: width_s,
            iops_mean,
            iops_peak,
            iops_p99: p99,
            mb_s_mean: bytes as f64 / d / 1e6,
            mb_s_peak: points.iter().map(|p| p.mb_s).fold(0.0, f64::max),
            peak_to_mean: if iops_mean > 0.0 {
                iops_peak / iops_mean
            } else {
                0.0
            },
            bursts: bursts(&points, median, width_s),
            per_second: points,
        };
        let cols = ((duration_s * 1e9 / self.col_ns.max(1) as f64).ceil() as usize).clamp(1, GRID);
        let rows = (max_end_bytes.div_ceil(self.row_bytes.max(1)) as usize).clamp(1, GRID);
        let counts = (0..rows)
            .flat_map(|r| (0..cols).map(move |c| (r, c)))
            .map(|(r, c)| self.grid.get(r * GRID + c).copied().unwrap_or(0))
            .collect();
        let heat = Heatmap {
            time_buckets: cols as u32,
            offset_buckets: rows as u32,
            duration_s: cols as f64 * self.col_ns as f64 / 1e9,
            max_offset_bytes: rows as u64 * self.row_bytes,
            counts,
        };
        (rate, heat)
    }
}

fn merge(c: &[Bucket]) -> Bucket {
    c.iter().fold(Bucket::default(), |a, b| Bucket {
        reads: a.reads + b.reads,
        writes: a.writes + b.writes,
        other: a.other + b.other,
        bytes: a.bytes + b.bytes,
    })
}

/// On periods: runs of buckets above twice the median rate (with a floor of 1 IOPS); off
/// periods: the runs between two on periods (the trace's edges say nothing of the cycle).
fn bursts(points: &[RatePoint], median: f64, width_s: f64) -> Bursts {
    let threshold = (2.0 * median).max(1.0);
    let (on_periods, on_s_median, off_s_median) =
        on_off(points.iter().map(|p| p.iops > threshold), width_s);
    let hot: Vec<f64> = points
        .iter()
        .map(|p| p.iops)
        .filter(|&x| x > threshold)
        .collect();
    Bursts {
        threshold_iops: threshold,
        on_periods,
        on_s_median,
        off_s_median,
        on_iops_mean: if hot.is_empty() {
            0.0
        } else {
            hot.iter().sum::<f64>() / hot.len() as f64
        },
    }
}

/// Runs of consecutive "on" buckets of `width_s`: how many, and the median length of the on
/// runs and of the off runs between two on runs (the edges say nothing of the cycle), in s.
pub(super) fn on_off(states: impl Iterator<Item = bool>, width_s: f64) -> (u64, f64, f64) {
    let mut runs: Vec<(bool, usize)> = vec![];
    for on in states {
        match runs.last_mut() {
            Some((state, n)) if *state == on => *n += 1,
            _ => runs.push((on, 1)),
        }
    }
    let mut on: Vec<usize> = runs.iter().filter(|r| r.0).map(|r| r.1).collect();
    let last = runs.len().saturating_sub(1);
    let mut off: Vec<usize> = runs
        .iter()
        .enumerate()
        .filter(|&(i, r)| !r.0 && i > 0 && i < last)
        .map(|(_, r)| r.1)
        .collect();
    let median_s = |v: &mut Vec<usize>| {
        v.sort_unstable();
        v.get(v.len() / 2).map_or(0.0, |&x| x as f64 * width_s)
    };
    (on.len() as u64, median_s(&mut on), median_s(&mut off))
}

//! The workload as streams: one per role (the log, the data files, temp, doublewrite, the file
//! system's journal and metadata, the page cache's write-back, the rest), each described over
//! its own busy seconds. A database's log and its data files run at their own rates, depths
//! and sizes; one mix for them all is what made a profile from a capture run half the recorded
//! rate at a fifth of its depth.
//!
//! Who a request belongs to ([`role_of`]): a write the kernel's flusher threads issued is
//! write-back, whatever file it lands in; a request of the file system's journal thread
//! (`jbd2/...`) or marked as metadata is `fs`; else the role of the file it falls in (the file
//! map); else `other`.
//!
//! Durability: a cache flush makes every write on its device that had completed durable,
//! whichever stream's it was (the device knows no streams); a FUA write is durable itself. A
//! flush carries no address, so who asked for it is told apart by its issuer: the stream of the
//! last write of the process that issued it (an fdatasync's flush follows that process's
//! writes), or, for one the kernel's worker sent on (kblockd sends every flush on recent
//! kernels), the stream that had waited least for a flush (see `Streams::flush`). Who asked
//! gives a stream's flushes and writes per flush (what a profile replays); the durable bytes
//! do not depend on it.
//!
//! Busy time: a stream's per-second buckets in runs of consecutive busy buckets; a run's busy
//! time is the span from its first to its last request, scaled by n/(n−1) for its n requests
//! (an unbiased span for evenly spread arrivals); a run of fewer than ten requests counts its
//! buckets whole (two journal reads a millisecond apart are not a stream at 2,000 IOPS). Rates
//! and depth are over that time.
//!
//! Memory: per stream, at most [`MAX_POINTS`] buckets (their width doubles as a trace outgrows
//! them), its requests in flight, a size table as the workload's, and one histogram.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use hdrhistogram::Histogram;
use iocap_model::workload::{Bursts, Stream, StreamRole};
use iocap_trace::{DevId, IoFlags, IoRecord, Op};

use super::depth::MAX_POINTS;
use super::durable::percentiles;
use super::mix::Mix;
use super::pct;

/// A run of busy buckets with fewer requests than this counts its buckets whole.
const FEW: u64 = 10;
/// Processes remembered for a flush's stream at most.
const MAX_PIDS: usize = 65_536;

/// The role of a request that carries data, given the role of the file it fell in (if any).
pub fn role_of(r: &IoRecord, file_role: Option<StreamRole>) -> StreamRole {
    let comm = &r.comm;
    let starts = |p: &[u8]| comm.starts_with(p);
    if r.op == Op::Write && (starts(b"kworker/") || starts(b"flush-")) {
        StreamRole::Writeback
    } else if starts(b"jbd2/") || r.flags.has(IoFlags::META) {
        StreamRole::Fs
    } else {
        file_role.unwrap_or(StreamRole::Other)
    }
}

#[derive(Default, Clone, Copy)]
struct Bucket {
    rw: u64,
    flushes: u64,
    /// Device time of its reads and writes issued in it.
    lat_ns: u64,
    first_ns: u64,
    last_ns: u64,
}

/// One stream's accumulators.
struct One {
    mix: Mix,
    buckets: Vec<Bucket>,
    bucket_ns: u64,
    in_flight: BinaryHeap<Reverse<u64>>,
    depth_max: u64,
    lat: Histogram<u64>,
    lat_sum_ns: u128,
    has_lat: bool,
    classes: [u64; 3],
    files: std::collections::HashSet<u32, super::Fast>,
    reads: u64,
    writes: u64,
    flushes: u64,
    read_bytes: u64,
    write_bytes: u64,
    fua: u64,
    /// The last issue, and the gaps between issues under a second: count, sum, sum of squares.
    last_issue_ns: Option<u64>,
    gaps: (u64, f64, f64),
    durable_writes: u64,
    durable_bytes: u64,
}

impl Default for One {
    fn default() -> Self {
        One {
            mix: Mix::default(),
            buckets: Vec::new(),
            bucket_ns: 1_000_000_000,
            in_flight: BinaryHeap::new(),
            depth_max: 0,
            lat: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"),
            lat_sum_ns: 0,
            has_lat: false,
            classes: [0; 3],
            files: Default::default(),
            reads: 0,
            writes: 0,
            flushes: 0,
            read_bytes: 0,
            write_bytes: 0,
            fua: 0,
            last_issue_ns: None,
            gaps: (0, 0.0, 0.0),
            durable_writes: 0,
            durable_bytes: 0,
        }
    }
}

impl One {
    fn bucket(&mut self, t: u64) -> &mut Bucket {
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
        if k.rw + k.flushes == 0 {
            k.first_ns = t;
        }
        k.last_ns = t;
        k
    }

    /// A read or write: `seq_class` 0 sequential, 1 near, 2 far.
    fn data(&mut self, r: &IoRecord, t: u64, file: Option<u32>, seq_class: usize) {
        self.mix.push(r);
        if let Some(prev) = self.last_issue_ns.replace(r.issue_ns) {
            let gap = r.issue_ns.saturating_sub(prev) as f64;
            if gap < 1e9 {
                self.gaps.0 += 1;
                self.gaps.1 += gap;
                self.gaps.2 += gap * gap;
            }
        }
        self.classes[seq_class.min(2)] += 1;
        if let Some(f) = file {
            if self.files.len() < 1 << 20 {
                self.files.insert(f);
            }
        }
        let bytes = u64::from(r.bytes);
        match r.op {
            Op::Read => {
                self.reads += 1;
                self.read_bytes += bytes;
            }
            _ => {
                self.writes += 1;
                self.write_bytes += bytes;
                if r.flags.has(IoFlags::FUA) {
                    self.fua += 1;
                    self.durable(1, bytes);
                }
            }
        }
        let lat = r.latency_ns();
        let k = self.bucket(t);
        k.rw += 1;
        if let Some(l) = lat {
            k.lat_ns += l;
        }
        if let (Some(l), Some(done)) = (lat, r.complete_ns) {
            self.has_lat = true;
            self.lat.saturating_record(l.max(1));
            self.lat_sum_ns += u128::from(l);
            while self.in_flight.peek().is_some_and(|d| d.0 <= r.issue_ns) {
                self.in_flight.pop();
            }
            self.in_flight.push(Reverse(done));
            self.depth_max = self.depth_max.max(self.in_flight.len() as u64);
        }
    }

    /// `writes` of this stream, `bytes` in all, became durable.
    fn durable(&mut self, writes: u64, bytes: u64) {
        self.durable_writes += writes;
        self.durable_bytes += bytes;
    }

    fn finish(self, role: StreamRole, duration_s: f64) -> Stream {
        let width_s = self.bucket_ns as f64 / 1e9;
        let busy_s = busy_seconds(&self.buckets, self.bucket_ns).min(duration_s.max(width_s));
        let per = |x: f64| if busy_s > 0.0 { x / busy_s } else { 0.0 };
        let rw = self.reads + self.writes;
        let peak = self
            .buckets
            .iter()
            .max_by_key(|b| b.rw)
            .copied()
            .unwrap_or_default();
        let seq_n: u64 = self.classes.iter().sum();
        let sizes = self.mix.sizes();
        let size_mode_bytes = mode_size(&sizes);
        let groups = self.flushes.max(1) as f64;
        Stream {
            role,
            reads: self.reads,
            writes: self.writes,
            flushes: self.flushes,
            read_bytes: self.read_bytes,
            write_bytes: self.write_bytes,
            files: self.files.len() as u64,
            busy_s,
            iops: per(rw as f64),
            mb_s: per((self.read_bytes + self.write_bytes) as f64) / 1e6,
            peak_iops: peak.rw as f64 / width_s,
            peak_depth: peak.lat_ns as f64 / 1e9 / width_s,
            depth_mean: self.has_lat.then(|| per(self.lat_sum_ns as f64 / 1e9)),
            depth_max: self.depth_max,
            read_pct: pct(self.reads, rw),
            size_mode_bytes,
            sizes,
            sequential_pct: pct(self.classes[0], seq_n),
            near_pct: pct(self.classes[1], seq_n),
            flushes_per_s: per((self.flushes + self.fua) as f64),
            fua_writes: self.fua,
            writes_per_flush: if self.flushes > 0 {
                (self.writes - self.fua) as f64 / groups
            } else {
                0.0
            },
            bytes_per_flush: if self.flushes > 0 {
                (self.write_bytes as f64 - self.fua_bytes_guess()) / groups
            } else {
                0.0
            },
            durable_bytes_per_s: per(self.durable_bytes as f64),
            arrival_cv: cv(self.gaps),
            bursts: bursts(&self.buckets, width_s, per(rw as f64)),
            latency: self.has_lat.then(|| percentiles(&self.lat)),
        }
    }

    /// FUA writes' bytes are durable on their own, not by a flush: left out of bytes per flush.
    /// Their sizes are not kept apart, so the stream's mean write size stands for them.
    fn fua_bytes_guess(&self) -> f64 {
        if self.writes == 0 {
            0.0
        } else {
            self.fua as f64 * self.write_bytes as f64 / self.writes as f64
        }
    }
}

/// The coefficient of variation of the gaps `(n, sum, sum of squares)`; `None` under 100.
fn cv((n, sum, sq): (u64, f64, f64)) -> Option<f64> {
    if n < 100 || sum <= 0.0 {
        return None;
    }
    let mean = sum / n as f64;
    let var = (sq / n as f64 - mean * mean).max(0.0);
    Some(var.sqrt() / mean)
}

/// Two neighbouring buckets as one.
fn merge(c: &[Bucket]) -> Bucket {
    let live = || c.iter().filter(|k| k.rw + k.flushes > 0);
    Bucket {
        rw: c.iter().map(|k| k.rw).sum(),
        flushes: c.iter().map(|k| k.flushes).sum(),
        lat_ns: c.iter().map(|k| k.lat_ns).sum(),
        first_ns: live().next().map_or(0, |k| k.first_ns),
        last_ns: live().next_back().map_or(0, |k| k.last_ns),
    }
}

/// The commonest read or write size over both operations.
fn mode_size(sizes: &[iocap_model::workload::SizeCount]) -> u64 {
    let mut by: HashMap<u64, u64> = HashMap::new();
    for s in sizes
        .iter()
        .filter(|s| s.size_bytes > 0 && s.op.moves_data())
    {
        *by.entry(s.size_bytes).or_default() += s.count;
    }
    by.into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map_or(0, |(s, _)| s)
}

/// The busy time of a stream's buckets (see the module's doc).
fn busy_seconds(buckets: &[Bucket], bucket_ns: u64) -> f64 {
    let mut total = 0.0;
    let mut i = 0;
    while i < buckets.len() {
        if buckets[i].rw + buckets[i].flushes == 0 {
            i += 1;
            continue;
        }
        let start = i;
        let mut n = 0u64;
        while i < buckets.len() && buckets[i].rw + buckets[i].flushes > 0 {
            n += buckets[i].rw + buckets[i].flushes;
            i += 1;
        }
        let span = buckets[i - 1]
            .last_ns
            .saturating_sub(buckets[start].first_ns) as f64
            / 1e9;
        let run_len = (i - start) as f64 * bucket_ns as f64 / 1e9;
        // a handful of requests says nothing of how long the stream was busy between them:
        // their buckets count whole
        let busy = if n >= FEW {
            span * n as f64 / (n - 1) as f64
        } else {
            run_len
        };
        total += busy.min(run_len);
    }
    total
}

/// On periods: runs of buckets in which the stream was busy; off periods: the gaps between two.
fn bursts(buckets: &[Bucket], width_s: f64, on_iops: f64) -> Bursts {
    let busy = buckets.iter().map(|b| b.rw + b.flushes > 0);
    let (on_periods, on_s_median, off_s_median) = super::rate::on_off(busy, width_s);
    Bursts {
        threshold_iops: 1.0 / width_s,
        on_periods,
        on_s_median,
        off_s_median,
        on_iops_mean: on_iops,
    }
}

/// Every stream's accumulators, and who a flush belongs to.
#[derive(Default)]
pub struct Streams {
    by_role: HashMap<StreamRole, One, super::Fast>,
    last_write_by_pid: HashMap<u32, StreamRole, super::Fast>,
    last_write_by_dev: HashMap<DevId, StreamRole, super::Fast>,
    /// Per device, the writes not yet made durable: (completion, bytes, stream), at most
    /// [`MAX_PENDING`] (the oldest dropped beyond: a device never flushed makes none durable).
    pending: HashMap<DevId, VecDeque<(u64, u64, StreamRole)>, super::Fast>,
}

/// Writes awaiting a flush per device at most.
const MAX_PENDING: usize = 65_536;

impl Streams {
    /// A read or write (its role decided by [`role_of`]), or a flush.
    pub fn push(&mut self, r: &IoRecord, t: u64, role: StreamRole, file: Option<u32>, seq: usize) {
        match r.op {
            // a write without data is the flush machinery's envelope of a preflush (its flush
            // is a request of its own): neither a write nor a second flush
            Op::Write if r.bytes == 0 => {}
            Op::Read | Op::Write => {
                if r.op == Op::Write {
                    if self.last_write_by_pid.len() < MAX_PIDS
                        || self.last_write_by_pid.contains_key(&r.pid)
                    {
                        self.last_write_by_pid.insert(r.pid, role);
                    }
                    if role != StreamRole::Writeback {
                        self.last_write_by_dev.insert(r.dev, role);
                    }
                    if r.flags.has(IoFlags::PREFLUSH) {
                        self.flush(r, t, Some(role));
                    }
                    if !r.flags.has(IoFlags::FUA) {
                        let q = self.pending.entry(r.dev).or_default();
                        if q.len() == MAX_PENDING {
                            q.pop_front();
                        }
                        let done = r.complete_ns.unwrap_or(r.issue_ns);
                        q.push_back((done, u64::from(r.bytes), role));
                    }
                }
                self.by_role.entry(role).or_default().data(r, t, file, seq);
            }
            Op::Flush => {
                let kernel = r.comm.starts_with(b"kworker/");
                let asked = (!kernel)
                    .then(|| self.last_write_by_pid.get(&r.pid).copied())
                    .flatten();
                self.flush(r, t, asked);
            }
            _ => {}
        }
    }

    /// A cache flush of `r.dev` issued at `r.issue_ns`: every write there that had completed
    /// is durable now, whoever's it was. It counts as a flush of the stream that `asked` (the
    /// issuing process's), else, for one the kernel's worker sent on, of the stream that had
    /// waited least for it: whose oldest write awaiting a flush completed last (a log writer
    /// syncs right after its write; a table's write-back waits for a checkpoint). Which of
    /// several streams asked, the kernel does not say; the bytes made durable do not depend on
    /// it.
    fn flush(&mut self, r: &IoRecord, t: u64, asked: Option<StreamRole>) {
        let mut oldest: Vec<(StreamRole, u64)> = Vec::new();
        if let Some(q) = self.pending.get_mut(&r.dev) {
            let by_role = &mut self.by_role;
            q.retain(|&(done, bytes, role)| {
                if done > r.issue_ns {
                    return true;
                }
                by_role.entry(role).or_default().durable(1, bytes);
                match oldest.iter_mut().find(|o| o.0 == role) {
                    Some(o) => o.1 = o.1.min(done),
                    None => oldest.push((role, done)),
                }
                false
            });
        }
        let owner = asked
            .or_else(|| oldest.iter().max_by_key(|o| o.1).map(|o| o.0))
            .or_else(|| self.last_write_by_dev.get(&r.dev).copied())
            .unwrap_or(role_of(r, None));
        let one = self.by_role.entry(owner).or_default();
        one.flushes += 1;
        one.bucket(t).flushes += 1;
    }

    /// The streams, busiest (most requests) first.
    pub fn finish(self, duration_s: f64) -> Vec<Stream> {
        let mut v: Vec<Stream> = self
            .by_role
            .into_iter()
            .map(|(role, one)| one.finish(role, duration_s))
            .collect();
        v.sort_by(|a, b| {
            (b.reads + b.writes + b.flushes)
                .cmp(&(a.reads + a.writes + a.flushes))
                .then(a.role.cmp(&b.role))
        });
        v
    }
}

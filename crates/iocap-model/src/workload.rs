//! What a recorded workload is, in the seed method's terms (`iocap characterise`, and the end
//! of `iocap capture`): the mix, the sizes, how random, the queue depth, the rate over time and
//! its bursts, flushes, latencies, the working set and who issued it. Built from a trace by
//! `iocap_assess::workload`; saved like any run (`RunResult::workload`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A workload described.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Workload {
    /// Where the trace came from: `capture`, `blktrace`, `fio-iolog-v2`, `fio-iolog-v3`.
    pub source: String,
    /// The trace file(s) read.
    pub files: Vec<String>,
    /// The devices the requests went to (`vda`, or `major:minor`).
    pub devices: Vec<String>,
    /// What the capture was asked to record (a device or a path), and its filters.
    pub target: String,
    pub filters: Vec<String>,
    /// False when the trace ended early (a capture killed before its end, a damaged file):
    /// the figures cover what was read.
    pub complete: bool,
    /// The error that ended the reading early, if any.
    pub read_error: Option<String>,
    /// Requests the capture could not record: the ring buffer was full; other causes.
    pub lost_ring_full: u64,
    pub lost_other: u64,
    /// Requests described.
    pub records: u64,
    /// The time described: a capture's own length when the trace records it (its idle seconds
    /// are part of the workload), else from the first issue to the last issue or completion.
    pub duration_s: f64,
    /// Whether the trace has completion times (fio's iolog has none: queue depth, latency and
    /// durability are then absent).
    pub has_completions: bool,
    pub mix: Vec<OpShare>,
    /// Request sizes per operation: the most frequent sizes, then one `other` row
    /// (`size_bytes` 0) for the rest.
    pub sizes: Vec<SizeCount>,
    pub randomness: Randomness,
    pub queue_depth: Option<QueueDepth>,
    pub rate: Rate,
    pub durability: Durability,
    /// Latency percentiles per operation and size class; empty without completions.
    pub latency: Vec<LatencyRow>,
    pub working_set: WorkingSet,
    /// Requests per process name, the busiest first; the last row `others` when cut.
    pub processes: Vec<ProcessRow>,
    /// Requests by time and offset, for the heat map.
    pub heatmap: Heatmap,
    /// The files the requests were attributed to (`capture --files`, `characterise --files`);
    /// absent when the trace has no file map (the streams are then told apart only by who
    /// issued them, and `file_map_note` says why there is none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_map: Option<FileMapInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_map_note: Option<String>,
    /// The workload as streams: one per role, the page cache's write-back on its own, busiest
    /// first. Each stream's rates and depth are over its own busy seconds.
    #[serde(default)]
    pub streams: Vec<Stream>,
    /// The workload placed on a storage's capacity curve (`characterise --against RUN`);
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headroom: Option<Headroom>,
}

/// What a stream's requests were for: the role of the file they fell in (`log`: pg_wal,
/// InnoDB's redo, SQLite's `-wal`; `data`; `temp`; `doublewrite`: InnoDB's doublewrite
/// buffer), the file system's own journal and metadata (`fs`), writes the kernel's flusher
/// threads issued for the page cache (`writeback`), or none of these (`other`: outside every
/// mapped file, or any request of a trace without a file map).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum StreamRole {
    Log,
    Data,
    Temp,
    Doublewrite,
    Fs,
    Writeback,
    #[default]
    Other,
}

impl StreamRole {
    pub const ALL: [StreamRole; 7] = [
        StreamRole::Log,
        StreamRole::Data,
        StreamRole::Temp,
        StreamRole::Doublewrite,
        StreamRole::Fs,
        StreamRole::Writeback,
        StreamRole::Other,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            StreamRole::Log => "log",
            StreamRole::Data => "data",
            StreamRole::Temp => "temp",
            StreamRole::Doublewrite => "doublewrite",
            StreamRole::Fs => "fs",
            StreamRole::Writeback => "writeback",
            StreamRole::Other => "other",
        }
    }

    /// By name (`log`, `data`, ...).
    pub fn parse(s: &str) -> Option<StreamRole> {
        Self::ALL.into_iter().find(|r| r.name() == s)
    }
}

impl std::fmt::Display for StreamRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The file map a trace was described with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct FileMapInfo {
    /// `capture`: read while the capture ran (at its start, as files appeared or grew, and at
    /// its end); `characterise`: read when the trace was described, so files moved since the
    /// recording are attributed where they lie now.
    pub read_by: String,
    /// The directories mapped.
    pub dirs: Vec<String>,
    /// Files mapped, and their extents.
    pub files: u64,
    pub extents: u64,
    /// Files per role, by the rules of docs/capture.md (`log`, `data`, ...).
    pub files_per_role: Vec<RoleCount>,
    /// Reads and writes that fell in a mapped file.
    pub mapped_pct: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct RoleCount {
    pub role: String,
    pub count: u64,
}

/// One stream: the requests of one role. Rates, depth and durability are over the stream's
/// busy seconds (the seconds in which it issued at least one request), so that a log written
/// in bursts reads as what it does while it writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Stream {
    pub role: StreamRole,
    /// Reads, writes, and the flushes it asked for (the issuing process's stream; for a flush
    /// the kernel's worker sent on, the stream that had waited least for one).
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Distinct files it touched (0 without a file map).
    pub files: u64,
    /// Seconds in which it issued at least one request, of `duration_s`.
    pub busy_s: f64,
    /// Reads and writes per busy second, and MB/s (10^6 bytes) over them.
    pub iops: f64,
    pub mb_s: f64,
    /// The busiest second: its reads and writes, and its mean depth.
    pub peak_iops: f64,
    pub peak_depth: f64,
    /// Requests of this stream in flight at the device, time-weighted over its busy seconds
    /// (the sum of its requests' device times over the busy time); absent without completions.
    pub depth_mean: Option<f64>,
    /// The most of its requests in flight at once.
    pub depth_max: u64,
    /// Reads of reads and writes, by count.
    pub read_pct: f64,
    /// The commonest read or write size, and the sizes (per operation, the commonest first,
    /// then an `other` row).
    pub size_mode_bytes: u64,
    pub sizes: Vec<SizeCount>,
    /// Requests that start where the previous one to the same file (without a file map: from
    /// the same process) ended, and within 1 MiB of it.
    pub sequential_pct: f64,
    pub near_pct: f64,
    /// Flushes it asked for (and FUA writes) per busy second; its writes (not FUA) and their
    /// bytes per flush it asked for.
    pub flushes_per_s: f64,
    pub fua_writes: u64,
    pub writes_per_flush: f64,
    pub bytes_per_flush: f64,
    /// Bytes made durable per busy second: its writes that a cache flush of their device (any
    /// stream's) followed after they completed, and its FUA writes.
    pub durable_bytes_per_s: f64,
    /// How its requests arrive while busy: the coefficient of variation of the gaps between
    /// one issue and the next (gaps under a second): about 0 evenly spaced, about 1 independent
    /// (Poisson) arrivals, above 1 in batches. Absent with fewer than 100 gaps.
    #[serde(default)]
    pub arrival_cv: Option<f64>,
    /// Its own on/off periods.
    pub bursts: Bursts,
    /// Device latency of its reads and writes; absent without completions.
    pub latency: Option<Percentiles>,
}

/// One operation's share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct OpShare {
    /// `read`, `write`, `flush`, `discard`, `write-zeroes`, `other`.
    pub op: crate::request::Op,
    pub count: u64,
    pub bytes: u64,
    pub count_pct: f64,
    pub bytes_pct: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct SizeCount {
    pub op: crate::request::Op,
    /// The request size; 0 for the `other` row.
    pub size_bytes: u64,
    pub count: u64,
    /// Of this operation's requests.
    pub pct: f64,
}

/// How far each request starts from where the previous one of its stream ended. A stream is a
/// device and a process (pid): a database's processes each read or write their own way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Randomness {
    /// Requests that start exactly where their stream's previous one ended.
    pub sequential_pct: f64,
    /// Within 1 MiB of it (read-ahead windows, a checkpoint's sorted writes).
    pub near_pct: f64,
    /// Further.
    pub far_pct: f64,
    pub streams: u64,
    /// Distance classes (`0`, `<64K`, `<1M`, `<64M`, `<1G`, `>=1G`) and their counts.
    pub distance: Vec<DistanceClass>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct DistanceClass {
    pub class: String,
    pub count: u64,
}

/// Requests in flight at the device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct QueueDepth {
    /// Time-weighted: the share of busy-or-idle time spent at each depth; and the share of
    /// requests that found that many in flight when issued (themselves included).
    pub depths: Vec<DepthShare>,
    pub mean: f64,
    pub max: u64,
    /// The depth the device spent most of its busy time at (a closed loop at qd 4 that
    /// submits in batches issues at 1, 2, 3 and 4 alike, but sits at 4).
    pub typical: u64,
    /// Per second (the same seconds as [`Rate::per_second`]): mean and max depth.
    pub per_second_mean: Vec<f64>,
    pub per_second_max: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct DepthShare {
    /// The depth; the last row holds every depth from it up.
    pub depth: u64,
    pub time_pct: f64,
    pub issued_pct: f64,
}

/// IOPS and MB/s over time, and the bursts in them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Rate {
    /// The width of one point of the series: 1 s, doubled as often as needed to keep at most
    /// 3,600 points.
    pub bucket_s: f64,
    pub per_second: Vec<RatePoint>,
    pub iops_mean: f64,
    pub iops_peak: f64,
    /// The 99th-percentile bucket: a rate the workload reaches often enough to plan for.
    pub iops_p99: f64,
    pub mb_s_mean: f64,
    pub mb_s_peak: f64,
    /// Peak over mean IOPS.
    pub peak_to_mean: f64,
    pub bursts: Bursts,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct RatePoint {
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub mb_s: f64,
}

/// On/off periods: buckets above twice the median rate are "on" (a checkpoint, a batch), the
/// rest "off".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Bursts {
    pub threshold_iops: f64,
    pub on_periods: u64,
    pub on_s_median: f64,
    pub off_s_median: f64,
    /// The on periods' mean rate.
    pub on_iops_mean: f64,
}

/// Flushes, FUA writes, and how long a write took to become durable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Durability {
    pub flushes: u64,
    pub fua_writes: u64,
    pub flush_per_s: f64,
    pub fua_per_s: f64,
    /// Writes made durable by a later flush on their device, from the write's issue to that
    /// flush's completion (a log write then its fdatasync), and FUA writes issue to completion.
    pub durable_writes: u64,
    pub durable_latency: Option<Percentiles>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Percentiles {
    /// The mean (iostat's `r_await`/`w_await` are means of the same device time).
    #[serde(default)]
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct LatencyRow {
    pub op: crate::request::Op,
    /// `<=4K`, `<=16K`, `<=64K`, `<=256K`, `>256K`, or `all` for the operation as a whole.
    pub size_class: String,
    pub count: u64,
    pub latency: Percentiles,
    /// The share of this row's requests at or below each latency (µs), for the CDF chart:
    /// (latency_us, pct) points.
    pub cdf: Vec<(f64, f64)>,
}

/// Distinct bytes touched, at 4 KiB granularity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct WorkingSet {
    pub distinct_bytes: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
    /// Past a million 1 MiB regions touched (a terabyte) new regions are no longer tracked:
    /// the figures are then lower bounds.
    pub capped: bool,
    /// (seconds, distinct bytes so far), up to 60 points.
    pub over_time: Vec<(f64, u64)>,
    /// Which cache below the OS the working set fits in, when a cache scan is known.
    pub fits: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct ProcessRow {
    pub comm: String,
    pub count: u64,
    pub bytes: u64,
    pub read_pct: f64,
}

/// Counts of requests by time (columns) and offset (rows, from 0 to `max_offset_bytes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Heatmap {
    pub time_buckets: u32,
    pub offset_buckets: u32,
    pub duration_s: f64,
    pub max_offset_bytes: u64,
    /// Row-major: `counts[offset_bucket * time_buckets + time_bucket]`.
    pub counts: Vec<u32>,
}

/// The workload's busiest seconds placed on a saved `saturate` curve: how many times their
/// load the storage takes before it reaches its knee, per resource. Built by
/// `iocap_assess::headroom`; docs/capture.md ("Headroom") says how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Headroom {
    /// The run whose curve the workload is held against.
    pub against_run_id: String,
    /// The curve's workload: its `rw` mode, request size and write share.
    pub curve_rw: String,
    pub curve_bs_bytes: u64,
    pub curve_write_pct: u8,
    /// The workload's commonest read or write size, and its write share by requests.
    pub workload_bs_bytes: u64,
    pub workload_write_pct: f64,
    /// False when the workload's commonest size is not the curve's: the comparison is then
    /// across sizes (each resource against its own measure, the lesser headroom standing).
    pub same_size: bool,
    /// Whether the curve flattened. Without a knee its highest step stands for it, and every
    /// headroom is a lower bound ("at least").
    pub knee_reached: bool,
    /// The knee (or the highest step): requests in flight, IOPS, MB/s, latency.
    pub knee_outstanding: u32,
    pub knee_iops: f64,
    pub knee_mb_s: f64,
    pub knee_lat_us_p50: Option<f64>,
    pub knee_lat_us_p99: Option<f64>,
    /// The busiest bucket and the 99th-percentile bucket of the workload (each resource's own).
    pub busiest: Placement,
    pub p99_second: Placement,
    /// The width of the workload's rate buckets (1 s unless the trace was long).
    pub bucket_s: f64,
    /// The curve at the workload's own queue depth (interpolated between steps): the busiest
    /// bucket's mean depth, or where the trace has no per-bucket depths its typical depth
    /// (`at_depth.depth_source` says which); absent when the trace has no completion times.
    pub at_depth: Option<AtDepth>,
    /// What runs out first at the busiest bucket: `iops`, `mb_s` or `latency` (the curve's
    /// IOPS at the workload's own depth).
    pub limit: String,
    /// The busiest bucket's headroom on that resource: the least of the three.
    pub headroom: f64,
    /// What the comparison cannot see, in words (a read curve for a write workload, ...).
    pub notes: Vec<String>,
    /// Whether every headroom is a lower bound ("at least"): the curve never flattened, or the
    /// run was cut short (`partial_run`).
    #[serde(default)]
    pub lower_bound: bool,
    /// Why the run's curve is partial, in words (`interrupted by SIGINT (Ctrl-C)`, `its step at
    /// qd 8 stopped on an I/O error: ...`); absent for a whole run. The steps that did not run
    /// to their end are left off the curve, and every headroom is a lower bound.
    #[serde(default)]
    pub partial_run: Option<String>,
    /// The verdict at the busiest bucket: `fits` (headroom 1 or more), `at_least` (a lower
    /// bound of 1 or more), `falls_behind` (under 1, on a whole curve: for `latency`, the
    /// workload would queue deeper than when recorded), `none` (a lower bound under 1: a curve
    /// that stopped short cannot say that the storage falls behind). Empty in runs saved
    /// before it was recorded.
    #[serde(default)]
    pub verdict: String,
    /// Each of the workload's streams (`workload.streams`) on the same curve, alone, at its own
    /// depth; empty when the workload has no streams.
    #[serde(default)]
    pub streams: Vec<StreamHeadroom>,
}

/// One stream of the workload on the curve, as if it ran alone: its busiest second's demand
/// against the curve at the depth it ran at (a log at queue depth 1: its writer waits on each
/// flush) and against the knee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(default)]
pub struct StreamHeadroom {
    pub role: StreamRole,
    /// Its busiest second's reads and writes (`peak_iops`), and their MB/s at the stream's
    /// mean bytes per request.
    pub iops: f64,
    pub mb_s: f64,
    /// Its commonest read or write size.
    pub size_bytes: u64,
    /// The depth it is judged at (requests of the stream in flight), and why that one: `log`
    /// (1, whatever the log recorded), `stream_peak` (its busiest second's mean depth),
    /// `stream_mean` (its mean depth over its busy seconds, where the busiest second's is not
    /// known); absent without completion times (the knee alone then judges it). Read at 1
    /// at the least.
    pub depth: Option<f64>,
    pub depth_source: String,
    /// The curve at that depth: IOPS, MB/s and latency (interpolated between steps), and
    /// whether the depth is outside the curve's steps (the nearest stands for it).
    pub curve_iops: Option<f64>,
    pub curve_mb_s: Option<f64>,
    pub curve_lat_us_p50: Option<f64>,
    pub curve_lat_us_p99: Option<f64>,
    pub outside_curve: bool,
    /// The knee's IOPS and MB/s over the stream's.
    pub iops_headroom: Option<f64>,
    pub mb_s_headroom: Option<f64>,
    /// The curve's IOPS and MB/s at the stream's depth over the stream's, the lesser.
    pub depth_headroom: Option<f64>,
    /// What runs out first for it (`iops`, `mb_s`, `latency`: the curve at its depth) and the
    /// headroom there, the least of the three; absent for a stream with no reads or writes.
    pub limit: String,
    pub headroom: Option<f64>,
    /// As the workload's `verdict`: `fits`, `at_least`, `falls_behind`, `none`.
    pub verdict: String,
    /// False when the curve's workload is not the stream's (random reads against sequential
    /// durable writes, ...): the curve cannot speak for it, and a note says why.
    pub curve_matches: bool,
    pub notes: Vec<String>,
}

/// One of the workload's buckets on the curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Placement {
    /// Reads and writes per second (flushes and discards are not on a saturate curve), and
    /// MB/s.
    pub iops: f64,
    pub mb_s: f64,
    /// The knee's IOPS and MB/s over these; below 1 the storage falls behind. Absent when the
    /// bucket needs none of it.
    pub iops_headroom: Option<f64>,
    pub mb_s_headroom: Option<f64>,
}

/// The curve at the workload's own queue depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct AtDepth {
    /// The depth the curve is read at, rounded, and at least 1 (`depth` unrounded).
    pub outstanding: u64,
    pub iops: f64,
    pub lat_us_p50: Option<f64>,
    pub lat_us_p99: Option<f64>,
    /// The IOPS there over the busiest bucket's: more load than this queues deeper and waits
    /// longer.
    pub iops_headroom: f64,
    /// Set when the depth is outside the curve's steps: the nearest step stands for it.
    pub outside_curve: bool,
    /// The depth the curve is read at, unrounded (requests in flight at the device, at least
    /// 1), and where it came from: `busiest_second` (the busiest bucket's own mean depth),
    /// `typical` (the depth the device spent most of its busy time at, for a trace without
    /// per-bucket depths). Absent (0 and empty) in runs saved before it was recorded, which
    /// read the typical depth.
    #[serde(default)]
    pub depth: f64,
    #[serde(default)]
    pub depth_source: String,
    /// The curve's MB/s there.
    #[serde(default)]
    pub mb_s: f64,
}

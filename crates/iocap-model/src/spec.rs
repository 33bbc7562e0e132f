//! What a test asks for. A [`JobSpec`] is built by a front end (`iocap run` flags, SQLIO flags,
//! later suite files), validated here without touching the system, and only then resolved
//! against the real targets by the engine. Keeping it pure makes every rule unit-testable.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Smallest and largest block size iocap accepts.
pub const MIN_BS_BYTES: u64 = 512;
pub const MAX_BS_BYTES: u64 = 64 << 20;
/// Upper bound on outstanding I/Os per thread per target.
pub const MAX_QD: u32 = 4096;
/// Upper bound on threads per target.
pub const MAX_THREADS: u32 = 1024;
/// The most intervals a test keeps per worker, summed over its workers (`interval_ms`): about
/// 100 MB of result. An hour at 1 s on 64 threads is 230,400.
pub const MAX_KEPT_INTERVALS: u64 = 500_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    Rw,
    RandRw,
}

impl RwMode {
    /// Every workload, in the order the help and shell completion offer them.
    pub const ALL: [RwMode; 6] = [
        Self::Read,
        Self::Write,
        Self::RandRead,
        Self::RandWrite,
        Self::Rw,
        Self::RandRw,
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.to_ascii_lowercase().as_str() {
            "read" => Self::Read,
            "write" => Self::Write,
            "randread" => Self::RandRead,
            "randwrite" => Self::RandWrite,
            "rw" | "readwrite" => Self::Rw,
            "randrw" => Self::RandRw,
            _ => return None,
        })
    }
    pub const fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::RandRead => "randread",
            Self::RandWrite => "randwrite",
            Self::Rw => "rw",
            Self::RandRw => "randrw",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(self, Self::RandRead | Self::RandWrite | Self::RandRw)
    }
    pub fn is_mixed(self) -> bool {
        matches!(self, Self::Rw | Self::RandRw)
    }
    /// The write share of this workload: 0 for reads, 100 for writes, `mixed` for a mix.
    pub fn write_pct(self, mixed: u8) -> u8 {
        match self {
            Self::Read | Self::RandRead => 0,
            Self::Write | Self::RandWrite => 100,
            Self::Rw | Self::RandRw => mixed,
        }
    }
}

// The names a user types are the system's own (`crate::engines`): on Windows `auto` and `iocp`
// are `Auto` (the I/O completion ports, always there) and `sync` is `Psync`.
/// The engine a test asks for, stored by these names on both systems (Windows' `iocp` is
/// `auto`, its `sync` is `psync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum EngineChoice {
    /// io_uring where a ring can be set up, else psync (on Windows: IOCP).
    #[default]
    Auto,
    /// io_uring with the file and the I/O buffers registered. (`iocap cost` runs saved before
    /// 2026-11-27 call it `io_uring_registered`.)
    #[serde(alias = "io_uring_registered")]
    IoUring,
    /// The synchronous engine: pread/pwrite on Linux, positioned ReadFile/WriteFile on Windows.
    Psync,
    /// io_uring without registering the file or the I/O buffers (plain READ/WRITE on the fd),
    /// as fio's io_uring engine runs by default; `iocap cost` compares it with the registered
    /// default.
    IoUringUnregistered,
}

/// How a throttled test spaces its I/O starts (`--rate-process`, fio's `rate_process`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum RateProcess {
    /// Evenly spaced, one interval apart: the latency is the device's at a steady load.
    #[default]
    Linear,
    /// Exponential gaps with the same mean (a Poisson process): independent clients, as a
    /// database's arrive; queues form now and then even below the device's capacity.
    Poisson,
}

impl RateProcess {
    pub fn name(self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::Poisson => "poisson",
        }
    }
}

/// When new I/Os reach the kernel (io_uring; psync issues each I/O as it goes anyway).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum SubmitMode {
    /// Try both during the warm-up, alternating them in short slices on every worker at once,
    /// and keep the one that completed more I/Os (batch on a tie: it costs less CPU). Neither
    /// mode is right everywhere: on one thread a virtual disk that answers batches in bunches is
    /// kept busiest by `each`; with more threads than cores the extra system calls of `each`
    /// take CPU the I/O needs, and `batch` wins.
    #[default]
    Auto,
    /// The I/Os freed by one reap are submitted together, in the call that waits for the next
    /// completion: one system call per loop, the least CPU per I/O.
    Batch,
    /// Each I/O is submitted as soon as its slot is free, with its own `io_uring_enter`, as
    /// fio does by default (`iodepth_batch_submit=1`). On a virtual disk that handles a batch of
    /// requests before it signals any of them, this keeps the device busiest.
    Each,
}

impl SubmitMode {
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Each => "each",
            Self::Batch => "batch",
        }
    }

    /// The mode of a name ([`SubmitMode::name`]).
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Auto, Self::Batch, Self::Each]
            .into_iter()
            .find(|m| m.name() == s)
    }

    /// What a stored spec without the field ran: results saved before `submit` existed
    /// submitted in batches.
    pub fn legacy() -> Self {
        Self::Batch
    }
}

/// Run the measured window past `duration_s` until the 95 % confidence interval of the IOPS is
/// within `ci_pct` of the mean (`--until-stable PCT[:MAX]`), or until it is `max_s` long.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UntilStable {
    /// Largest half-width of the interval, in percent of the mean.
    pub ci_pct: f64,
    /// Longest measured window, in seconds; at least `duration_s`.
    pub max_s: f64,
}

/// One file or block device of a test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetSpec {
    pub path: String,
    /// Size of the test range; for a new file, the size it is created at. `None`: the job's
    /// `size_bytes` for new files, the whole file or device otherwise.
    pub size_bytes: Option<u64>,
    /// Threads on this target; `None`: the job's `threads`.
    pub threads: Option<u32>,
    /// CPU affinity mask for this target's threads (SQLIO param files); 0 or `None`: no pinning.
    pub cpu_mask: Option<u64>,
}

impl TargetSpec {
    pub fn new(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            size_bytes: None,
            threads: None,
            cpu_mask: None,
        }
    }

    /// A target for each path, or the default test file ([`crate::DEFAULT_TARGET`]) without
    /// any: a command's TARGET arguments.
    pub fn each_or_default(paths: &[String]) -> Vec<TargetSpec> {
        match paths {
            [] => vec![TargetSpec::new(crate::DEFAULT_TARGET)],
            _ => paths.iter().map(TargetSpec::new).collect(),
        }
    }
}

/// One block size of a mix (`--bs-split 8K:70,64K:30`) and its share of the I/Os.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BsWeight {
    pub bs_bytes: u64,
    /// Relative share; the shares of a mix need not add up to 100.
    pub weight: u32,
}

/// Issue in bursts, like a checkpoint: `on_s` seconds at full speed, then `off_s` idle.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Burst {
    pub on_s: f64,
    pub off_s: f64,
}

/// The full description of one test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JobSpec {
    pub name: String,
    pub targets: Vec<TargetSpec>,
    pub rw: RwMode,
    /// Share of writes in percent: 0 for pure reads, 100 for pure writes, `--write-pct` for mixes.
    pub write_pct: u8,
    pub bs_bytes: u64,
    /// Outstanding I/Os per thread per target.
    pub qd: u32,
    /// Threads per target (unless the target says otherwise).
    pub threads: u32,
    /// Size at which missing test files are created.
    pub size_bytes: u64,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub cooldown_s: f64,
    pub seed: u64,
    /// Alignment of random offsets; defaults to the block size.
    pub align_bytes: u64,
    /// Total I/O rate limit for the whole test, spread evenly over its threads.
    pub rate_iops: Option<f64>,
    /// Total bandwidth limit in MB/s (10^6 bytes), turned into an I/O rate.
    pub rate_mb_s: Option<f64>,
    /// How throttled I/O starts are spaced (with `rate_iops` or `rate_mb_s`).
    #[serde(default)]
    pub rate_process: RateProcess,
    /// O_DIRECT (true) or the page cache.
    pub direct: bool,
    /// O_DSYNC: every write is durable when it completes.
    pub write_through: bool,
    /// Issue an fsync after every N writes per thread; 0: never.
    pub fsync_every: u32,
    /// That sync is fdatasync(2) (as PostgreSQL's WAL and most logs flush), not fsync(2),
    /// which also writes the file's times and so commits the file system's journal each time.
    #[serde(default, skip_serializing_if = "is_false")]
    pub datasync: bool,
    pub engine: EngineChoice,
    /// Permit writes to files and devices iocap did not create.
    pub allow_overwrite: bool,
    /// A block-size mix; empty: every I/O is `bs_bytes`. When set, `bs_bytes` is the largest
    /// size of the mix (buffers and range checks use it).
    #[serde(default)]
    pub bs_split: Vec<BsWeight>,
    /// Issue in bursts instead of continuously.
    #[serde(default)]
    pub burst: Option<Burst>,
    /// When io_uring I/Os are submitted: chosen by a trial in the warm-up (`auto`, the
    /// default), in batches, or each at once.
    #[serde(default = "SubmitMode::legacy")]
    pub submit: SubmitMode,
    /// Measure for at least `duration_s`, then on until the IOPS are known this well.
    #[serde(default)]
    pub until_stable: Option<UntilStable>,
    /// Share of each 4 KiB block written that is zeros, so a compressor saves about this much
    /// (`--compressible`, fio's `buffer_compress_percentage`); 0: incompressible.
    #[serde(default)]
    pub compressible_pct: u8,
    /// Share of the 4 KiB blocks written that duplicate other blocks (`--dedupe`, fio's
    /// `dedupe_percentage`); 0: every block unique.
    #[serde(default)]
    pub dedupe_pct: u8,
    /// Sequential streams laid out as DiskSpd lays them (`-s<stride>`, `-T`, `-si`); `None`:
    /// iocap's own, where each thread's stream starts at an evenly spread offset, advances by
    /// each I/O's length and starts again at 0 at the end of the range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<SeqStreams>,
    /// The interval of the series in milliseconds (DiskSpd's `-D<ms>`), with a series kept
    /// for each worker too (`TestResult.workers[].intervals`); `None`: one interval a second,
    /// kept for the test only. The series' rates stay per second whatever the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ms: Option<u32>,
    /// Where every target's test range starts, in bytes from its start (DiskSpd's `-B`): each
    /// I/O lies in `[base_bytes, base_bytes + range)`, where a target's `size_bytes` is the
    /// range's length (a new file is created, or iocap's own filled, to `base_bytes +
    /// size_bytes`) and without it the range runs to the end of the target. 0: from byte 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub base_bytes: u64,
    /// DiskSpd's `-rs<pct>`: with a random workload, each I/O goes to a random offset with
    /// this probability (1 to 100) and otherwise follows the one before by `align_bytes`; a
    /// following I/O repeats the read or write of the one it follows. `None`: all random.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_pct: Option<u8>,
    /// DiskSpd's `-p`: each of a thread's outstanding I/Os walks the sequential stream on its
    /// own, from the thread's first offset, so the queue's I/Os go to the same offset together.
    #[serde(default, skip_serializing_if = "is_false")]
    pub parallel: bool,
    /// DiskSpd's `-i`/`-j`: after every `ios` completions a thread issues nothing for
    /// `think_ms` (I/O in flight still completes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<ThinkTime>,
    /// Outstanding I/Os per thread on each target, in the order of `targets` (DiskSpd's `-O`
    /// pool split over its targets); empty: `qd` on every target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_qd: Vec<u32>,
}

/// Count-based think time (DiskSpd's `-i<count> -j<ms>`), per thread on a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ThinkTime {
    /// Completions per burst, at least 1.
    pub ios: u32,
    /// The pause after each burst, in milliseconds; at least 1.
    pub think_ms: u32,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !*v
}

/// DiskSpd's sequential streams. Thread `k` of a target starts at `k × thread_stride_bytes`
/// and each of its I/Os starts `stride_bytes` after the one before; an I/O that would cross the
/// end of the range starts again at `(k × thread_stride_bytes) mod stride_bytes` (thread 0: at
/// 0). `shared`: every thread of the target issues from one stream (`-si`), each with its own
/// queue depth, so their I/Os interleave block by block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SeqStreams {
    pub stride_bytes: u64,
    #[serde(default)]
    pub thread_stride_bytes: u64,
    #[serde(default)]
    pub shared: bool,
}

impl Default for JobSpec {
    fn default() -> Self {
        Self {
            name: "run".into(),
            targets: vec![TargetSpec::new(DEFAULT_TARGET)],
            rw: RwMode::RandRead,
            write_pct: 0,
            bs_bytes: 8 << 10,
            qd: 16,
            threads: 1,
            size_bytes: 1 << 30,
            duration_s: 10.0,
            warmup_s: 2.0,
            cooldown_s: 0.0,
            seed: 0x0010_CAFE,
            align_bytes: 8 << 10,
            rate_iops: None,
            rate_mb_s: None,
            rate_process: RateProcess::Linear,
            direct: true,
            write_through: false,
            fsync_every: 0,
            datasync: false,
            engine: EngineChoice::Auto,
            allow_overwrite: false,
            bs_split: Vec::new(),
            burst: None,
            submit: SubmitMode::Auto,
            until_stable: None,
            streams: None,
            interval_ms: None,
            base_bytes: 0,
            random_pct: None,
            parallel: false,
            think: None,
            target_qd: Vec::new(),
            compressible_pct: 0,
            dedupe_pct: 0,
        }
    }
}

/// The test file used when no target is given: in the current directory.
pub const DEFAULT_TARGET: &str = "iocap.testfile";

#[derive(Debug, Error, PartialEq)]
pub enum SpecError {
    #[error("{0}")]
    Invalid(String),
}

fn bad(msg: impl Into<String>) -> Result<(), SpecError> {
    Err(SpecError::Invalid(msg.into()))
}

impl JobSpec {
    /// Whether any I/O of this test writes.
    pub fn writes(&self) -> bool {
        self.write_pct > 0
    }

    /// Total I/O rate limit after turning MB/s into I/Os, if any.
    pub fn effective_rate_iops(&self) -> Option<f64> {
        let from_mb = self.rate_mb_s.map(|mb| mb * 1e6 / self.mean_bs_bytes());
        match (self.rate_iops, from_mb) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A series kept per worker (`interval_ms`) stays within [`MAX_KEPT_INTERVALS`]: every
    /// interval of every worker is held in memory and stored with the result, so `-D1` over an
    /// hour on 64 threads (230 million) would exhaust memory instead of measuring.
    fn validate_intervals(&self, ms: u32) -> Result<(), SpecError> {
        if ms == 0 {
            return bad("the interval of the series must be at least 1 ms");
        }
        let window_s = self
            .until_stable
            .map_or(self.duration_s, |u| u.max_s.max(self.duration_s));
        let intervals = (window_s * 1000.0 / f64::from(ms)).ceil().max(1.0);
        let workers: u64 = self
            .targets
            .iter()
            .map(|t| u64::from(t.threads.unwrap_or(self.threads)))
            .sum();
        let kept = intervals * workers.max(1) as f64;
        if kept > MAX_KEPT_INTERVALS as f64 {
            return Err(SpecError::Invalid(format!(
                "a series every {ms} ms over {window_s} s on {workers} threads keeps {kept:.0} \
                 intervals; at most {MAX_KEPT_INTERVALS} are kept: a longer interval or a \
                 shorter test"
            )));
        }
        Ok(())
    }

    /// Checks every rule that needs no access to the system.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.targets.is_empty() {
            return bad("no target given");
        }
        if let Some(s) = &self.streams {
            if s.stride_bytes == 0 {
                return bad("the sequential stride must be above 0");
            }
            if s.shared && s.thread_stride_bytes > 0 {
                return bad(
                    "threads sharing one stream have no thread stride (DiskSpd's -si with -T)",
                );
            }
        }
        if let Some(ms) = self.interval_ms {
            self.validate_intervals(ms)?;
        }
        if self.datasync && self.fsync_every == 0 {
            return bad("datasync says how each fsync_every sync is made: it needs fsync_every");
        }
        for t in &self.targets {
            if t.path.is_empty() {
                return bad("a target path is empty");
            }
            if let Some(0) = t.threads {
                return bad(format!("target {}: threads must be at least 1", t.path));
            }
            if let Some(n) = t.threads {
                if n > MAX_THREADS {
                    return bad(format!("target {}: at most {MAX_THREADS} threads", t.path));
                }
            }
            if let Some(0) = t.size_bytes {
                return bad(format!("target {}: size must be greater than zero", t.path));
            }
        }
        if !(MIN_BS_BYTES..=MAX_BS_BYTES).contains(&self.bs_bytes) {
            return bad(format!(
                "block size {} B is out of range: iocap takes 512 B to 64 MiB",
                self.bs_bytes
            ));
        }
        if self.bs_bytes % 512 != 0 {
            return bad(format!(
                "block size {} B is not a multiple of 512 B",
                self.bs_bytes
            ));
        }
        if self.qd == 0 {
            return bad("queue depth must be at least 1 (--qd 0 issues nothing)");
        }
        if self.qd > MAX_QD {
            return bad(format!(
                "queue depth {} is above the limit of {MAX_QD}",
                self.qd
            ));
        }
        if self.threads == 0 {
            return bad("threads must be at least 1");
        }
        if self.threads > MAX_THREADS {
            return bad(format!("at most {MAX_THREADS} threads per target"));
        }
        if self.size_bytes < self.bs_bytes {
            return bad(format!(
                "size {} B is smaller than the block size {} B",
                self.size_bytes, self.bs_bytes
            ));
        }
        if let Some(t) = self
            .targets
            .iter()
            .find(|t| t.size_bytes.is_some_and(|s| s < self.bs_bytes))
        {
            return bad(format!(
                "target {}: size is smaller than the block size",
                t.path
            ));
        }
        self.validate_mix()?;
        if self.align_bytes == 0 || self.align_bytes % 512 != 0 {
            return bad(format!(
                "alignment {} B must be a non-zero multiple of 512 B",
                self.align_bytes
            ));
        }
        for t in &self.targets {
            if let Some(range) = t.size_bytes {
                self.check_random_range(range, &t.path)?;
            }
        }
        if self.duration_s.is_nan() || self.duration_s <= 0.0 {
            return bad("duration must be greater than zero");
        }
        for (flag, v) in [
            ("--compressible", self.compressible_pct),
            ("--dedupe", self.dedupe_pct),
        ] {
            if v > 100 {
                return bad(format!("{flag} {v}: a share of the data, 0 to 100 %"));
            }
        }
        if let Some(u) = self.until_stable {
            if !(u.ci_pct > 0.0 && u.ci_pct < 100.0) {
                return bad(format!(
                    "--until-stable {}: the interval's half-width must be above 0 and below \
                     100 % of the mean",
                    u.ci_pct
                ));
            }
            if u.max_s.is_nan() || u.max_s < self.duration_s {
                return bad(format!(
                    "--until-stable: the longest window ({} s) is shorter than --duration ({} s)",
                    u.max_s, self.duration_s
                ));
            }
        }
        if self.warmup_s < 0.0 || self.cooldown_s < 0.0 {
            return bad("warmup and cooldown cannot be negative");
        }
        if self.write_pct > 100 {
            return bad(format!("write percentage {} is above 100", self.write_pct));
        }
        match self.rw {
            RwMode::Read | RwMode::RandRead if self.write_pct != 0 => {
                return bad("--write-pct needs a mixed workload (--rw rw or randrw)")
            }
            RwMode::Write | RwMode::RandWrite if self.write_pct != 100 => {
                return bad("--write-pct needs a mixed workload (--rw rw or randrw)")
            }
            _ => {}
        }
        for r in [self.rate_iops, self.rate_mb_s].into_iter().flatten() {
            if r.is_nan() || r <= 0.0 || !r.is_finite() {
                return bad("rate limits must be greater than zero");
            }
        }
        if self.fsync_every > 0 && !self.writes() {
            return bad("--fsync-every needs a workload that writes");
        }
        if let Some(b) = self.burst {
            if !(b.on_s.is_finite() && b.on_s > 0.0 && b.off_s.is_finite() && b.off_s >= 0.0) {
                return bad("a burst needs a time on above zero and a time off of zero or more");
            }
        }
        self.validate_pattern()
    }

    /// DiskSpd's patterns: a base offset, a random/sequential mix, parallel I/O at one offset,
    /// think time and a queue depth per target.
    fn validate_pattern(&self) -> Result<(), SpecError> {
        if self.base_bytes % 512 != 0 {
            return bad(format!(
                "base offset {} B must be a multiple of 512 B (every I/O's offset must be)",
                self.base_bytes
            ));
        }
        if self.base_bytes > 0 {
            if let Some(t) = self.targets.iter().find(|t| {
                t.size_bytes
                    .is_some_and(|s| s.checked_add(self.base_bytes).is_none())
            }) {
                return bad(format!(
                    "target {}: the base offset and the size add up past 2^64 bytes",
                    t.path
                ));
            }
        }
        if let Some(p) = self.random_pct {
            if !(1..=100).contains(&p) {
                return bad(format!("random share {p} %: give 1 to 100"));
            }
            if !self.rw.is_random() {
                return bad("a random share (DiskSpd's -rs) needs a random workload");
            }
            if !self.bs_split.is_empty() {
                return bad("a random share (DiskSpd's -rs) takes one block size, not a mix");
            }
        }
        if self.parallel {
            if self.rw.is_random() {
                return bad(
                    "parallel I/O at one offset (DiskSpd's -p) needs a sequential workload",
                );
            }
            if self.streams.is_some_and(|s| s.shared) {
                return bad(
                    "parallel I/O at one offset (DiskSpd's -p) conflicts with a shared \
                            stream (-si)",
                );
            }
            if !self.bs_split.is_empty() {
                return bad("parallel I/O at one offset (DiskSpd's -p) takes one block size");
            }
        }
        if let Some(t) = self.think {
            if t.ios == 0 || t.think_ms == 0 {
                return bad("think time needs at least 1 I/O per burst and at least 1 ms");
            }
            if self.burst.is_some() {
                return bad("think time after a count of I/Os and timed bursts conflict: give one");
            }
        }
        if !self.target_qd.is_empty() {
            if self.target_qd.len() != self.targets.len() {
                return bad(format!(
                    "{} queue depths for {} targets: give one per target",
                    self.target_qd.len(),
                    self.targets.len()
                ));
            }
            if let Some(q) = self.target_qd.iter().find(|q| !(1..=MAX_QD).contains(*q)) {
                return bad(format!(
                    "a target's queue depth {q} is outside 1 to {MAX_QD}"
                ));
            }
        }
        Ok(())
    }

    /// The outstanding I/Os per thread on target `i`.
    pub fn target_depth(&self, i: usize) -> u32 {
        self.target_qd.get(i).copied().unwrap_or(self.qd)
    }

    /// A block-size mix's own rules: every size a multiple of 512 B in range, every share
    /// above 0, and the block size its largest. Checked before the alignment, which defaults
    /// to the mix's smallest size, so a bad size is named as a size.
    fn validate_mix(&self) -> Result<(), SpecError> {
        if self.bs_split.is_empty() {
            return Ok(());
        }
        for b in &self.bs_split {
            let bs = b.bs_bytes;
            if !(MIN_BS_BYTES..=MAX_BS_BYTES).contains(&bs) {
                return bad(format!(
                    "block size {bs} B in the mix is out of range: iocap takes 512 B to 64 MiB"
                ));
            }
            if bs % 512 != 0 {
                return bad(format!(
                    "block size {bs} B in the mix is not a multiple of 512 B"
                ));
            }
            if b.weight == 0 {
                return bad("every block size of a mix needs a share above 0");
            }
        }
        if total_weight(&self.bs_split) > u64::from(u32::MAX) {
            return bad("the shares of a block-size mix add up to more than 4294967295");
        }
        let max = self.bs_split.iter().map(|b| b.bs_bytes).max().unwrap_or(0);
        if self.bs_bytes != max {
            return bad(format!(
                "with a block-size mix, the block size must be its largest ({max} B), not {} B",
                self.bs_bytes
            ));
        }
        Ok(())
    }

    /// The mean I/O size in bytes (of the mix, if any).
    pub fn mean_bs_bytes(&self) -> f64 {
        let total: u64 = self.bs_split.iter().map(|b| u64::from(b.weight)).sum();
        if total == 0 {
            return self.bs_bytes as f64;
        }
        self.bs_split
            .iter()
            .map(|b| b.bs_bytes as f64 * f64::from(b.weight))
            .sum::<f64>()
            / total as f64
    }
}

/// The sum of a mix's shares (a u64: u32 shares could overflow a u32 sum).
pub fn total_weight(mix: &[BsWeight]) -> u64 {
    mix.iter().map(|b| u64::from(b.weight)).sum()
}

/// Parses a block-size mix such as `8K:70,64K:30` (sizes as for `--bs`, shares as whole
/// numbers).
pub fn parse_bs_split(input: &str) -> Result<Vec<BsWeight>, crate::UnitError> {
    let bad = |why: &'static str| crate::UnitError::Invalid {
        what: "block-size mix",
        input: input.to_string(),
        why,
    };
    let mut out = Vec::new();
    for part in input.split(',').map(str::trim) {
        let (size, weight) = part
            .split_once(':')
            .ok_or_else(|| bad("each part is SIZE:SHARE, e.g. 8K:70,64K:30"))?;
        let bs_bytes = crate::parse_size(size)?;
        let weight: u32 = weight
            .trim()
            .parse()
            .map_err(|_| bad("a share must be a whole number"))?;
        if weight == 0 {
            return Err(bad("a share must be above 0"));
        }
        out.push(BsWeight { bs_bytes, weight });
    }
    if out.is_empty() {
        return Err(bad("it is empty"));
    }
    if total_weight(&out) > u64::from(u32::MAX) {
        return Err(bad("the shares add up to more than 4294967295"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> JobSpec {
        JobSpec::default()
    }

    #[test]
    fn default_is_valid() {
        spec().validate().unwrap();
    }

    #[test]
    fn rejects_zero_queue_depth() {
        let s = JobSpec { qd: 0, ..spec() };
        assert!(s
            .validate()
            .unwrap_err()
            .to_string()
            .contains("queue depth"));
    }

    #[test]
    fn rejects_block_sizes_out_of_range() {
        for bs in [256, 1000, 128 << 20] {
            let s = JobSpec {
                bs_bytes: bs,
                ..spec()
            };
            assert!(
                s.validate().unwrap_err().to_string().contains("block size"),
                "{bs}"
            );
        }
        for bs in [512, 64 << 20] {
            let s = JobSpec {
                bs_bytes: bs,
                align_bytes: 512,
                ..spec()
            };
            s.validate().unwrap();
        }
    }

    #[test]
    fn write_pct_only_for_mixes() {
        let s = JobSpec {
            write_pct: 30,
            ..spec()
        };
        assert!(s.validate().is_err());
        let s = JobSpec {
            rw: RwMode::RandRw,
            write_pct: 30,
            ..spec()
        };
        s.validate().unwrap();
        let s = JobSpec {
            rw: RwMode::RandRw,
            write_pct: 130,
            ..spec()
        };
        assert!(s.validate().is_err());
    }

    #[test]
    fn size_must_hold_a_block() {
        let s = JobSpec {
            size_bytes: 4096,
            ..spec()
        };
        assert!(s
            .validate()
            .unwrap_err()
            .to_string()
            .contains("smaller than the block size"));
    }

    #[test]
    fn fsync_needs_writes() {
        let s = JobSpec {
            fsync_every: 4,
            ..spec()
        };
        assert!(s.validate().is_err());
        let s = JobSpec {
            fsync_every: 4,
            rw: RwMode::Write,
            write_pct: 100,
            ..spec()
        };
        s.validate().unwrap();
    }

    #[test]
    fn rate_from_mb_s() {
        let s = JobSpec {
            rate_mb_s: Some(8.192),
            ..spec()
        };
        assert!((s.effective_rate_iops().unwrap() - 1000.0).abs() < 1e-9);
        let s = JobSpec {
            rate_mb_s: Some(8.192),
            rate_iops: Some(500.0),
            ..spec()
        };
        assert_eq!(s.effective_rate_iops(), Some(500.0));
    }

    #[test]
    fn block_size_mixes() {
        let m = parse_bs_split("8K:70, 64K:30").unwrap();
        assert_eq!(
            m,
            [
                BsWeight {
                    bs_bytes: 8192,
                    weight: 70
                },
                BsWeight {
                    bs_bytes: 65536,
                    weight: 30
                }
            ]
        );
        for bad in ["", "8K", "8K:0", "8K:x", "8K:70,"] {
            assert!(parse_bs_split(bad).is_err(), "{bad}");
        }
        let s = JobSpec {
            bs_split: m.clone(),
            bs_bytes: 65536,
            ..spec()
        };
        assert!(s.validate().is_ok());
        assert!((s.mean_bs_bytes() - (0.7 * 8192.0 + 0.3 * 65536.0)).abs() < 1e-6);
        let s = JobSpec {
            bs_split: m,
            bs_bytes: 8192,
            ..spec()
        };
        assert!(s.validate().unwrap_err().to_string().contains("largest"));
        let s = JobSpec {
            burst: Some(Burst {
                on_s: 0.0,
                off_s: 1.0,
            }),
            ..spec()
        };
        assert!(s.validate().is_err());
    }

    #[test]
    fn a_bad_size_in_a_mix_is_named_as_a_size_not_an_alignment() {
        // as `--bs-split 8K:50,1000:50` builds it: aligned to the smallest size
        let s = JobSpec {
            bs_split: parse_bs_split("8K:50,1000:50").unwrap(),
            bs_bytes: 8192,
            align_bytes: 1000,
            ..spec()
        };
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "block size 1000 B in the mix is not a multiple of 512 B"
        );
    }

    #[test]
    fn write_shares_follow_the_workload() {
        assert_eq!(RwMode::RandRead.write_pct(30), 0);
        assert_eq!(RwMode::Write.write_pct(30), 100);
        assert_eq!(RwMode::RandRw.write_pct(30), 30);
    }

    #[test]
    fn rw_names_round_trip() {
        for m in [
            RwMode::Read,
            RwMode::Write,
            RwMode::RandRead,
            RwMode::RandWrite,
            RwMode::Rw,
            RwMode::RandRw,
        ] {
            assert_eq!(RwMode::parse(m.name()), Some(m));
        }
        assert_eq!(RwMode::parse("sideways"), None);
    }

    /// A series kept per worker is bounded: -D1000 over an hour on 64 threads is kept, -D1 over
    /// an hour is refused with a message that names the interval, the length and the threads.
    #[test]
    fn a_per_worker_series_too_long_to_keep_is_refused() {
        let spec = |ms, duration_s, threads| JobSpec {
            interval_ms: Some(ms),
            duration_s,
            threads,
            ..JobSpec::default()
        };
        spec(1000, 3600.0, 64).validate().unwrap();
        spec(500, 10.0, 1).validate().unwrap();
        let e = spec(1, 3600.0, 64).validate().unwrap_err().to_string();
        assert!(
            e.contains("every 1 ms over 3600 s on 64 threads") && e.contains("at most 500000"),
            "{e}"
        );
        let e = spec(0, 10.0, 1).validate().unwrap_err().to_string();
        assert!(e.contains("at least 1 ms"), "{e}");
    }

    /// DiskSpd's streams need a step, and threads sharing one stream have no thread stride.
    #[test]
    fn streams_without_a_stride_or_shared_with_a_thread_stride_are_refused() {
        let with = |stride, thread_stride, shared| JobSpec {
            rw: RwMode::Read,
            streams: Some(SeqStreams {
                stride_bytes: stride,
                thread_stride_bytes: thread_stride,
                shared,
            }),
            ..JobSpec::default()
        };
        assert!(with(8192, 4096, false).validate().is_ok());
        assert!(with(8192, 0, true).validate().is_ok());
        let e = with(0, 0, false).validate().unwrap_err().to_string();
        assert!(e.contains("stride must be above 0"), "{e}");
        let e = with(8192, 4096, true).validate().unwrap_err().to_string();
        assert!(e.contains("no thread stride"), "{e}");
    }

    /// DiskSpd's patterns (issue 27): each new field's rule, with what the user reads.
    #[test]
    fn diskspd_patterns_are_checked() {
        let seq = || JobSpec {
            rw: RwMode::Read,
            ..spec()
        };
        let e = |s: JobSpec| s.validate().unwrap_err().to_string();
        // a base offset: a multiple of 512 B, never past 2^64 with a target's size
        assert!(JobSpec {
            base_bytes: 1 << 20,
            ..spec()
        }
        .validate()
        .is_ok());
        let msg = e(JobSpec {
            base_bytes: 1000,
            ..spec()
        });
        assert!(
            msg.contains("base offset 1000 B must be a multiple of 512 B"),
            "{msg}"
        );
        let mut s = JobSpec {
            base_bytes: 1 << 20,
            ..spec()
        };
        s.targets[0].size_bytes = Some(u64::MAX - 4096);
        assert!(e(s).contains("past 2^64"));
        // a random share: 1 to 100 %, of a random workload, one block size
        assert!(JobSpec {
            random_pct: Some(30),
            ..spec()
        }
        .validate()
        .is_ok());
        assert!(e(JobSpec {
            random_pct: Some(0),
            ..spec()
        })
        .contains("give 1 to 100"));
        assert!(e(JobSpec {
            random_pct: Some(30),
            ..seq()
        })
        .contains("needs a random workload"));
        // parallel I/O at one offset: sequential, never a shared stream
        assert!(JobSpec {
            parallel: true,
            ..seq()
        }
        .validate()
        .is_ok());
        assert!(e(JobSpec {
            parallel: true,
            ..spec()
        })
        .contains("needs a sequential workload"));
        let shared = Some(SeqStreams {
            stride_bytes: 8192,
            thread_stride_bytes: 0,
            shared: true,
        });
        let msg = e(JobSpec {
            parallel: true,
            streams: shared,
            ..seq()
        });
        assert!(msg.contains("conflicts with a shared stream"), "{msg}");
        // think time: at least 1 I/O and 1 ms, never with timed bursts
        let think = |ios, think_ms| Some(ThinkTime { ios, think_ms });
        assert!(JobSpec {
            think: think(8, 5),
            ..spec()
        }
        .validate()
        .is_ok());
        assert!(e(JobSpec {
            think: think(0, 5),
            ..spec()
        })
        .contains("at least 1 I/O"));
        assert!(e(JobSpec {
            think: think(8, 0),
            ..spec()
        })
        .contains("at least 1 ms"));
        let msg = e(JobSpec {
            think: think(8, 5),
            burst: Some(Burst {
                on_s: 1.0,
                off_s: 1.0,
            }),
            ..spec()
        });
        assert!(msg.contains("conflict"), "{msg}");
        // a queue depth per target: one per target, each in range
        let two = vec![TargetSpec::new("a"), TargetSpec::new("b")];
        let per = |target_qd: Vec<u32>| JobSpec {
            targets: two.clone(),
            target_qd,
            ..spec()
        };
        let s = per(vec![3, 2]);
        s.validate().unwrap();
        assert_eq!((s.target_depth(0), s.target_depth(1)), (3, 2));
        assert_eq!(spec().target_depth(0), spec().qd);
        assert!(e(per(vec![3])).contains("1 queue depths for 2 targets"));
        assert!(e(per(vec![3, 0])).contains("outside 1 to 4096"));
    }

    /// The new fields are left out of the JSON when unset, so stored specs read as before.
    #[test]
    fn unset_patterns_are_not_written() {
        let json = serde_json::to_value(spec()).unwrap();
        for key in ["base_bytes", "random_pct", "parallel", "think", "target_qd"] {
            assert!(json.get(key).is_none(), "{key}");
        }
        let s = JobSpec {
            base_bytes: 4096,
            parallel: true,
            rw: RwMode::Read,
            ..spec()
        };
        let back: JobSpec = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}

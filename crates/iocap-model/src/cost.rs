//! What `iocap cost` measured: the CPU spent per I/O over a matrix of engines, block sizes,
//! directions, cache modes and queue depths, in three accountings, with a fitted cost model
//! (`µs per I/O = fixed + per_KB × KB`) and the answers in plain words (IOPS per core, cores
//! for a target rate, one 64K read against eight 8K reads). See docs/cost.md for the method.

use crate::{EngineChoice, EngineFeature};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which subset of the matrix ran (`CostReport::matrix`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CostMatrix {
    /// A smoke set: two engines, three sizes, O_DIRECT.
    Quick,
    /// Every engine and size O_DIRECT, queue depth 1 reads, some buffered reads.
    #[default]
    Default,
    /// Everything.
    Full,
}

/// How the page cache is involved in a point (`CostPoint::cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    /// O_DIRECT: no page cache.
    #[default]
    Direct,
    /// Buffered, the file read into the page cache before the point.
    Hit,
    /// Buffered, the file's pages dropped before the point.
    Miss,
}

/// Reads or writes: the direction of a cost point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IoDirection {
    #[default]
    Read,
    Write,
}

/// Whose CPU a model counts (`CostModel::accounting`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Accounting {
    /// The iocap process's own (`getrusage`).
    #[default]
    Process,
    /// The whole machine's busy CPU (`/proc/stat`).
    System,
}

/// Which question an answer answers (`CostAnswer::kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    /// I/Os per second one core drives, at the question's block size.
    #[default]
    IopsPerCore,
    /// Cores that `--target-iops` needs.
    CoresForIops,
    /// MB/s one core moves, at the question's large block size.
    MbSPerCore,
    /// Cores that `--target-mb-s` needs.
    CoresForMbS,
    /// One 64K I/O against eight 8K I/Os: the ratio of their CPU.
    LargeVsSmall,
}

crate::names::names! {
    CostMatrix { Quick => "quick", Default => "default", Full => "full" }
    CacheMode { Direct => "direct", Hit => "hit", Miss => "miss" }
    IoDirection { Read => "read", Write => "write" }
    Accounting { Process => "process", System => "system" }
    AnswerKind {
        IopsPerCore => "iops_per_core",
        CoresForIops => "cores_for_iops",
        MbSPerCore => "mb_s_per_core",
        CoresForMbS => "cores_for_mb_s",
        LargeVsSmall => "large_vs_small",
    }
}

/// The cost report of one `iocap cost` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct CostReport {
    /// The matrix asked for: `quick`, `default` or `full`.
    pub matrix: CostMatrix,
    /// Online CPUs when it ran (the system-wide accounting spans all of them).
    pub cpus: u32,
    /// Kernel clock ticks per second of `/proc/stat` (`USER_HZ`): its resolution.
    pub clock_ticks_per_s: u32,
    /// One entry per point that ran, in the order they ran.
    pub points: Vec<CostPoint>,
    /// The fitted model per engine, direction, cache mode, queue depth and accounting.
    pub models: Vec<CostModel>,
    /// The questions a DBA asks, answered from the models.
    pub answers: Vec<CostAnswer>,
    /// Points skipped and why, and what to keep in mind when reading the figures.
    pub notes: Vec<String>,
    /// Measured on Windows: the engines are shown by Windows' names (`auto` is `iocp`, `psync`
    /// is `sync`) and `clock_ticks_per_s` is GetSystemTimes' (10^7).
    #[serde(default)]
    pub windows: bool,
}

/// One point of the matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct CostPoint {
    /// Index of this point's full result in the run's `tests`.
    pub test_idx: u32,
    /// `psync`, `io_uring` (the file and buffers registered, as tests run it) or
    /// `io_uring_unregistered`: the names `--engine` takes. Runs saved before 2026-11-27 named the
    /// registered engine `io_uring_registered` (read as `io_uring`) and the unregistered one
    /// `io_uring`; their `engine_features` tell the two apart.
    pub engine: EngineChoice,
    /// What the engine really used (`registered_buffers`, `registered_files`, ...), from the
    /// test result: registration can fail, e.g. on a low RLIMIT_MEMLOCK.
    pub engine_features: Vec<EngineFeature>,
    /// `read` or `write` (random offsets, aligned to the block size).
    pub rw: IoDirection,
    pub bs_bytes: u64,
    /// `direct` (O_DIRECT), `hit` (buffered, the file read into the page cache before) or
    /// `miss` (buffered, the file's pages dropped before the point).
    pub cache: CacheMode,
    /// I/Os in flight: the queue depth of io_uring, the number of threads of psync.
    pub qd: u32,
    /// Completed I/Os in the measured window.
    pub ios: u64,
    /// Length of the measured window.
    pub duration_s: f64,
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mb_s: f64,
    /// User + system CPU of the iocap process (all threads, io_uring workers included), from
    /// `getrusage` over the window.
    pub process: CpuAccount,
    /// Busy CPU of the whole machine (all CPUs; user, nice, system, irq, softirq; not idle,
    /// iowait or steal), from `/proc/stat` over the same window; `null` when unreadable.
    pub system: Option<CpuAccount>,
    /// System-wide minus process: what the kernel spent elsewhere on our behalf (interrupts,
    /// completions on other CPUs, kworkers, write-back) plus anything else running. Can be
    /// slightly negative: `/proc/stat` is sampled by ticks.
    pub elsewhere: Option<CpuAccount>,
    /// CPU time stolen by the hypervisor over the window, all CPUs, in seconds (not counted as
    /// busy); `null` when unreadable.
    #[serde(default)]
    pub steal_s: Option<f64>,
    /// Share of the file in the page cache after the point, in percent (`mincore`), for
    /// buffered points; `null` for O_DIRECT points or when it could not be read.
    #[serde(default)]
    pub resident_after_pct: Option<f64>,
}

/// CPU time over a window, and per I/O and per KiB moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct CpuAccount {
    pub cpu_s: f64,
    /// CPU microseconds per completed I/O; 0 when no I/O completed.
    pub us_per_io: f64,
    /// CPU microseconds per KiB (1024 B) moved; 0 when nothing moved.
    pub us_per_kb: f64,
}

/// `µs per I/O = fixed_us + per_kb_us × KiB`, fitted by least squares over the block sizes of
/// one engine, direction, cache mode and queue depth, in one accounting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct CostModel {
    pub engine: EngineChoice,
    pub rw: IoDirection,
    pub cache: CacheMode,
    pub qd: u32,
    /// `process` or `system`.
    pub accounting: Accounting,
    /// The cost paid once per I/O, whatever its size (system call, submission, completion,
    /// interrupt); `null` when it cannot be fitted (no point with I/O).
    pub fixed_us: Option<f64>,
    /// The cost of each KiB moved (copying, page cache, DMA mapping); `null` with fewer than two
    /// distinct sizes.
    pub per_kb_us: Option<f64>,
    /// Share of the variance the line explains (1 = exact); `null` with fewer than three
    /// points or no variance.
    pub r2: Option<f64>,
    /// The points fitted.
    pub points: Vec<ModelPoint>,
}

/// One measured point of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct ModelPoint {
    pub size_kb: f64,
    pub us_per_io: f64,
}

/// One question answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct CostAnswer {
    /// `iops_per_core`, `cores_for_iops`, `mb_s_per_core`, `cores_for_mb_s` or
    /// `large_vs_small`.
    pub kind: AnswerKind,
    pub engine: EngineChoice,
    pub rw: IoDirection,
    pub cache: CacheMode,
    pub qd: u32,
    /// The figure by the process accounting (IOPS per core, cores, or the ratio).
    pub value: f64,
    /// The same by the system-wide accounting: the upper bound; `null` when not measured.
    pub value_system: Option<f64>,
    /// One sentence with the figures.
    pub text: String,
}

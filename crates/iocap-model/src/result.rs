//! What a run measured. These structs are the JSON contract of every measuring command's
//! `--output json` and the schema of the result store (`iocap-store` keeps each run's JSON
//! beside rows drawn from it): fields are added, never renamed or removed. Every
//! figure iocap prints is read from here, so the terminal, CSV and JSON views cannot disagree.

use crate::engines::{Engine, EngineFeature};
pub use crate::opstats::{LatencyUs, OpStats};
use crate::spec::JobSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One invocation of iocap: one or more tests on one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    pub iocap_version: String,
    /// Sortable, unique identifier: UTC start time plus a random suffix.
    pub run_id: String,
    /// RFC 3339 UTC timestamp of the start of the run.
    pub started_at: String,
    pub host: HostInfo,
    pub tests: Vec<TestResult>,
    /// Free-form name given with `--label`, e.g. `san-a raid10 before firmware`.
    #[serde(default)]
    pub label: Option<String>,
    /// Tags given with `--tag` (repeatable), for filtering the history.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Free-text note given with `--note`.
    #[serde(default)]
    pub note: Option<String>,
    /// The command that made the run: `run`, `sqlio`, `diskspd`, `suite`, `saturate`,
    /// `scaleup`, `preflight`, `cachescan`, `cost`, `fsync`, `verify`, `capture`,
    /// `characterise`, `replay` (a newer version's name is kept as it is); `null` in runs
    /// saved before it was recorded.
    #[serde(default)]
    pub command: Option<crate::RunCommand>,
    /// For a suite: its name and how many of its tests there are.
    #[serde(default)]
    pub suite: Option<SuiteInfo>,
    #[serde(default)]
    pub saturation: Option<crate::Saturation>,
    #[serde(default)]
    pub scaleup: Option<crate::ScaleUp>,
    #[serde(default)]
    pub preflight: Option<crate::Preflight>,
    /// The host configuration under the run's targets when it ran (`iocap audit`'s checks), so
    /// `compare` can show a scheduler, cache mode or governor that changed between runs.
    #[serde(default)]
    pub config: Vec<ConfigCheck>,
    /// The clock's self-check at the start of the run (cost of a reading, resolution, never
    /// backwards); `null` in runs saved before it was recorded.
    #[serde(default)]
    pub timer: Option<crate::TimerCheck>,
    /// For `iocap verify`: pages checked, failures by class, the crash-consistency check.
    #[serde(default)]
    pub verify: Option<crate::Verify>,
    /// For `iocap cost`: the CPU spent per I/O over its matrix, the fitted model and the
    /// answers; `null` for every other command.
    #[serde(default)]
    pub cost: Option<crate::CostReport>,
    /// For `iocap fsync`: the log-flush methods compared per write size; `null` for other
    /// commands and in runs saved before it existed.
    #[serde(default)]
    pub fsync: Option<crate::FsyncReport>,
    /// For tests run several times (`--repeat N`): the spread of each one's figures across its
    /// runs; every run is in `tests`, numbered by `repeat`. Empty otherwise.
    #[serde(default)]
    pub repeats: Vec<RepeatSummary>,
    /// For `iocap cachescan`, and for a `preflight` that sized its files by a scan: the caches
    /// below the OS found by a working-set sweep; absent otherwise.
    /// For `iocap capture` and `iocap characterise`: the workload a trace recorded, in the
    /// seed method's terms; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<crate::workload::Workload>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cachescan: Option<crate::CacheScan>,
    /// For `iocap replay`: a trace replayed on a target, beside the recording's figures;
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::replay::Replay>,
    /// What stopped the run before it finished: the signal (`SIGINT`, which Ctrl-C sends, or
    /// `SIGTERM`), on Windows the console event (`CTRL_C_EVENT`, `CTRL_BREAK_EVENT`,
    /// `CTRL_CLOSE_EVENT`, ...), or `stop` when a stop came some other way. Its figures then
    /// cover only what ran. `null` for a run that was not interrupted, and in runs saved before
    /// it was recorded (their `tests[].interrupted` still tells).
    #[serde(default)]
    pub interrupted_by: Option<String>,
    /// The burst bucket a stored `saturate --bucket` measured on this run's target, with the
    /// tests that were shorter than its burst at their rate (their figures may be the
    /// burst's); absent when the store holds no bucket for the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_bucket: Option<crate::StoredBucket>,
}

impl RunResult {
    /// For a suite run: how many of its tests finished (tests of several workloads count once,
    /// by their name before ` [role]`; repeats once) and how many it planned. `None` for runs
    /// of other commands.
    pub fn suite_progress(&self) -> Option<(u32, u32)> {
        let s = self.suite.as_ref()?;
        let mut names: Vec<&str> = self
            .tests
            .iter()
            .filter(|t| t.error.is_none() && !t.interrupted)
            .map(|t| t.name.split(" [").next().unwrap_or(&t.name))
            .collect();
        names.sort_unstable();
        names.dedup();
        Some((names.len() as u32, s.planned))
    }

    /// Whether, and why, the run's figures cover only part of what it set out to measure: an
    /// interruption (by which signal), an I/O error that stopped a test, or a suite that did
    /// not reach its last test (a killed process leaves no other mark). `None` for a whole run.
    /// Every view says so first. A verify whose checking was interrupted is cut short too,
    /// saved before `interrupted_by` was set for it or after.
    pub fn cut_short(&self) -> Option<CutShort> {
        let failed = self.tests.iter().any(|t| t.error.is_some());
        let interrupted = self.tests.iter().any(|t| t.interrupted)
            || self.verify.as_ref().is_some_and(|v| v.interrupted);
        let cause = match (&self.interrupted_by, failed, interrupted) {
            (_, true, _) => StopCause::IoError,
            (Some(by), _, _) => StopCause::Signal(by.clone()),
            (None, _, true) => StopCause::Unknown,
            (None, false, false) => {
                let (done, planned) = self.partial()?;
                return Some(CutShort {
                    cause: StopCause::Unknown,
                    done,
                    planned: Some(planned),
                });
            }
        };
        let (done, planned) = match self.suite_progress() {
            Some((done, planned)) => (done, Some(planned)),
            None => (self.tests_completed(), None),
        };
        Some(CutShort {
            cause,
            done,
            planned,
        })
    }

    /// Tests that ran to their end: neither interrupted nor stopped by an I/O error.
    fn tests_completed(&self) -> u32 {
        self.tests
            .iter()
            .filter(|t| !t.interrupted && t.error.is_none())
            .count() as u32
    }

    /// A suite run that stopped before its last test (killed, Ctrl-C, an error): `(finished,
    /// planned)`; `None` for a whole run or another command's.
    pub fn partial(&self) -> Option<(u32, u32)> {
        self.suite_progress()
            .filter(|(done, planned)| done < planned)
    }

    /// A run of any other command that Ctrl-C or an error stopped before it finished (a
    /// preflight's table then lacks the rows of the tests it never ran): the tests that
    /// completed. `None` for a suite (see [`Self::partial`]) and for a whole run.
    pub fn stopped_early(&self) -> Option<u32> {
        if self.suite.is_some() {
            return None;
        }
        let stopped = self
            .tests
            .iter()
            .any(|t| t.interrupted || t.error.is_some());
        stopped.then(|| self.tests_completed())
    }
}

/// A run whose figures cover only part of what it set out to measure ([`RunResult::cut_short`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutShort {
    pub cause: StopCause,
    /// Tests that ran to their end (for a suite, its tests finished, each counted once).
    pub done: u32,
    /// For a suite: the tests it planned; `None` for other commands, whose count of tests is
    /// not fixed beforehand.
    pub planned: Option<u32>,
}

/// What cut a run short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopCause {
    /// A signal or console event, by name (`SIGINT`, `SIGTERM`, `CTRL_BREAK_EVENT`, `stop`).
    Signal(String),
    /// An I/O error stopped a test.
    IoError,
    /// Not recorded: a run saved before [`RunResult::interrupted_by`] existed, or a suite
    /// whose process was killed.
    Unknown,
}

/// One test run several times with `--repeat`: its figures across the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RepeatSummary {
    /// The test's name, as in `tests[].name`.
    pub name: String,
    /// Runs that completed (an interrupted or failed run is not counted).
    pub runs: u32,
    pub iops: RepeatSpread,
    pub mb_s: RepeatSpread,
    /// Of the p99 latency of all I/Os; `null` when a run completed none.
    pub p99_us: Option<RepeatSpread>,
}

/// One figure across repeated runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RepeatSpread {
    pub median: f64,
    /// First and third quartiles (linear interpolation between runs).
    pub q1: f64,
    pub q3: f64,
    pub min: f64,
    pub max: f64,
    /// The interquartile range over the median, in percent.
    pub iqr_pct: f64,
}

/// One configuration check at the time of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConfigCheck {
    /// Stable ID, e.g. `device.scheduler` (docs/checks.md).
    pub id: String,
    /// `PASS`, `WARN`, `FAIL`, `INFO` or `UNKNOWN`.
    pub severity: crate::Severity,
    /// The device, path or part of the host it is about.
    pub subject: String,
    /// The value read and where it came from.
    pub evidence: String,
}

/// Which suite a run came from; `tests` shorter than `planned` means it stopped early and can
/// be resumed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteInfo {
    pub name: String,
    pub planned: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct HostInfo {
    pub hostname: String,
    /// `uname -r`.
    pub kernel: String,
    pub cpu_model: String,
    /// Online CPUs.
    pub cpus: u32,
    pub memory_bytes: u64,
    /// Where each online CPU sits (socket, NUMA node, core); `null` when it cannot be read,
    /// and in results saved before it was recorded.
    #[serde(default)]
    pub topology: Option<crate::detail::CpuTopology>,
    /// The CPU power policy the run had; `null` when the host has none to read (no cpufreq, as
    /// in most VMs) and in results saved before it was recorded.
    #[serde(default)]
    pub power_policy: Option<crate::detail::PowerPolicy>,
}

/// One test: one workload on one or more targets for one duration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct TestResult {
    pub name: String,
    /// The file role this workload stands for (`data`, `log`, `temp`, `backup`), or
    /// `cachescan` for the tests of a cache scan; `null`: none.
    #[serde(default)]
    pub role: Option<crate::Role>,
    /// Tests with the same group number ran at the same time (several workloads in one test,
    /// e.g. OLTP on the data file while the log is written); `null`: it ran alone.
    #[serde(default)]
    pub group: Option<u32>,
    pub spec: JobSpec,
    /// The engine that actually ran: `io_uring` or `psync` (Windows: `iocp` or `sync`).
    pub engine: Engine,
    /// Engine features in use, e.g. `registered_buffers`, `registered_files`, `defer_taskrun`.
    pub engine_features: Vec<EngineFeature>,
    /// Whether every target ran with O_DIRECT.
    pub direct: bool,
    /// Length of the measured window (warmup and cooldown excluded), shorter if interrupted.
    pub duration_s: f64,
    pub total: OpStats,
    pub read: OpStats,
    pub write: OpStats,
    /// fsync calls from `--fsync-every`, not counted in `total`.
    pub sync: OpStats,
    pub cpu: CpuStats,
    /// Achieved mean number of I/Os in flight over the window: the time each I/O spent in flight
    /// inside the window, summed, over the window's length.
    pub qd_mean: f64,
    pub targets: Vec<TargetResult>,
    pub per_second: Vec<SecondSample>,
    pub warnings: Vec<String>,
    /// Set when Ctrl-C stopped the test early; the figures cover the time measured.
    pub interrupted: bool,
    /// The I/O fault that stopped the test, if any; the figures cover the time before it.
    pub error: Option<IoFault>,
    /// The block devices' own counters over the measured window (`/proc/diskstats`, as
    /// `iostat -x` reads them), beside iocap's figures; `null` in results saved before they
    /// were recorded and for tests that did not run.
    #[serde(default)]
    pub os_counters: Option<crate::OsCounters>,
    /// How the io_uring engine submitted I/O, and what `--submit auto` tried and chose; `null`
    /// for psync and in results saved before it was recorded.
    #[serde(default)]
    pub submit: Option<SubmitRecord>,
    /// How sure the headline IOPS and MB/s are: confidence interval, spread, trend, steal and a
    /// verdict; `null` in results saved before it was recorded.
    #[serde(default)]
    pub uncertainty: Option<crate::Uncertainty>,
    /// Which run of a repeated test this is (1, 2, ...) with `--repeat`; `null` otherwise.
    #[serde(default)]
    pub repeat: Option<u32>,
    /// For a test run on several hosts at once (MPI): every rank's own figures and the start
    /// spread; the figures above are then the merged ones. Absent for a test on one host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<crate::Ranks>,
    /// Each worker's share: one thread on one target, in the order the engine started them
    /// (target by target); empty in results saved before they were recorded.
    #[serde(default)]
    pub workers: Vec<crate::detail::WorkerResult>,
}

/// The submission mode a test's measured window ran in (`SubmitRecord.chosen`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChosenSubmit {
    Batch,
    Each,
    /// Workers kept different modes.
    Mixed,
}

impl ChosenSubmit {
    pub fn name(self) -> &'static str {
        match self {
            Self::Batch => "batch",
            Self::Each => "each",
            Self::Mixed => "mixed",
        }
    }
}

impl std::fmt::Display for ChosenSubmit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What the io_uring engine did with `--submit`: the mode asked for, the mode that ran, and
/// for `auto` the trial that chose it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SubmitRecord {
    /// `auto`, `batch` or `each`, as asked.
    pub requested: crate::SubmitMode,
    /// The mode of the measured window: `batch`, `each`, or `mixed` when workers kept
    /// different modes.
    pub chosen: ChosenSubmit,
    /// Workers that kept each mode.
    pub workers_each: u32,
    pub workers_batch: u32,
    /// For `auto`: I/Os per second completed, over all workers, in the trial's slices of each
    /// mode; `null` when there was no trial or a mode got no slice.
    pub trial_iops_each: Option<f64>,
    pub trial_iops_batch: Option<f64>,
    /// For `auto`: seconds the trial counted (both modes together, per worker); 0 without one.
    pub trial_s: f64,
    /// For `auto`: seconds of the measured window the trial took, when the warm-up was shorter
    /// than the trial (its figures then include both modes).
    pub trial_in_window_s: f64,
    /// Share of the measured window's I/Os that went to the kernel one by one, in percent.
    pub each_pct: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct CpuStats {
    /// User CPU seconds of the whole process over the window (all threads, io_uring workers
    /// included).
    pub user_s: f64,
    pub sys_s: f64,
    /// (user + sys) microseconds per completed I/O.
    pub us_per_io: f64,
    /// Every CPU's time over the window, system-wide (all processes, not only iocap's), in
    /// order of CPU number; empty where it could not be read, and in results saved before it
    /// was recorded.
    #[serde(default)]
    pub system: Vec<crate::detail::CpuShare>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetResult {
    pub path: String,
    /// Bytes of the target that the test touched: offsets stay in `[0, size_bytes)`.
    pub size_bytes: u64,
    /// `file` or `block_device`.
    pub kind: TargetKind,
    /// The block device holding the target (`nvme0n1p2`, `dm-3`, `loop0`), from sysfs; `null`
    /// when it cannot be told (network and FUSE file systems, tmpfs).
    #[serde(default)]
    pub device: Option<String>,
    /// The file system a file target lives on (`ext4`, `xfs`, `tmpfs`); `null` for a block device.
    #[serde(default)]
    pub fs_type: Option<String>,
    pub direct: bool,
    /// The alignment O_DIRECT needs on this target.
    pub logical_block_bytes: u64,
    /// Whether this run created (and filled) the file.
    pub created: bool,
    pub threads: u32,
    pub total: OpStats,
    pub read: OpStats,
    pub write: OpStats,
}

/// What a test's target is ([`TargetResult::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A file on a file system.
    #[default]
    File,
    /// A block device (`/dev/...`; on Windows a volume or physical drive).
    BlockDevice,
}

/// The call that failed ([`IoFault::op`]): the engine's I/O operations, by their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FaultOp {
    Read,
    Write,
    /// A write durable when it completes (RWF_DSYNC).
    WriteDsync,
    Fsync,
    Fdatasync,
}

crate::names::names! {
    TargetKind { File => "file", BlockDevice => "block_device" }
    FaultOp {
        Read => "read",
        Write => "write",
        WriteDsync => "write_dsync",
        Fsync => "fsync",
        Fdatasync => "fdatasync",
    }
}

/// One second of the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SecondSample {
    /// End of the interval, in seconds since the start of the measured window.
    pub t_s: f64,
    pub iops: f64,
    pub mb_s: f64,
    /// `null` when nothing completed in the interval.
    pub lat_us_mean: Option<f64>,
    pub lat_us_p99: Option<f64>,
    /// Share of the I/Os queued in the interval that io_uring submitted one by one (each mode),
    /// in percent; `null` for psync and in results saved before it was recorded.
    #[serde(default)]
    pub submit_each_pct: Option<f64>,
    /// The interval's reads and writes apart (counts, not rates, and their latency); `null`
    /// in results saved before they were recorded.
    #[serde(default)]
    pub read: Option<crate::detail::IntervalOps>,
    #[serde(default)]
    pub write: Option<crate::detail::IntervalOps>,
}

/// An I/O that failed: which, where and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IoFault {
    /// `read`, `write` or `fsync` (`write_dsync`, `fdatasync` for the engine's other calls).
    pub op: FaultOp,
    pub path: String,
    pub offset_bytes: u64,
    pub len_bytes: u64,
    /// The OS error number, or 0 for a short transfer.
    pub errno: i32,
    pub message: String,
}

impl std::fmt::Display for IoFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of {} bytes at offset {} on {} failed: {}",
            self.op, self.len_bytes, self.offset_bytes, self.path, self.message
        )
    }
}

/// Formats seconds since the Unix epoch as an RFC 3339 UTC timestamp.
pub fn rfc3339_utc(unix_s: u64) -> String {
    let (y, m, d) = civil_from_days((unix_s / 86400) as i64);
    let sod = unix_s % 86400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

/// Days since 1970-01-01 to a (year, month, day) date; Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A verify interrupted before every page was checked is partial, with or without the
    /// signal recorded (a run saved before it was).
    #[test]
    fn an_interrupted_verify_is_cut_short() {
        let mut r = RunResult {
            verify: Some(crate::Verify::default()),
            ..crate::fixture::run(&crate::fixture::FixtureRun::default())
        };
        r.tests.clear();
        assert_eq!(r.cut_short(), None);
        r.verify.as_mut().unwrap().interrupted = true;
        assert_eq!(r.cut_short().unwrap().cause, StopCause::Unknown);
        r.interrupted_by = Some("SIGINT".into());
        assert_eq!(
            r.cut_short().unwrap().cause,
            StopCause::Signal("SIGINT".into())
        );
    }

    /// Whether a run is partial, and why: the signal that interrupted it (even between tests,
    /// where no test is marked), an I/O error, or a run saved before the signal was recorded.
    #[test]
    fn a_run_is_cut_short_by_a_signal_an_error_or_an_unfinished_suite() {
        let mut r = crate::fixture::run(&crate::fixture::FixtureRun::default());
        assert_eq!(r.cut_short(), None);
        r.interrupted_by = Some("SIGTERM".into());
        let c = r.cut_short().unwrap();
        assert_eq!(c.cause, StopCause::Signal("SIGTERM".into()));
        assert_eq!((c.done, c.planned), (1, None));
        let mut cut = r.tests[0].clone();
        cut.interrupted = true;
        r.tests.push(cut);
        assert_eq!(r.cut_short().unwrap().done, 1);
        r.interrupted_by = None;
        assert_eq!(r.cut_short().unwrap().cause, StopCause::Unknown);
        r.tests[1].error = Some(IoFault {
            op: FaultOp::Read,
            path: "/f".into(),
            offset_bytes: 0,
            len_bytes: 4096,
            errno: 5,
            message: "EIO".into(),
        });
        assert_eq!(r.cut_short().unwrap().cause, StopCause::IoError);
        // a killed suite leaves only its count of tests
        r.tests.truncate(1);
        r.suite = Some(SuiteInfo {
            name: "s".into(),
            planned: 2,
        });
        let c = r.cut_short().unwrap();
        assert_eq!(
            (c.cause, c.done, c.planned),
            (StopCause::Unknown, 1, Some(2))
        );
        r.suite.as_mut().unwrap().planned = 1;
        assert_eq!(r.cut_short(), None);
    }

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_795_312_800), "2026-11-22T02:00:00Z");
    }
}

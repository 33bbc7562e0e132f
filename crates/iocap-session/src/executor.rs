//! The traits a session runs its tests through, split by what a flow needs, as hyperfine's
//! executor is: [`Executor`] runs tests, waits and reports progress (every flow); [`HostFacts`]
//! answers the few questions about the host a flow decides on (is a path a device, how much
//! space is free); [`Probe`] reads one target outside a test (the cache scan's warming and
//! read-after-write check); [`CostPoints`] runs a cost point with the page cache set and the
//! system's CPU counters read around it; [`DeviceTimes`] runs a test with its devices' block
//! requests recorded, for the device's own time per request. An executor lends the last four
//! through [`Executor::facts`], [`Executor::probe`], [`Executor::cost_points`] and
//! [`Executor::device_times`], so a mock stands in for all of them, and one that cannot
//! (several hosts at once cannot measure a host's CPU cost, nor record one host's block layer)
//! says so by lending nothing.

use std::path::{Path, PathBuf};

use anyhow::Result;
use iocap_cost::WindowCpu;
use iocap_engine::probe::RawSamples;
use iocap_model::CacheMode;
use iocap_model::{ConfigCheck, JobSpec, TestResult};

/// One point of the cost matrix as run: the test, the system's CPU over its measured window
/// (`None` where /proc/stat cannot be read), and the share of the file in the page cache when
/// it ended (`None` for O_DIRECT points).
pub struct CostRun {
    pub result: TestResult,
    pub cpu: Option<WindowCpu>,
    pub resident_pct: Option<f64>,
}

pub trait Executor {
    /// Runs `specs` at the same time, each on its own targets (one test, or the workloads of
    /// a suite's test together), and returns one result per spec, in order. A test that hit
    /// an I/O error or was interrupted still returns its result, with `error` or
    /// `interrupted` set; `Err` is for a test that could not start (a refused target).
    fn run(&mut self, specs: &[JobSpec]) -> Result<Vec<TestResult>>;

    /// The hosts that run each test together (MPI ranks, as `host` per rank), empty on one
    /// host.
    fn ranks(&self) -> Vec<String> {
        Vec::new()
    }

    /// Runs `specs` on the ranks named (by number) only, the others idle; on one host, the
    /// same as [`Executor::run`].
    fn run_on(&mut self, specs: &[JobSpec], _ranks: &[u32]) -> Result<Vec<TestResult>> {
        self.run(specs)
    }

    /// Ctrl-C (or a stop from elsewhere) was asked for.
    fn interrupted(&self) -> bool;

    /// Once [`Executor::interrupted`]: what asked for the stop, by name (`SIGINT`, `SIGTERM`, a
    /// Windows console event), or `stop` when it cannot be told; `None` before.
    fn stopped_by(&self) -> Option<String> {
        self.interrupted().then(|| "stop".into())
    }

    /// Waits `secs` (so write caches drain), ending early on a stop; whether it was stopped.
    fn pause(&mut self, secs: f64) -> bool;

    /// Names the test that the next progress lines are about.
    fn label(&mut self, _what: &str) {}

    /// A line of progress for the user (on stderr, for the command line).
    fn say(&mut self, _line: &str) {}

    /// The host's facts a flow decides on.
    fn facts(&self) -> &dyn HostFacts;

    /// Reads of one target outside a test (the cache scan).
    fn probe(&mut self) -> &mut dyn Probe;

    /// Cost points, where this executor can run them (on one host); `None` elsewhere.
    fn cost_points(&mut self) -> Option<&mut dyn CostPoints> {
        None
    }

    /// Tests timed in the device, where this executor can record the block layer (on one
    /// host); `None` elsewhere.
    fn device_times(&mut self) -> Option<&mut dyn DeviceTimes> {
        None
    }
}

/// What a flow asks about the host: every executor answers.
pub trait HostFacts {
    /// Whether `path` is a device rather than a regular file (a missing path is not).
    fn is_device(&self, path: &str) -> bool;

    /// The kernel's rotational flag of a block device (`sda`), when known.
    fn rotational(&self, device: &str) -> Option<bool>;

    /// The host's configuration under `paths`: the audit's checks.
    fn config(&self, paths: &[PathBuf]) -> Vec<ConfigCheck>;

    /// Free bytes on the file system holding `dir`.
    fn free_bytes(&self, dir: &Path) -> Option<u64>;

    /// The size of a regular file, `None` for a device or a missing path.
    fn file_len(&self, path: &Path) -> Option<u64>;

    /// The memory the kernel could give without swapping (MemAvailable), when known.
    fn mem_available_bytes(&self) -> Option<u64>;
}

/// Reads of one target outside a test, for the cache scan.
pub trait Probe {
    /// Opens (creating if missing) the target of a one-target spec: the bytes it can address.
    fn range(&mut self, spec: &JobSpec) -> Result<u64>;

    /// Reads the first `bytes` of a one-target spec's target once, sequentially, so a cache
    /// under it holds them; the seconds it took, `None` when stopped.
    fn warm(&mut self, spec: &JobSpec, bytes: u64) -> Result<Option<f64>>;

    /// The read-after-write probe on a one-target spec's target (see
    /// `iocap_engine::probe::read_after_write`); `Ok(Err(why))` when the target may not be
    /// written.
    fn read_after_write(
        &mut self,
        spec: &JobSpec,
        samples: u32,
        max_s: f64,
    ) -> Result<std::result::Result<RawSamples, String>>;
}

/// The cost flow's one step.
pub trait CostPoints {
    /// Runs one cost point: a one-target `spec` whose first `range` bytes are put in the page
    /// cache first (`CacheMode::Hit`) or dropped from it once the target is open (`CacheMode::Miss`),
    /// the system's CPU counters read on the measured window's edges; a writing point's file is
    /// fsynced after, so the next point starts clean.
    fn cost_point(&mut self, spec: &JobSpec, cache: CacheMode, range: u64) -> Result<CostRun>;
}

/// A test with its devices' own time per request.
pub struct TimedRun {
    pub result: TestResult,
    /// Data requests the devices completed that were issued from the end of the test's
    /// warm-up on.
    pub requests: u64,
    /// Their mean time in the device: the driver given the request (`block_rq_issue`) to its
    /// completion (`block_rq_complete`), in µs; `None` without requests.
    pub device_us_mean: Option<f64>,
}

/// Saturate's measure of the device's own time (`iocap_assess::limit::DriverTime`).
pub trait DeviceTimes {
    /// Runs one test with the block requests of its targets' disks recorded from the
    /// kernel's tracepoints, every process's; `Ok(Err(why))` where they cannot be recorded
    /// (not root, no eBPF, a target on no block device, not Linux: the test is not run), or
    /// the capture failed during it (its result is then dropped).
    fn timed_run(&mut self, spec: &JobSpec) -> Result<std::result::Result<TimedRun, String>>;
}

//! Sessions: the sequences of tests behind every measuring command (a single run, `--repeat`,
//! saturate's queue-depth ramp, preflight, scale-up, suites, the cache scan), from a plan to a
//! finished [`RunResult`]: run each test, assess, record the host's configuration.
//!
//! Why a crate of its own: the command line only turns flags into a config and prints, and
//! what runs a test plugs in here, under one trait. Every test a session runs goes through an
//! [`Executor`]: [`EngineExecutor`] runs it on this machine's storage (Linux's engines or
//! Windows' own), `iocap-mpi`'s executor on every host of an MPI job together, and
//! [`MockExecutor`] makes up a result from the spec, so a flow's
//! decisions (when a ramp stops, which run is the median, what a suite resumes) are tested
//! without I/O, as hyperfine tests its benchmarks with a mock executor.
//!
//! Printing and saving stay with the caller: a session reports progress through the executor
//! ([`Executor::label`], [`Executor::say`]) and hands back the run.

mod bucket;
mod cachescan;
mod capture;
mod class;
mod config;
mod cost;
mod engine;
mod executor;
mod mock;
mod oscounters;
mod places;
mod preflight;
mod preflight_config;
mod preflight_judge;
mod preflight_request;
mod profile;
mod ranks;
mod replay;
mod saturate;
mod scaleup;
mod session;
mod suite;

pub use bucket::{measure_bucket, BucketSpec, BUCKET_CHUNK_S};
pub use cachescan::{cachescan, preflight_scan, read_spec, scan, PreflightScan, ScanConfig};
pub use capture::{
    capture, capture_devices, characterise, default_trace_path, CaptureOutcome, CaptureRequest,
    CaptureTick,
};
pub use class::{check as check_class, judge as judge_class, qd1_read_p50};
pub use config::{flag_timer, record_config};
pub use cost::{cost, CostConfig};
pub use engine::{EngineExecutor, Prepared, Progress};
pub use executor::{CostPoints, CostRun, DeviceTimes, Executor, HostFacts, Probe, TimedRun};
pub use mock::MockExecutor;
pub use places::RolePlaces;
pub use preflight::{preflight, PreflightConfig, Timing};
pub use preflight_request::PreflightRequest;
pub use profile::{load_profile, load_suite, not_toml};
pub use ranks::{merge_op, merge_test, merged_hist, place, place_path, RankPart};
pub use replay::{replay, MapMode, ReplayConfig, ReplayError, ReplayTick, ReplayTiming};
pub use saturate::{saturate, SaturateSpec};
pub use scaleup::{scaleup, scaleup_hosts, ScaleupSpec};
pub use session::{median_run, new_run, Announce, Session};
pub use suite::{SuiteEnd, SuiteOverrides, SuiteRun, SuiteStep};

//! iocap's I/O engine. It turns a validated [`iocap_model::JobSpec`] into I/O against real files
//! and block devices and returns a [`iocap_model::TestResult`]. It knows nothing of command
//! lines, result stores or reports: front ends build the spec, this crate measures, others show.
//!
//! Layout: [`target`] opens and protects targets ([`lock`] keeps a second run off them),
//! [`backend`] holds the engines behind one trait (io_uring and psync on Linux, IOCP and
//! synchronous calls on Windows), [`worker`] is the hot loop,
//! [`pace`] its throttle and [`buffers`] what it writes, [`offsets`] says where each I/O goes and
//! how long it is, [`runner`] plans threads (for one test or several run together) and samples
//! them, [`stats`] records latencies.

pub mod affinity;
pub mod aligned;
pub mod autosubmit;
pub mod backend;
pub mod buffers;
pub mod clock;
pub mod datashape;
#[cfg(target_os = "linux")]
pub mod devinfo;
#[cfg(windows)]
#[path = "devinfo_windows.rs"]
pub mod devinfo;
pub mod error;
pub mod host;
pub mod input;
pub mod lock;
pub mod marker;
pub mod offsets;
pub mod pace;
mod plat;
pub mod probe;
pub mod procstat;
pub mod runner;
pub mod safety;
pub mod stamp;
pub mod stats;
pub mod target;
#[cfg(windows)]
pub mod win;
pub mod winstruct;
pub mod worker;

pub use error::IoFailure;
pub use runner::{
    resolve_engine, run_group, run_test, select_engine, EngineKind, LiveSample, Phase, Quiet,
    RunError, RunObserver, TestOutcome,
};
pub use target::{
    prepare_targets, FillObserver, NoFillProgress, PreparedTarget, TargetError, TargetKind,
};

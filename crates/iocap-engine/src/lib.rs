//! iocap's I/O engine. It turns a validated [`iocap_model::JobSpec`] into I/O against real files
//! and block devices and returns a [`iocap_model::TestResult`]. It knows nothing of command
//! lines, result stores or reports: front ends build the spec, this crate measures, others show.
//!
//! Layout: `target` opens and protects targets (`lock` keeps a second run off them),
//! [`backend`] holds the engines behind one trait (io_uring and psync on Linux, IOCP and
//! synchronous calls on Windows), the one place a backend is chosen and opened
//! ([`backend::drive`]) and the one I/O loop ([`IoQueue::drive`], run with a [`backend::Policy`]
//! by the worker, verify and replay), `worker` is the benchmark's policy on it (the hot path),
//! `pace` its throttle and `buffers` what it writes, `offsets` says where each I/O goes and how
//! long it is, `runner` plans threads (for one test or several run together) and samples them,
//! `stats` records latencies and `live` publishes them for the series and the progress line.
//! The clock, the host's facts and what the system says of a device are `iocap-platform`'s,
//! which the engine uses like any other crate. Most modules are private: other crates come in
//! by the front door below.

// The front door (docs/ARCHITECTURE.md, "The engine's front door"): other crates use what
// these public modules and the re-exports below name, nothing else. The rest is the engine's
// own, and may change without a change elsewhere; `tests/tidy.rs` checks that this list of
// public modules, and the `pub use` list below, are the ones the architecture names.
pub mod backend;
pub mod input;
pub mod marker;
pub mod probe;
pub mod safety;

mod affinity;
mod aligned;
mod autosubmit;
mod buffers;
mod datashape;
mod error;
mod live;
mod offsets;
mod pace;
mod runner;
mod stamp;
mod stats;
mod target;
mod worker;

pub use backend::EngineKind;
pub use backend::IoQueue;
pub use buffers::{fill_random, whiten, AlignedBuf, SlotBuffers, WRITE_STAMP_MAGIC};
pub use error::IoFailure;
pub use runner::spread::uncertainty;
pub use runner::{
    run_group, run_test, select_engine, LiveSample, Phase, Quiet, RunError, RunObserver,
    TestOutcome,
};
pub use stats::OpRecorder;
pub use target::{
    prepare_targets, FillObserver, NoFillProgress, PreparedTarget, TargetError, TargetKind,
};

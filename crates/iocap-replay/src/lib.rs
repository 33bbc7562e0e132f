//! `iocap replay`: a recorded block trace (iocap's own, blktrace's per-CPU files, fio's iolog)
//! replayed on a target, and what the target gave it beside what the recording says
//! (docs/replay.md).
//!
//! Two passes over the trace, both streaming: [`survey`] describes the recording (the
//! characteriser of `iocap characterise`) and finds the span and the largest request; then the
//! replay reads it again ahead of the loop on another thread ([`feed`]) while [`drive`] issues
//! each request through the engine's backends, at its recorded time ([`schedule`]) or as fast
//! as the recorded depth allows, mapped into the target ([`map`]). The target follows the rules
//! of every write test (the engine's `prepare_targets`): iocap's own file by default, anything
//! else only with `allow_overwrite`.
//!
//! This crate knows nothing of the command line or the store: it takes a [`ReplayConfig`] and
//! returns an [`iocap_model::replay::Replay`].

pub mod clock;
pub mod drive;
pub mod feed;
pub mod map;
#[cfg(target_os = "linux")]
mod run;
pub mod schedule;
pub mod stats;
pub mod survey;
#[cfg(target_os = "linux")]
mod target;
pub mod verdict;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use iocap_engine::TargetError;
use iocap_model::replay::Replay;
use iocap_model::EngineChoice;
use iocap_trace::TraceError;
use thiserror::Error;

pub use drive::Tick;
pub use map::MapMode;
pub use schedule::Timing;

/// The most I/Os in flight by default: a recording's depth rarely passes it, and a device that
/// falls this far behind is already reported as falling behind.
pub const DEFAULT_MAX_INFLIGHT: usize = 256;
/// Fast mode's depth for a trace without completion times (fio's iolog).
pub const DEFAULT_FAST_DEPTH: usize = 32;
/// Memory for the I/O buffers: `max_inflight` is cut so that many buffers of the largest
/// request fit.
pub const BUFFER_BUDGET_BYTES: usize = 128 << 20;

/// What to replay, where, and how.
#[derive(Debug, Clone)]
pub struct ReplayConfig {
    /// One trace file, or blktrace's per-CPU files or base name.
    pub trace: Vec<PathBuf>,
    /// A file (created if missing) or a block device.
    pub target: PathBuf,
    /// The size of a new target file; `None`: the trace's span.
    pub size_bytes: Option<u64>,
    pub map: Option<MapMode>,
    pub timing: Timing,
    pub discard: bool,
    pub allow_overwrite: bool,
    /// O_DIRECT (falls back to buffered I/O with a warning where refused).
    pub direct: bool,
    pub engine: EngineChoice,
    pub max_inflight: usize,
    pub fast_depth: usize,
    /// Seeds the generated write data and a new file's fill.
    pub seed: u64,
}

impl ReplayConfig {
    pub fn new(trace: PathBuf, target: PathBuf) -> Self {
        Self {
            trace: vec![trace],
            target,
            size_bytes: None,
            map: None,
            timing: Timing::Recorded { speed: 1.0 },
            discard: false,
            allow_overwrite: false,
            direct: true,
            engine: EngineChoice::Auto,
            max_inflight: DEFAULT_MAX_INFLIGHT,
            fast_depth: DEFAULT_FAST_DEPTH,
            seed: 0x5EED_0025,
        }
    }

    /// Checks what needs no file.
    pub fn validate(&self) -> Result<(), ReplayError> {
        if let Timing::Recorded { speed } = self.timing {
            if !(speed.is_finite() && speed > 0.0) {
                return Err(ReplayError::Invalid(format!(
                    "--speed must be a positive number, not {speed}"
                )));
            }
        }
        if !(1..=4096).contains(&self.max_inflight) {
            return Err(ReplayError::Invalid(format!(
                "the most I/Os in flight must be 1 to 4096, not {}",
                self.max_inflight
            )));
        }
        if self.fast_depth == 0 {
            return Err(ReplayError::Invalid(
                "the fast depth must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Error)]
pub enum ReplayError {
    /// Refused to protect data, or to guess (a trace larger than its target).
    #[error("{0}")]
    Refused(String),
    /// The request cannot work.
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl ReplayError {
    /// Whether the replay was refused to protect the user's data or to avoid a guess.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            ReplayError::Refused(_) | ReplayError::Target(TargetError::Refused(_))
        )
    }

    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let context = context.into();
        move |source| ReplayError::Io { context, source }
    }
}

/// Replays `cfg`'s trace on its target until the trace ends or `stop` is set; `tick` hears
/// about once a second where it stands.
#[cfg(target_os = "linux")]
pub fn replay(
    cfg: &ReplayConfig,
    stop: &AtomicBool,
    tick: &mut dyn FnMut(Tick),
) -> Result<Replay, ReplayError> {
    run::replay(cfg, stop, tick)
}

/// Replay drives the Linux backends (io_uring, psync); elsewhere it says so.
#[cfg(not(target_os = "linux"))]
pub fn replay(
    _cfg: &ReplayConfig,
    _stop: &AtomicBool,
    _tick: &mut dyn FnMut(Tick),
) -> Result<Replay, ReplayError> {
    Err(ReplayError::Invalid(
        "iocap replay runs on Linux only (io_uring or psync)".into(),
    ))
}

/// A directory names iocap's default file in it, as `iocap run` takes it.
pub use iocap_engine::safety::target_path;

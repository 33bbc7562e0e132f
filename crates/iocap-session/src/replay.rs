//! `iocap replay`: a trace replayed on a target, beside the recording (docs/replay.md). The
//! replay is `iocap-replay`'s; this is the session's entry to it, as `capture` is for
//! recording: it puts the result on the run, with the host configuration under the target.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use iocap_model::Payload;
use iocap_model::RunResult;
pub use iocap_replay::{
    MapMode, ReplayConfig, ReplayError, Tick as ReplayTick, Timing as ReplayTiming,
};

use crate::executor::Executor;

/// Replays `cfg` and records it on `run`; `tick` hears about once a second where it stands.
pub fn replay(
    cfg: &ReplayConfig,
    run: &mut RunResult,
    exec: &dyn Executor,
    stop: &AtomicBool,
    tick: &mut dyn FnMut(ReplayTick),
) -> Result<()> {
    let r = iocap_replay::replay(cfg, stop, tick)?;
    run.config = exec.facts().config(&[PathBuf::from(&r.target)]);
    if r.interrupted {
        run.interrupted_by = exec.stopped_by().or_else(|| Some("stop".into()));
    }
    run.set(Payload::Replay(r));
    Ok(())
}

//! Where this process stands in a multi-host run (the `mpi` feature, under mpirun or srun):
//! every rank runs the same command, rank 0 alone prints, saves and writes reports. Without the
//! feature, or run on its own, this process is rank 0 of 1.

use anyhow::{bail, Result};
use iocap_console::interrupt::INTERRUPTED;
use iocap_console::progress::Terminal;
use iocap_flags::SaveArgs;
use iocap_model::RunResult;
use iocap_session::{EngineExecutor, Executor};

/// This process's rank, 0 when alone.
pub fn rank() -> u32 {
    #[cfg(feature = "mpi")]
    if let Some(p) = iocap_mpi::place() {
        return p.rank;
    }
    0
}

/// The ranks of the job, 1 when alone.
pub fn size() -> u32 {
    #[cfg(feature = "mpi")]
    if let Some(p) = iocap_mpi::place() {
        return p.size;
    }
    1
}

pub use iocap_console::is_root;

/// The executor of a session: every rank together under MPI, else this host's engine. With
/// `keep` (the run being made and its flags), a multi-host run is saved test by test as it
/// goes (`iocap_console::keep::checkpoint`).
pub fn executor(keep: Option<(&RunResult, &SaveArgs)>) -> Box<dyn Executor> {
    #[cfg(feature = "mpi")]
    if size() > 1 {
        let exec = iocap_mpi::MpiExecutor::new(
            Box::<iocap_console::progress::Terminal>::default(),
            &iocap_console::interrupt::INTERRUPTED,
        );
        return Box::new(match keep {
            Some((run, save)) if !save.no_save => exec.checkpointing(Box::new(
                iocap_console::keep::checkpoint(run, save.store.db.clone()),
            )),
            _ => exec,
        });
    }
    let _ = keep;
    Box::new(engine())
}

/// The executor of this process: the engine, showing progress on the terminal, stopped by
/// Ctrl-C or SIGTERM (and naming which).
pub fn engine() -> EngineExecutor {
    EngineExecutor::new(Box::<Terminal>::default(), &INTERRUPTED)
        .naming_stops(iocap_console::interrupt::stopped_by)
}

/// Refuses a command that runs on one host only when the job has several ranks.
pub fn one_host_only(command: &str) -> Result<()> {
    if size() > 1 {
        bail!(
            "{command} runs on one host: run it without mpirun or srun (the commands that run \
             on many hosts: run, sqlio, sqlio-batch, diskspd, saturate, preflight, scaleup, \
             cachescan, suite)"
        );
    }
    Ok(())
}

/// How an error is printed here: by rank 0 as it is; an error every rank agreed on (a refused
/// target, a failed test) only by rank 0; any other error of another rank with its rank and
/// host first, so it is not lost (a rank that cannot start makes mpirun end the job).
pub fn error_prefix(e: &anyhow::Error) -> Option<String> {
    if is_root() {
        return Some(String::new());
    }
    #[cfg(feature = "mpi")]
    if let Some(p) = iocap_mpi::place() {
        if e.downcast_ref::<iocap_mpi::Agreed>().is_some() {
            return None;
        }
        return Some(format!("rank {} ({}): ", p.rank, p.hosts[p.rank as usize]));
    }
    let _ = e;
    Some(String::new())
}

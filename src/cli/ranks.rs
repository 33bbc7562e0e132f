//! Where this process stands in a multi-host run (the `mpi` feature, under mpirun or srun):
//! every rank runs the same command, rank 0 alone prints, saves and writes reports. Without the
//! feature, or run on its own, this process is rank 0 of 1.

use anyhow::{bail, Result};
use iocap_session::Executor;

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

/// Rank 0: the one that prints, saves and writes reports.
pub fn is_root() -> bool {
    rank() == 0
}

/// The executor of a session: every rank together under MPI, else this host's engine.
pub fn executor() -> Box<dyn Executor> {
    #[cfg(feature = "mpi")]
    if size() > 1 {
        return Box::new(iocap_mpi::MpiExecutor::new(
            Box::new(super::progress::Terminal),
            &super::signals::INTERRUPTED,
        ));
    }
    Box::new(super::execute::engine())
}

/// Refuses a command that runs on one host only when the job has several ranks.
pub fn one_host_only(command: &str) -> Result<()> {
    if size() > 1 {
        bail!(
            "{command} runs on one host: run it without mpirun or srun (the commands that run \
             on many hosts: run, sqlio, saturate, preflight, scaleup, cachescan, suite)"
        );
    }
    Ok(())
}

/// Whether an error should be printed here: on rank 0 always; on the others only when it is
/// this rank's own (an error every rank agreed on is printed once, by rank 0).
pub fn shows_error(e: &anyhow::Error) -> bool {
    #[cfg(feature = "mpi")]
    if !is_root() && e.downcast_ref::<iocap_mpi::Agreed>().is_some() {
        return false;
    }
    let _ = e;
    true
}

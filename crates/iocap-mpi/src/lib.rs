//! Many hosts, one test, over MPI: every rank runs the same session, and every test goes
//! through [`MpiExecutor`], which refuses on every rank what one rank must refuse, starts the
//! ranks together on a barrier, stops them all when one fails, and hands every rank the same
//! merged result (so every rank's session takes the same decisions, and rank 0 prints and
//! saves). Launching is MPI's own: `mpirun --hostfile`, `srun`, PMIx.
//!
//! MPI is started only when a launcher started this process (its environment says so): a
//! binary built with the feature and run on its own behaves as one without it.

mod comm;
mod executor;
mod live;

use std::sync::OnceLock;

pub use executor::{Agreed, Checkpoint, MpiExecutor};

/// This process's place in the job.
#[derive(Debug, Clone)]
pub struct Place {
    pub rank: u32,
    pub size: u32,
    /// The host name of every rank, by rank.
    pub hosts: Vec<String>,
    /// Every rank's host details, by rank (each test's scope carries its rank's).
    pub host_infos: Vec<iocap_model::HostInfo>,
}

static PLACE: OnceLock<Place> = OnceLock::new();

/// MPI, kept alive for the process: dropping it finalizes MPI.
pub struct Mpi {
    _universe: mpi::environment::Universe,
}

/// Whether a launcher (OpenMPI's mpirun, a PMI or PMIx launcher such as Slurm's srun) started
/// this process.
fn launched() -> bool {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMIX_RANK",
        "PMI_SIZE",
        "PMI_RANK",
        "MPI_LOCALNRANKS",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some())
}

/// Slurm's `srun` with several tasks but no PMI or PMIx for MPI (`MpiDefault=none`): each task
/// would run alone, and save a run of its own. `SLURM_STEP_NUM_TASKS` is set by srun for its
/// step only: iocap started directly in a batch script of a many-task job runs alone, as asked.
fn srun_without_pmi() -> Option<String> {
    let tasks: u32 = std::env::var("SLURM_STEP_NUM_TASKS").ok()?.parse().ok()?;
    (tasks > 1 && !launched()).then(|| {
        format!(
            "iocap: srun started {tasks} tasks without PMI or PMIx, so they cannot run one \
             test together; launch with `srun --mpi=pmix` (or pmi2), or with mpirun"
        )
    })
}

/// Starts MPI when a launcher started this process; `None` otherwise (or when MPI cannot
/// start, which is then said on stderr). Several tasks of `srun` that MPI cannot join end the
/// process with exit 2, rather than run as that many separate tests.
pub fn init() -> Option<Mpi> {
    if let Some(why) = srun_without_pmi() {
        eprintln!("{why}");
        std::process::exit(2);
    }
    if !launched() {
        return None;
    }
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        eprintln!("iocap: MPI could not be initialised; running on this host alone");
        return None;
    };
    let world = universe.world();
    let host_infos = comm::all_hosts(&world);
    let _ = PLACE.set(Place {
        rank: comm::rank(&world),
        size: host_infos.len() as u32,
        hosts: host_infos.iter().map(|h| h.hostname.clone()).collect(),
        host_infos,
    });
    Some(Mpi {
        _universe: universe,
    })
}

/// This process's place, when MPI runs.
pub fn place() -> Option<&'static Place> {
    PLACE.get()
}

/// This host's name.
pub fn hostname() -> String {
    iocap_platform::host::host_info().hostname
}

//! `iocap`: the command line. A thin layer: it parses flags into a job spec, hands the spec to
//! the engine and the result to the reports. See the crates under `crates/` for the real work.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    // under mpirun or srun: MPI for the process's life (finalised when dropped, after the command)
    #[cfg(feature = "mpi")]
    let _mpi = iocap_mpi::init();
    cli::main()
}

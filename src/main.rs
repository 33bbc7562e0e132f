//! `iocap`: the command line. A thin layer: it parses flags into a job spec, hands the spec to
//! the engine and the result to the reports. See the crates under `crates/` for the real work.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}

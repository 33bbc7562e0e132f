//! `--data DIR`, `--log DIR`, `--temp DIR`, `--backup DIR`: where each file role is tested
//! (the places they make are `iocap_console::flags::Placing`'s, with the rules for the test
//! file in each place `iocap_session::RolePlaces`').

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub struct RoleDirs {
    /// Directory (or file, or block device) for data-file workloads [default: .]
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Directory for log workloads [default: the data directory]
    #[arg(long, value_name = "DIR")]
    pub log: Option<PathBuf>,
    /// Directory for tempdb / temp workloads [default: the data directory]
    #[arg(long, value_name = "DIR")]
    pub temp: Option<PathBuf>,
    /// Directory that backups are written to [default: the data directory]
    #[arg(long, value_name = "DIR")]
    pub backup: Option<PathBuf>,
}

//! `--data DIR`, `--log DIR`, `--temp DIR`, `--backup DIR`: where each file role is tested
//! (the rules for the test file in each place are `iocap_session::RolePlaces`').

use std::path::PathBuf;

use clap::Args;
use iocap_session::RolePlaces;

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

impl RoleDirs {
    /// The places given, each of which must exist (a mistyped directory is an error naming its
    /// flag, never a test file made in its place: [`RolePlaces::check`]).
    pub fn places(&self) -> anyhow::Result<RolePlaces> {
        let p = RolePlaces {
            data: self.data.clone(),
            log: self.log.clone(),
            temp: self.temp.clone(),
            backup: self.backup.clone(),
        };
        p.check().map_err(anyhow::Error::msg)?;
        Ok(p)
    }
}

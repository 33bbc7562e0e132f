//! Where each file role's test file goes. A database keeps data, log, temp and backups on
//! volumes of their own, and each is tested where it will live: `--data DIR`, `--log DIR`,
//! `--temp DIR`, `--backup DIR`. A role without a directory shares the data directory, which
//! defaults to the current one.

use std::path::{Path, PathBuf};

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

impl RoleDirs {
    /// The place given for `role`, or the data directory's.
    fn place(&self, role: &str) -> PathBuf {
        let data = self.data.clone().unwrap_or_else(|| PathBuf::from("."));
        match role {
            "log" => self.log.clone(),
            "temp" => self.temp.clone(),
            "backup" => self.backup.clone(),
            _ => None,
        }
        .unwrap_or(data)
    }

    /// The test target of `role`: the place itself when it is a file or device, else a test
    /// file in it (`iocap.testfile` for data, `iocap-<role>.testfile` for the others, so roles
    /// that share a directory do not share a file).
    pub fn target(&self, role: &str) -> String {
        let place = self.place(role);
        if is_dir_or_new(&place) {
            let name = match role {
                "data" | "" => "iocap.testfile".to_string(),
                r => format!("iocap-{r}.testfile"),
            };
            place.join(name).display().to_string()
        } else {
            place.display().to_string()
        }
    }
}

/// A directory, `.`, or a path holding `{host}` or `{rank}` (under MPI each rank's own
/// directory, docs/mpi.md).
fn is_dir_or_new(p: &Path) -> bool {
    let s = p.to_string_lossy();
    p.is_dir() || s == "." || s.contains("{rank}") || s.contains("{host}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_share_the_data_directory_but_not_a_file() {
        let d = tempfile::tempdir().unwrap();
        let r = RoleDirs {
            data: Some(d.path().to_path_buf()),
            ..Default::default()
        };
        assert_eq!(
            r.target("data"),
            d.path().join("iocap.testfile").display().to_string()
        );
        assert_eq!(
            r.target("log"),
            d.path().join("iocap-log.testfile").display().to_string()
        );
        let f = d.path().join("my.dat");
        let r = RoleDirs {
            log: Some(f.clone()),
            ..Default::default()
        };
        assert_eq!(r.target("log"), f.display().to_string());
        assert_eq!(r.target("data"), "./iocap.testfile");
    }
}

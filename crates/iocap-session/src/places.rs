//! Where each file role's test file goes. A database keeps data, log, temp and backups on
//! volumes of their own, and each is tested where it will live (the command line's `--data`,
//! `--log`, `--temp` and `--backup`). A role without a place shares the data's, which defaults
//! to the current directory. Here, not in the command line, because every session that places
//! tests by role (preflight, suites, scale-up's volumes) must name the files alike.

use std::path::{Path, PathBuf};

use iocap_model::Role;

/// The places given for the file roles: a directory, a file or a block device each.
#[derive(Debug, Clone, Default)]
pub struct RolePlaces {
    pub data: Option<PathBuf>,
    pub log: Option<PathBuf>,
    pub temp: Option<PathBuf>,
    pub backup: Option<PathBuf>,
}

impl RolePlaces {
    /// Refuses a place that does not exist, naming its flag: `--data /data/typo_dir` must not
    /// become a test file called `typo_dir` (nor `typo_dir/iocap.testfile` a directory made
    /// for it). A place holding `{rank}` or `{host}` is a template, made per rank under MPI.
    pub fn check(&self) -> Result<(), String> {
        let given = [
            (Role::Data, &self.data),
            (Role::Log, &self.log),
            (Role::Temp, &self.temp),
            (Role::Backup, &self.backup),
        ];
        for (role, place) in given {
            let Some(p) = place else { continue };
            if is_template(p) || p.exists() {
                continue;
            }
            return Err(format!(
                "--{role} {}: no such directory. iocap tests in a directory that exists (or an \
                 existing file or block device) and never makes one in its place: create it, or \
                 check the path",
                p.display()
            ));
        }
        Ok(())
    }

    /// The place given for `role`, or the data directory's.
    fn place(&self, role: Role) -> PathBuf {
        let data = self.data.clone().unwrap_or_else(|| PathBuf::from("."));
        match role {
            Role::Log => self.log.clone(),
            Role::Temp => self.temp.clone(),
            Role::Backup => self.backup.clone(),
            Role::Data | Role::Cachescan => None,
        }
        .unwrap_or(data)
    }

    /// The test target of `role`: the place itself when it is a file or device, else a test
    /// file in it (`iocap.testfile` for data, `iocap-<role>.testfile` for the others, so roles
    /// that share a directory do not share a file).
    pub fn target(&self, role: Role) -> String {
        let place = self.place(role);
        if is_dir_or_new(&place) {
            let name = match role {
                Role::Data => "iocap.testfile".to_string(),
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
    p.is_dir() || p.to_string_lossy() == "." || is_template(p)
}

/// A path holding `{rank}` or `{host}`, replaced per rank under MPI.
fn is_template(p: &Path) -> bool {
    let s = p.to_string_lossy();
    s.contains("{rank}") || s.contains("{host}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_share_the_data_directory_but_not_a_file() {
        let d = tempfile::tempdir().unwrap();
        let r = RolePlaces {
            data: Some(d.path().to_path_buf()),
            ..Default::default()
        };
        assert_eq!(
            r.target(Role::Data),
            d.path().join("iocap.testfile").display().to_string()
        );
        assert_eq!(
            r.target(Role::Log),
            d.path().join("iocap-log.testfile").display().to_string()
        );
        let f = d.path().join("my.dat");
        let r = RolePlaces {
            log: Some(f.clone()),
            ..Default::default()
        };
        assert_eq!(r.target(Role::Log), f.display().to_string());
        assert_eq!(r.target(Role::Data), "./iocap.testfile");
    }

    #[test]
    fn a_place_that_does_not_exist_is_refused_by_its_flag() {
        let d = tempfile::tempdir().unwrap();
        let typo = d.path().join("typo_dir");
        let r = RolePlaces {
            data: Some(d.path().to_path_buf()),
            backup: Some(typo.clone()),
            ..Default::default()
        };
        let e = r.check().unwrap_err();
        assert!(e.starts_with("--backup ") && e.contains("typo_dir"), "{e}");
        assert!(e.contains("no such directory"), "{e}");
        let r = RolePlaces {
            log: Some(d.path().join("{rank}")),
            ..Default::default()
        };
        assert_eq!(r.check(), Ok(()));
    }
}

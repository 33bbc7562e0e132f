//! DiskSpd's device targets, `#<n>` (physical disk n) and `<letter>:` (a volume), turned into
//! the paths the engine opens. The parser keeps targets as typed, because what they mean depends
//! on the system the test runs on, not on the one that parsed it: on Windows they are the device
//! paths `\\.\PhysicalDrive<n>` and `\\.\<letter>:` (the engine then refuses a mounted volume or
//! a disk holding a file system, unless `--allow-overwrite`); on Linux they name nothing, and
//! running them as file names would create a file called `#2` or `E:` in the current directory
//! instead of testing the disk the runbook meant, so they are refused. The system is a parameter,
//! so both behaviours are tested on either one.

use crate::{DiskspdError, DiskspdRun};

/// The system a command line runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetOs {
    Windows,
    Linux,
}

impl TargetOs {
    /// The system this build runs on.
    pub const fn current() -> Self {
        if cfg!(windows) {
            TargetOs::Windows
        } else {
            TargetOs::Linux
        }
    }
}

/// What a DiskSpd target names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Device {
    Disk(u32),
    Volume(char),
}

/// `#<n>` or `<letter>:`; `Ok(None)` for a path. A `#` without a disk number is an error.
fn device(typed: &str) -> Result<Option<Device>, DiskspdError> {
    if let Some(n) = typed.strip_prefix('#') {
        let digits = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
        return match n.parse() {
            Ok(disk) if digits => Ok(Some(Device::Disk(disk))),
            _ => Err(target_error(
                typed,
                "DiskSpd's # names a physical disk by its number, e.g. #2",
            )),
        };
    }
    let mut chars = typed.chars();
    match (chars.next(), chars.next(), chars.next()) {
        (Some(letter), Some(':'), None) if letter.is_ascii_alphabetic() => {
            Ok(Some(Device::Volume(letter.to_ascii_uppercase())))
        }
        _ => Ok(None),
    }
}

fn target_error(typed: &str, problem: &str) -> DiskspdError {
    DiskspdError::Target {
        target: typed.to_string(),
        problem: problem.to_string(),
    }
}

/// The path the engine opens for a target typed on a DiskSpd command line, on `os`: a path is
/// kept as typed; `#<n>` and `<letter>:` become Windows device paths, or an error on Linux.
pub fn target_path(typed: &str, os: TargetOs) -> Result<String, DiskspdError> {
    let linux = "on Linux give the block device's path instead (/dev/sdX, /dev/nvmeXnY)";
    match (device(typed)?, os) {
        (None, _) => Ok(typed.to_string()),
        (Some(Device::Disk(n)), TargetOs::Windows) => Ok(format!(r"\\.\PhysicalDrive{n}")),
        (Some(Device::Volume(v)), TargetOs::Windows) => Ok(format!(r"\\.\{v}:")),
        (Some(Device::Disk(n)), TargetOs::Linux) => Err(target_error(
            typed,
            &format!("DiskSpd's #{n} is physical disk {n} on Windows; {linux}"),
        )),
        (Some(Device::Volume(v)), TargetOs::Linux) => Err(target_error(
            typed,
            &format!("DiskSpd's {v}: is a Windows volume; {linux}, or a file on a file system"),
        )),
    }
}

/// Maps the targets of every test of `run` with [`target_path`]. `run.profile.targets` keeps
/// them as typed, for the output's echo of the command line.
pub fn map_targets(run: &mut DiskspdRun, os: TargetOs) -> Result<(), DiskspdError> {
    for target in run.specs.iter_mut().flat_map(|s| s.targets.iter_mut()) {
        target.path = target_path(&target.path, os)?;
    }
    Ok(())
}

/// Whether a (mapped) target path is a Windows device path (`\\.\...`): a disk or volume that
/// exists whether or not a file system shows it, so never one to create.
pub fn is_device_path(path: &str) -> bool {
    path.starts_with(r"\\.\")
}

#[cfg(test)]
mod tests {
    use super::*;
    use TargetOs::{Linux, Windows};

    #[test]
    fn windows_maps_disks_and_volumes_to_device_paths() {
        for (typed, path) in [
            ("#2", r"\\.\PhysicalDrive2"),
            ("#0", r"\\.\PhysicalDrive0"),
            ("#012", r"\\.\PhysicalDrive12"),
            ("E:", r"\\.\E:"),
            ("e:", r"\\.\E:"),
        ] {
            assert_eq!(target_path(typed, Windows).unwrap(), path, "{typed}");
        }
    }

    #[test]
    fn paths_are_kept_as_typed_on_both_systems() {
        for typed in [
            r"E:\t.dat",
            r"\\.\PhysicalDrive2",
            r"\\.\E:",
            "/dev/sdb",
            "t.dat",
            "E:t",
            "1:",
            "a#2",
        ] {
            for os in [Windows, Linux] {
                assert_eq!(target_path(typed, os).unwrap(), typed, "{typed} {os:?}");
            }
        }
    }

    #[test]
    fn linux_refuses_disks_and_volumes_naming_the_target_and_dev() {
        for (typed, said) in [("#2", "physical disk 2"), ("E:", "Windows volume")] {
            let e = target_path(typed, Linux).unwrap_err().to_string();
            assert!(e.starts_with(&format!("target '{typed}': ")), "{e}");
            assert!(e.contains(said) && e.contains("/dev/sdX"), "{e}");
        }
    }

    #[test]
    fn a_hash_without_a_disk_number_is_refused_on_both_systems() {
        for typed in ["#", "#x", "#2a", "#-1", "#99999999999"] {
            for os in [Windows, Linux] {
                let e = target_path(typed, os).unwrap_err().to_string();
                assert!(e.contains(typed) && e.contains("e.g. #2"), "{e}");
            }
        }
    }

    #[test]
    fn map_targets_maps_the_specs_and_keeps_the_typed_echo() {
        let mut run = crate::parse(&["-b8K", "#2", "E:", "t.dat"]).unwrap();
        map_targets(&mut run, Windows).unwrap();
        let paths: Vec<&str> = run.specs[0]
            .targets
            .iter()
            .map(|t| t.path.as_str())
            .collect();
        assert_eq!(paths, [r"\\.\PhysicalDrive2", r"\\.\E:", "t.dat"]);
        assert_eq!(run.profile.targets, ["#2", "E:", "t.dat"]);
        let mut run = crate::parse(&["-b8K", "t.dat", "#2"]).unwrap();
        let e = map_targets(&mut run, Linux).unwrap_err();
        assert!(e.to_string().contains("'#2'"), "{e}");
        assert!(is_device_path(r"\\.\PhysicalDrive2") && !is_device_path("/dev/sdb"));
    }
}

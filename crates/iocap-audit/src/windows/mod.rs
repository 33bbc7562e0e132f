//! The audit on Windows: for the volume under each path, its partition offset, allocation unit,
//! the disks under it (simple, spanned or striped, Storage Spaces, a RAID LUN), each disk's
//! write cache, buffer flushing, TRIM, seek penalty and sector sizes; then the host's power
//! plan, processor minimum state and clock, and SQL Server's service-account rights.
//!
//! Every fact comes through a [`Source`]: the system's calls on Windows (`System`, over
//! `iocap_platform`'s `volume`, `power` and `rights`), a fake in the tests, so the checks and
//! the decoders ([`decode`]) run and are tested on Linux. A call that fails (or that Wine
//! lacks) gives an UNKNOWN check with the call and its error: never a PASS. The check IDs are
//! Linux's where Linux has the check, and docs/checks.md lists each with the Windows call
//! behind it.

mod cache;
pub mod decode;
mod host;
mod volume;

use std::path::{Path, PathBuf};

use crate::{AuditOptions, AuditReport, Check, Resolved};

/// The volume holding a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volume {
    /// Its mount point (`C:\`, `E:\mnt\data\`), from GetVolumePathNameW.
    pub root: String,
    /// Its device path for `CreateFile` (`\\?\Volume{...}`, or `\\.\C:`), no trailing `\`.
    pub device: String,
    /// The file system GetVolumeInformationW names (`NTFS`, `ReFS`), or why it could not.
    pub fs: Result<String, String>,
}

/// The device queries the audit makes; each is one `DeviceIoControl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Query {
    /// `IOCTL_DISK_GET_PARTITION_INFO_EX` on a volume.
    PartitionInfo,
    /// `IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS` on a volume.
    DiskExtents,
    /// `IOCTL_DISK_GET_CACHE_INFORMATION` on a disk.
    CacheInformation,
    /// `IOCTL_STORAGE_QUERY_PROPERTY` for a `STORAGE_PROPERTY_ID` (`decode::STORAGE_*`).
    Property(u32),
}

impl Query {
    /// The call as the evidence names it.
    pub fn name(self) -> String {
        match self {
            Query::PartitionInfo => "IOCTL_DISK_GET_PARTITION_INFO_EX".into(),
            Query::DiskExtents => "IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS".into(),
            Query::CacheInformation => "IOCTL_DISK_GET_CACHE_INFORMATION".into(),
            Query::Property(id) => format!(
                "IOCTL_STORAGE_QUERY_PROPERTY({})",
                match id {
                    decode::STORAGE_DEVICE_PROPERTY => "StorageDeviceProperty",
                    decode::STORAGE_WRITE_CACHE_PROPERTY => "StorageDeviceWriteCacheProperty",
                    decode::STORAGE_ACCESS_ALIGNMENT_PROPERTY => "StorageAccessAlignmentProperty",
                    decode::STORAGE_SEEK_PENALTY_PROPERTY => "StorageDeviceSeekPenaltyProperty",
                    decode::STORAGE_TRIM_PROPERTY => "StorageDeviceTrimProperty",
                    _ => "property",
                }
            ),
        }
    }
}

/// Where the Windows audit's facts come from. Each method gives the value or why it cannot be
/// read (naming the call and its error).
pub trait Source {
    /// The volume holding `path`.
    fn volume(&self, path: &Path) -> Result<Volume, String>;
    /// GetDiskFreeSpaceW on the volume's root: (sectors per cluster, bytes per sector).
    fn cluster(&self, root: &str) -> Result<(u32, u32), String>;
    /// GetDiskFreeSpaceExW on the volume's root: (bytes available to the caller, total bytes).
    fn free_space(&self, root: &str) -> Result<(u64, u64), String>;
    /// The output of `q` on `device` (a volume's device path, or `\\.\PhysicalDriveN`).
    fn ioctl(&self, device: &str, q: Query) -> Result<Vec<u8>, String>;
    /// The active power scheme: (friendly name, GUID text), from PowerGetActiveScheme.
    fn power_scheme(&self) -> Result<(String, String), String>;
    /// The scheme's processor minimum state on AC power, in percent (PowerReadACValueIndex).
    fn min_processor_state(&self, scheme_guid: &str) -> Result<u32, String>;
    /// CallNtPowerInformation(ProcessorInformation)'s output, one entry per processor.
    fn processors(&self) -> Result<Vec<u8>, String>;
    /// The account the service `service` runs as and the rights the local security policy
    /// grants it directly (QueryServiceConfigW, LookupAccountNameW, LsaEnumerateAccountRights).
    fn service_rights(&self, service: &str) -> Result<(String, Vec<String>), String>;
}

/// The system's answers: each method one of the platform's Windows calls, which names the call
/// and its error when it fails.
#[cfg(windows)]
pub struct System;

#[cfg(windows)]
impl Source for System {
    fn volume(&self, path: &Path) -> Result<Volume, String> {
        let v = iocap_platform::volume::volume_of(path)?;
        Ok(Volume {
            root: v.root,
            device: v.device,
            fs: v.fs,
        })
    }

    fn cluster(&self, root: &str) -> Result<(u32, u32), String> {
        iocap_platform::volume::cluster(root)
    }

    fn free_space(&self, root: &str) -> Result<(u64, u64), String> {
        iocap_platform::volume::free_space(root)
    }

    fn ioctl(&self, device: &str, q: Query) -> Result<Vec<u8>, String> {
        use iocap_platform::volume;
        match q {
            Query::PartitionInfo => volume::partition_info(device),
            Query::DiskExtents => volume::disk_extents(device),
            Query::CacheInformation => volume::cache_information(device),
            Query::Property(id) => volume::storage_property(device, &decode::property_query(id)),
        }
    }

    fn power_scheme(&self) -> Result<(String, String), String> {
        iocap_platform::power::active_scheme()
    }

    fn min_processor_state(&self, scheme_guid: &str) -> Result<u32, String> {
        iocap_platform::power::min_processor_state(scheme_guid)
    }

    fn processors(&self) -> Result<Vec<u8>, String> {
        iocap_platform::power::processors()
    }

    fn service_rights(&self, service: &str) -> Result<(String, Vec<String>), String> {
        iocap_platform::rights::service_rights(service)
    }
}

/// The physical disk `n` as the checks name it.
pub fn disk_name(n: u32) -> String {
    format!("PhysicalDrive{n}")
}

/// The device path of physical disk `n`.
pub fn disk_path(n: u32) -> String {
    format!("\\\\.\\PhysicalDrive{n}")
}

/// Audit each path through `src`: the volume's checks, then the host's once.
pub fn audit(src: &dyn Source, paths: &[PathBuf], opts: &AuditOptions) -> AuditReport {
    let mut report = AuditReport::default();
    for path in paths {
        let (resolved, checks) = volume::target(src, path, opts);
        for c in checks {
            if !report
                .checks
                .iter()
                .any(|o: &Check| o.id == c.id && o.subject == c.subject)
            {
                report.checks.push(c);
            }
        }
        report.targets.push(resolved);
    }
    report.checks.extend(host::host_checks(src, opts));
    report
}

/// What an unresolved path shows.
fn unresolved(path: &Path) -> Resolved {
    Resolved {
        path: path.display().to_string(),
        ..Resolved::default()
    }
}

#[cfg(test)]
mod tests;

//! iocap's host configuration audit: from a path to its file system, partition and physical block
//! devices, and every setting on that path (and on the host) that costs a database I/O.
//!
//! Everything reads through a [`Root`], so the checks are pure functions over a file-system tree:
//! `/` in production, a temporary directory with fake `sys/`, `proc/` and `dev/` trees in tests.
//! A value that cannot be read gives an [`Severity::Unknown`] check with the reason, never an error.
//! The check IDs and thresholds are documented in `docs/checks.md`. On Windows, [`audit`] looks
//! at the volume and disks under each path through Windows' own calls instead ([`windows`]).

mod blockdevs;
mod checks;
mod host;
pub mod parttable;
mod resolve;
pub mod windows;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub use blockdevs::{disks_under, BlockDisk};
pub use checks::{device_table_checks, target_checks};
pub use host::host_checks;
pub use iocap_model::audit::{AuditReport, Check, Resolved};
pub use iocap_model::{DbFamily, Severity};
pub use resolve::{resolve_dev, resolve_device, resolve_path};

/// The file-system root every sysfs / procfs read goes through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root(PathBuf);

impl Root {
    /// A root at `path` (a fixture tree in tests).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Root(path.into())
    }

    /// The real system root, `/`.
    pub fn system() -> Self {
        Root(PathBuf::from("/"))
    }

    /// The root directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `rel` (with or without a leading `/`) under the root.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.0.join(rel.trim_start_matches('/'))
    }

    /// The trimmed content of `rel`, or the reason it cannot be read (naming the system path).
    pub(crate) fn read(&self, rel: &str) -> Result<String, String> {
        std::fs::read_to_string(self.join(rel))
            .map(|s| s.trim().to_string())
            .map_err(|e| format!("cannot read {}: {}", shown(rel), e))
    }

    /// `rel` parsed as an unsigned integer.
    pub(crate) fn read_u64(&self, rel: &str) -> Result<u64, String> {
        let s = self.read(rel)?;
        s.parse::<u64>()
            .map_err(|_| format!("{} holds {:?}, not a number", shown(rel), s))
    }
}

/// `rel` as it is called on the real system (`/sys/...`).
pub(crate) fn shown(rel: &str) -> String {
    format!("/{}", rel.trim_start_matches('/'))
}

/// How the audit makes its findings (the type is the model's: [`Check`]).
pub(crate) trait Finding {
    fn new(
        id: &str,
        severity: Severity,
        subject: &str,
        evidence: impl Into<String>,
        recommendation: impl Into<String>,
    ) -> Self;
    fn unknown(id: &str, subject: &str, reason: impl Into<String>) -> Self;
}

impl Finding for Check {
    fn new(
        id: &str,
        severity: Severity,
        subject: &str,
        evidence: impl Into<String>,
        recommendation: impl Into<String>,
    ) -> Self {
        Check {
            id: id.to_string(),
            severity,
            subject: subject.to_string(),
            evidence: evidence.into(),
            recommendation: recommendation.into(),
        }
    }

    fn unknown(id: &str, subject: &str, reason: impl Into<String>) -> Self {
        Check::new(
            id,
            Severity::Unknown,
            subject,
            reason,
            "Check this setting by hand; iocap could not read it here.",
        )
    }
}

/// What the audit should know about the planned database.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditOptions {
    /// The database family; changes the transparent-huge-page advice.
    pub profile: Option<DbFamily>,
    /// The array's stripe unit when sysfs does not show it (hardware RAID).
    pub stripe_unit_bytes: Option<u64>,
    /// The planned database size, compared with free space.
    pub db_size_bytes: Option<u64>,
}

/// Size and free space of a file system (from statvfs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FsStats {
    /// The file-system block (allocation unit) size in bytes (`f_bsize`).
    pub block_size: u64,
    /// Bytes available to an unprivileged user (`f_bavail * f_frsize`).
    pub avail_bytes: u64,
    /// Total bytes (`f_blocks * f_frsize`).
    pub total_bytes: u64,
}

/// statvfs(3): Linux's; elsewhere an error that says so.
#[cfg(not(target_os = "linux"))]
pub fn fs_stats(path: &Path) -> Result<FsStats, String> {
    Err(format!(
        "cannot read the file system of {}: the audit reads Linux's statvfs",
        path.display()
    ))
}

/// statvfs(3) on `path` (or its nearest existing ancestor, so a planned path may not exist yet).
#[cfg(target_os = "linux")]
pub fn fs_stats(path: &Path) -> Result<FsStats, String> {
    use std::os::unix::ffi::OsStrExt;
    let existing = nearest_existing(path);
    let c = std::ffi::CString::new(existing.as_os_str().as_bytes())
        .map_err(|_| format!("{} contains a NUL byte", existing.display()))?;
    // SAFETY: statvfs is plain data, for which all zero bytes are a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated string and `st` a valid out-pointer.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(format!(
            "statvfs({}) failed: {}",
            existing.display(),
            std::io::Error::last_os_error()
        ));
    }
    let frsize = if st.f_frsize > 0 {
        st.f_frsize as u64
    } else {
        st.f_bsize as u64
    };
    Ok(FsStats {
        block_size: st.f_bsize as u64,
        avail_bytes: (st.f_bavail as u64).saturating_mul(frsize),
        total_bytes: (st.f_blocks as u64).saturating_mul(frsize),
    })
}

/// `path` itself if it exists, else its nearest existing ancestor (or `.`).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn nearest_existing(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    loop {
        if p.exists() {
            return p;
        }
        if !p.pop() || p.as_os_str().is_empty() {
            return PathBuf::from(".");
        }
    }
}

/// Audit each path: resolve it to its devices, check the file system, partition and devices, then
/// the host (CPU power, memory, NUMA) once. On Windows the volume and its disks, through the
/// system's calls ([`windows`]); `root` is then unused.
pub fn audit(root: &Root, paths: &[PathBuf], opts: &AuditOptions) -> AuditReport {
    #[cfg(windows)]
    {
        let _ = root;
        windows::audit(&windows::System, paths, opts)
    }
    #[cfg(not(windows))]
    sys_audit(root, paths, opts)
}

/// [`audit`] through /sys and /proc.
#[cfg_attr(windows, allow(dead_code))]
fn sys_audit(root: &Root, paths: &[PathBuf], opts: &AuditOptions) -> AuditReport {
    let mut report = AuditReport::default();
    for path in paths {
        let shown_path = path.display().to_string();
        if let Some(name) = block_device_name(root, path) {
            // a device node: the device itself, not the devtmpfs it lives in
            let mut resolved = resolve_device(root, &name);
            resolved.path = shown_path;
            let mut checks = target_checks(root, &resolved, None, opts);
            if resolved.partition.is_none() && resolved.block_device.is_some() {
                checks.retain(|c| !c.id.starts_with("partition."));
                checks.extend(device_table_checks(root, &resolved, path, opts));
            }
            push_unique(&mut report.checks, checks);
            report.targets.push(resolved);
            continue;
        }
        match resolve_path(root, path) {
            Ok(resolved) => {
                let fs = fs_stats(path);
                push_unique(
                    &mut report.checks,
                    target_checks(root, &resolved, Some(fs), opts),
                );
                report.targets.push(resolved);
            }
            Err(reason) => {
                report
                    .checks
                    .push(Check::unknown("resolve.path", &shown_path, reason));
                report.targets.push(Resolved {
                    path: shown_path,
                    ..Resolved::default()
                });
            }
        }
    }
    report.checks.extend(host_checks(root, opts));
    report
}

/// Block device nodes are Linux's.
#[cfg(not(target_os = "linux"))]
fn block_device_name(_: &Root, _: &Path) -> Option<String> {
    None
}

/// The kernel name of the block device `path` is a node of (following symlinks such as
/// `/dev/mapper/vg-lv`), from its device number; `None` when it is not a block device.
#[cfg(target_os = "linux")]
fn block_device_name(root: &Root, path: &Path) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = std::fs::metadata(path).ok()?;
    if !m.file_type().is_block_device() {
        return None;
    }
    let dev = m.rdev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let link = std::fs::read_link(root.join(&format!("sys/dev/block/{major}:{minor}"))).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// Audit a block device by name (`sda1`, `dm-0`, `md0`): its partition, slaves and physical
/// devices, then the host. No file-system checks (there is no path).
pub fn audit_device(root: &Root, device: &str, opts: &AuditOptions) -> AuditReport {
    let resolved = resolve_device(root, device);
    let mut checks = target_checks(root, &resolved, None, opts);
    checks.extend(host_checks(root, opts));
    AuditReport {
        targets: vec![resolved],
        checks,
    }
}

fn push_unique(into: &mut Vec<Check>, new: Vec<Check>) {
    for c in new {
        if !into.iter().any(|o| o.id == c.id && o.subject == c.subject) {
            into.push(c);
        }
    }
}

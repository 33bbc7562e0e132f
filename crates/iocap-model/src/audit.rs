//! What `iocap audit` found: where each path lives (file system, partition, devices) and each
//! check with its evidence and advice. The checks themselves are `iocap-audit`'s; the result is
//! here so that the views (`iocap-report`) and the store read it without the audit's code.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Severity;

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    /// Stable identifier, e.g. `partition.alignment` (see docs/checks.md).
    pub id: String,
    /// The verdict.
    pub severity: Severity,
    /// The device, path or host component the check is about.
    pub subject: String,
    /// The value read and where from.
    pub evidence: String,
    /// One sentence of advice.
    pub recommendation: String,
}

/// Where a path lives: file system, partition and physical devices.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Resolved {
    /// The path as given (or the device name for `iocap_audit::audit_device`).
    pub path: String,
    /// The mount point of the file system holding the path.
    pub mount_point: Option<String>,
    /// The file-system type (ext4, xfs, ...).
    pub fs_type: Option<String>,
    /// Per-mount and super-block options together (noatime, data=ordered, ...).
    pub mount_options: Vec<String>,
    /// The partition in the chain (sda1, nvme0n1p2), if any.
    pub partition: Option<String>,
    /// Physical block devices, after following dm/md slaves.
    pub devices: Vec<String>,
    /// The block device the file system sits on (dm-0, md0, sda1, sda), if resolved.
    pub block_device: Option<String>,
}

/// The audit's result: what each path resolved to, and every check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AuditReport {
    /// One entry per audited path or device.
    pub targets: Vec<Resolved>,
    /// Device checks (deduplicated across targets) followed by host checks.
    pub checks: Vec<Check>,
}

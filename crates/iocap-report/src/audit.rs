//! The terminal view of `iocap audit`: where each path lives, each check with its evidence,
//! what to do about each one that is not PASS, and the count of each severity.

use iocap_model::audit::{AuditReport, Check, Resolved};
use iocap_model::Severity;

use crate::fmt::wrap_indented;
use crate::fmt::{printable, UNKNOWN};

/// The report as text.
pub fn render(report: &AuditReport) -> String {
    let mut out = String::new();
    for t in &report.targets {
        out.push_str(&target(t));
    }
    out.push_str(&format!("\n{}", checks(&report.checks)));
    out.push_str(&todo(&report.checks));
    let count = |s: Severity| report.checks.iter().filter(|c| c.severity == s).count();
    out.push_str(&format!(
        "\n{} checks: {} PASS, {} WARN, {} FAIL, {} INFO, {} UNKNOWN\n",
        report.checks.len(),
        count(Severity::Pass),
        count(Severity::Warn),
        count(Severity::Fail),
        count(Severity::Info),
        count(Severity::Unknown)
    ));
    out
}

/// `PATH: xfs on /data, partition sda1, devices sda`.
fn target(t: &Resolved) -> String {
    let on = match (&t.fs_type, &t.mount_point, &t.block_device) {
        (None, None, Some(b)) => format!("block device {b}"),
        (fs, mp, _) => format!(
            "{} on {}",
            fs.as_deref().unwrap_or("unknown file system"),
            printable(mp.as_deref().unwrap_or(UNKNOWN))
        ),
    };
    format!(
        "{}: {on}{}, devices {}\n",
        printable(&t.path),
        t.partition
            .as_deref()
            .map(|p| format!(", partition {p}"))
            .unwrap_or_default(),
        if t.devices.is_empty() {
            "unknown".to_string()
        } else {
            t.devices.join(", ")
        }
    )
}

/// Each check on a line (severity, ID, subject), its evidence indented below it, all wrapped
/// at spaces to [`crate::width`]: a table's narrow columns would cut the paths the evidence
/// names (`/sys/class/block/sda/queue/scheduler`) in the middle.
fn checks(checks: &[Check]) -> String {
    let width = crate::width();
    let mut out = String::new();
    for c in checks {
        let head = format!("{:<7} ", c.severity.name());
        let what = format!("{} ({})", c.id, printable(&c.subject));
        out.push_str(&wrap_indented(&head, &what, width, INDENT));
        let evidence = printable(&c.evidence);
        out.push_str(&wrap_indented(
            &" ".repeat(INDENT),
            &evidence,
            width,
            INDENT,
        ));
    }
    out
}

/// Where the evidence starts: past the longest severity, `UNKNOWN`.
const INDENT: usize = 8;

/// What to do about each check that is not PASS.
fn todo(checks: &[Check]) -> String {
    let mut out = String::new();
    let todo: Vec<&Check> = checks
        .iter()
        .filter(|c| c.severity != Severity::Pass)
        .collect();
    if !todo.is_empty() {
        out.push('\n');
        for c in todo {
            out.push_str(&format!(
                "{:<7} {} ({}): {}\n",
                c.severity.name(),
                c.id,
                printable(&c.subject),
                crate::fmt::printable_lines(&c.recommendation)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_checks_advice_and_counts() {
        let check = |id: &str, severity| Check {
            id: id.into(),
            severity,
            subject: "sda".into(),
            evidence: "read from sysfs".into(),
            recommendation: "Set it.".into(),
        };
        let r = AuditReport {
            targets: vec![
                Resolved {
                    path: "/data".into(),
                    mount_point: Some("/data".into()),
                    fs_type: Some("xfs".into()),
                    partition: Some("sda1".into()),
                    devices: vec!["sda".into()],
                    ..Resolved::default()
                },
                Resolved {
                    path: "/dev/sdb".into(),
                    block_device: Some("sdb".into()),
                    ..Resolved::default()
                },
            ],
            checks: vec![
                check("device.scheduler", Severity::Pass),
                check("device.write_cache", Severity::Warn),
            ],
        };
        let t = render(&r);
        assert!(
            t.starts_with(
                "/data: xfs on /data, partition sda1, devices sda\n\
                 /dev/sdb: block device sdb, devices unknown\n\n"
            ),
            "{t}"
        );
        assert!(
            t.contains("\nPASS    device.scheduler (sda)\n        read from sysfs\n"),
            "{t}"
        );
        assert!(
            t.contains("\nWARN    device.write_cache (sda): Set it.\n"),
            "{t}"
        );
        assert!(
            t.ends_with("\n2 checks: 1 PASS, 1 WARN, 0 FAIL, 0 INFO, 0 UNKNOWN\n"),
            "{t}"
        );
    }

    #[test]
    fn evidence_wraps_at_spaces_and_keeps_paths_whole() {
        let path = "/sys/class/block/nvme0n1/queue/read_ahead_kb";
        let c = Check {
            id: "device.read_ahead_kb".into(),
            severity: Severity::Warn,
            subject: "nvme0n1".into(),
            evidence: format!("read_ahead_kb 8192, above the 4096 for this device, from {path}"),
            recommendation: "Lower it.".into(),
        };
        let t = checks(&[c]);
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        assert!(t.lines().any(|l| l == format!("        {path}")), "{t}");
    }
}

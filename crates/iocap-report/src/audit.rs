//! The terminal view of `iocap audit`: where each path lives, the table of checks, what to do
//! about each one that is not PASS, and the count of each severity.

use comfy_table::CellAlignment;
use iocap_audit::{AuditReport, Check, Resolved, Severity};

use crate::fmt::UNKNOWN;
use crate::table;

/// The report as text.
pub fn render(report: &AuditReport) -> String {
    let mut out = String::new();
    for t in &report.targets {
        out.push_str(&target(t));
    }
    out.push_str(&format!("\n{}\n", checks(&report.checks)));
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
            mp.as_deref().unwrap_or(UNKNOWN)
        ),
    };
    format!(
        "{}: {on}{}, devices {}\n",
        t.path,
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

/// The table of checks, every column left-aligned.
fn checks(checks: &[Check]) -> comfy_table::Table {
    let mut table = table(&["check", "severity", "subject", "evidence"]);
    for i in 0..4 {
        if let Some(col) = table.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Left);
        }
    }
    for c in checks {
        table.add_row(vec![
            c.id.clone(),
            c.severity.name().to_string(),
            c.subject.clone(),
            c.evidence.clone(),
        ]);
    }
    table
}

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
                c.subject,
                c.recommendation
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
        assert!(t.contains("│ device.scheduler"), "{t}");
        assert!(
            t.contains("\nWARN    device.write_cache (sda): Set it.\n"),
            "{t}"
        );
        assert!(
            t.ends_with("\n2 checks: 1 PASS, 1 WARN, 0 FAIL, 0 INFO, 0 UNKNOWN\n"),
            "{t}"
        );
    }
}

//! `iocap audit [PATH...]`: from each path to its file system, partition and physical devices,
//! and every setting on the way that costs a database I/O (alignment, scheduler, queue depth,
//! write cache, CPU power saving, ...), each with its evidence and a one-sentence fix.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use iocap_audit::{AuditOptions, AuditReport, Root, Severity};
use iocap_session::severity_name;

use super::args::{size_arg, FailOn};
use super::history::ListFormat;
use super::{print_stdout, Exit};

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// Files or directories where the database will live [default: .]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Database family, for the advice that differs: sqlserver, postgres, mysql or oracle
    #[arg(long)]
    pub profile: Option<String>,
    /// The array's stripe unit, when sysfs does not tell it (e.g. 64K)
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    pub stripe_unit: Option<u64>,
    /// The planned database size, checked against the free space
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    pub db_size: Option<u64>,
    /// Exit with 1 when a check is at least this bad
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<FailOn>,
    #[arg(long, visible_alias = "format", value_enum, default_value_t = ListFormat::Text)]
    pub output: ListFormat,
}

/// The table of checks, then what to do about each one that is not PASS.
fn render(report: &AuditReport) -> String {
    let mut out = String::new();
    for t in &report.targets {
        let on = match (&t.fs_type, &t.mount_point, &t.block_device) {
            (None, None, Some(b)) => format!("block device {b}"),
            (fs, mp, _) => format!(
                "{} on {}",
                fs.as_deref().unwrap_or("unknown file system"),
                mp.as_deref().unwrap_or("?")
            ),
        };
        out.push_str(&format!(
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
        ));
    }
    let mut table = iocap_report::table(&["check", "severity", "subject", "evidence"]);
    for i in 0..4 {
        if let Some(col) = table.column_mut(i) {
            col.set_cell_alignment(comfy_table::CellAlignment::Left);
        }
    }
    for c in &report.checks {
        table.add_row(vec![
            c.id.clone(),
            severity_name(c.severity).to_string(),
            c.subject.clone(),
            c.evidence.clone(),
        ]);
    }
    out.push_str(&format!("\n{table}\n"));
    let todo: Vec<&iocap_audit::Check> = report
        .checks
        .iter()
        .filter(|c| c.severity != Severity::Pass)
        .collect();
    if !todo.is_empty() {
        out.push('\n');
        for c in todo {
            out.push_str(&format!(
                "{:<7} {} ({}): {}\n",
                severity_name(c.severity),
                c.id,
                c.subject,
                c.recommendation
            ));
        }
    }
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

pub fn audit(a: AuditArgs) -> Result<Exit> {
    let paths = if a.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        a.paths
    };
    if let Some(missing) = paths.iter().find(|p| std::fs::symlink_metadata(p).is_err()) {
        anyhow::bail!(
            "{}: no such file, directory or device; audit looks at what exists",
            missing.display()
        );
    }
    if let Some(p) = &a.profile {
        if !["sqlserver", "postgres", "mysql", "oracle"].contains(&p.as_str()) {
            anyhow::bail!("--profile '{p}': use sqlserver, postgres, mysql or oracle");
        }
    }
    let opts = AuditOptions {
        profile: a.profile.clone(),
        stripe_unit_bytes: a.stripe_unit,
        db_size_bytes: a.db_size,
    };
    let report = iocap_audit::audit(&Root::system(), &paths, &opts);
    match a.output {
        ListFormat::Json => print_stdout(&(serde_json::to_string_pretty(&report)? + "\n")),
        ListFormat::Text => print_stdout(&iocap_report::fit_lines(&render(&report))),
    }
    let has = |s: Severity| report.checks.iter().any(|c| c.severity == s);
    let failed = match a.fail_on {
        Some(FailOn::Fail) => has(Severity::Fail),
        Some(FailOn::Warn) => has(Severity::Fail) || has(Severity::Warn),
        None => false,
    };
    Ok(if failed { Exit::CheckFailed } else { Exit::Ok })
}

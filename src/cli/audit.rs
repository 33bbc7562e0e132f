//! `iocap audit [PATH...]`: from each path to its file system, partition and physical devices,
//! and every setting on the way that costs a database I/O (alignment, scheduler, queue depth,
//! write cache, CPU power saving, ...), each with its evidence and a one-sentence fix (the view
//! is `iocap_report::audit`).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use iocap_audit::{AuditOptions, DbFamily, Root};

use super::{print_stdout, Exit};
use iocap_flags::{listed, size_arg, FailOn, OutputArg};

#[derive(Args, Debug)]
#[command(mut_arg("output", listed))]
pub struct AuditArgs {
    /// Files or directories where the database will live [default: .]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Database family, for the advice that differs: sqlserver, postgres, mysql or oracle
    #[arg(long)]
    pub profile: Option<String>,
    /// The array's stripe unit (e.g. 64K), where the system does not tell it (Windows never does)
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    pub stripe_unit: Option<u64>,
    /// The planned database size, checked against the free space
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    pub db_size: Option<u64>,
    /// Exit with 1 when a check is at least this bad
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<FailOn>,
    #[command(flatten)]
    pub output: OutputArg,
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
    let profile = match &a.profile {
        Some(p) => Some(DbFamily::parse(p).with_context(|| {
            format!("--profile '{p}': use sqlserver, postgres, mysql or oracle")
        })?),
        None => None,
    };
    let opts = AuditOptions {
        profile,
        stripe_unit_bytes: a.stripe_unit,
        db_size_bytes: a.db_size,
    };
    let report = iocap_audit::audit(&Root::system(), &paths, &opts);
    if a.output.is_text() {
        print_stdout(&iocap_report::fit_lines(&iocap_report::audit::render(
            &report,
        )));
    } else {
        print_stdout(&iocap_report::to_json(&report)?);
    }
    let failed = FailOn::trips(a.fail_on, report.checks.iter().map(|c| c.severity));
    Ok(if failed { Exit::CheckFailed } else { Exit::Ok })
}

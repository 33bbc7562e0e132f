//! `iocap compare`: runs held against a base or each against its host's baseline, with the
//! regressions flagged (what is a regression, and whether it fails the command, is
//! `iocap_assess::compare`'s; the comparison's shape and views are `iocap_report::compare`'s).

use anyhow::{bail, Result};
use clap::Args;
use iocap_assess::compare::{OnRegression, Thresholds};
use iocap_report::compare::{compare as compare_runs, render_all};

use super::{print_stdout, Exit};
use iocap_console::keep::open_existing_store;
use iocap_flags::{listed, pct_arg, OutputArg, StoreArg};

#[derive(Args, Debug)]
#[command(mut_arg("output", listed))]
pub struct CompareArgs {
    /// BASE RUN...: the base first, then the runs to hold against it (ids, unique starts of
    /// ids, or `last`). With --baseline: only the runs.
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<String>,
    /// Compare each run with the baseline of its host and first target (iocap baseline set)
    #[arg(long)]
    pub baseline: bool,
    /// A drop in IOPS beyond this many percent is a regression
    #[arg(long, value_name = "PCT", default_value = "10", value_parser = pct_arg)]
    pub iops_drop: f64,
    /// A drop in MB/s beyond this many percent is a regression
    #[arg(long, value_name = "PCT", default_value = "10", value_parser = pct_arg)]
    pub mbps_drop: f64,
    /// A rise in p99 latency beyond this many percent is a regression
    #[arg(long, value_name = "PCT", default_value = "20", value_parser = pct_arg)]
    pub p99_rise: f64,
    /// Exit with 1 when any regression is found
    #[arg(long)]
    pub fail_on_regression: bool,
    #[command(flatten)]
    pub output: OutputArg,
    #[command(flatten)]
    pub store: StoreArg,
}

pub fn compare(a: CompareArgs) -> Result<Exit> {
    let th = Thresholds {
        iops_drop_pct: a.iops_drop,
        mbps_drop_pct: a.mbps_drop,
        p99_rise_pct: a.p99_rise,
    };
    let mut store = open_existing_store(a.store.db.as_deref())?;
    let mut runs = store.load_all(&a.runs)?;
    // runs on several hosts (MPI): each one's per-host table under the merged comparison
    let per_host = iocap_report::ranks::render_runs(&runs.iter().collect::<Vec<_>>());
    let outputs = if a.baseline {
        let mut each = Vec::new();
        for run in &runs {
            let base = store.baseline_of(run)?;
            each.push(compare_runs(&base, std::slice::from_ref(run), &th));
        }
        each
    } else {
        if runs.len() < 2 {
            bail!("compare needs a base and at least one run (or --baseline RUN)");
        }
        let base = runs.remove(0);
        vec![compare_runs(&base, &runs, &th)]
    };
    print_stdout(&render_all(&outputs, !a.output.is_text()));
    if a.output.is_text() && !per_host.is_empty() {
        print_stdout(&iocap_report::fmt::printable_lines(&per_host));
    }
    let regressions: usize = outputs.iter().map(|c| c.regressions()).sum();
    let on_regression = if a.fail_on_regression {
        OnRegression::Fail
    } else {
        OnRegression::Report
    };
    Ok(if on_regression.fails(regressions) {
        Exit::CheckFailed
    } else {
        Exit::Ok
    })
}

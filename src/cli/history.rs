//! The store's commands: `history`, `show`, `delete` and `prune` (`baseline` is
//! [`super::baseline`]'s). Each reads or changes only iocap's own result store, never a test
//! target.

use anyhow::{bail, Result};
use clap::Args;
use iocap_console::flags::Filtering;
use iocap_flags::{listed, OutputArg, OutputFormat, RunFilterArgs, StoreArg};
use iocap_model::parse_duration;
use iocap_report::history::{history_table, key_figure, show_text, Listed};

use super::{print_stdout, Exit};
use iocap_console::keep::open_existing_store;

#[derive(Args, Debug)]
#[command(mut_arg("output", listed))]
pub struct HistoryArgs {
    #[command(flatten)]
    pub filter: RunFilterArgs,
    /// At most this many runs, newest first; 0 for all
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    #[command(flatten)]
    pub output: OutputArg,
    /// Every column (tags, workload, targets, IOPS, MB/s, p99), however wide; without it the
    /// table fits COLUMNS, else the terminal, else 80 columns
    #[arg(long)]
    pub wide: bool,
    #[command(flatten)]
    pub store: StoreArg,
}

pub fn history(a: HistoryArgs) -> Result<Exit> {
    let filter = a.filter.filter(a.limit)?;
    let mut store = open_existing_store(a.store.db.as_deref())?;
    let runs = store.list(&filter)?;
    match a.output.output {
        OutputFormat::Text if runs.is_empty() => {
            let at = store.location().to_string();
            eprintln!(
                "iocap: no runs in {} match",
                iocap_report::fmt::printable(&at)
            )
        }
        OutputFormat::Text => {
            // each run's key figure by its kind (a preflight's capacity, a saturate run's
            // maximum, ...), from the whole result; a run that cannot be read keeps its IOPS
            let listed: Vec<Listed> = runs
                .iter()
                .map(|r| Listed {
                    run: r,
                    headline: key_figure(r, store.load(&r.run_id).ok().as_ref()),
                })
                .collect();
            print_stdout(&history_table(&listed, a.wide));
            if a.limit > 0 && runs.len() == a.limit as usize {
                eprintln!("(the newest {}; --limit 0 lists all)", a.limit);
            }
        }
        _ => print_stdout(&iocap_report::to_json(&runs)?),
    }
    Ok(Exit::Ok)
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The run: its id, a unique start of it, or `last`
    pub run: String,
    #[command(flatten)]
    pub output: OutputArg,
    #[command(flatten)]
    pub store: StoreArg,
}

pub fn show(a: ShowArgs) -> Result<Exit> {
    let mut store = open_existing_store(a.store.db.as_deref())?;
    let run = store.load(&a.run)?;
    let text = || show_text(&run, &iocap_report::text::run_body(&run));
    let out = match a.output.output {
        OutputFormat::Text => iocap_report::fit_lines(&text()),
        OutputFormat::Csv => iocap_report::csv::render(&run),
        _ => iocap_report::json(&run),
    };
    print_stdout(&out);
    Ok(Exit::Ok)
}

#[derive(Args, Debug)]
pub struct DeleteArgs {
    /// Runs to delete: ids, unique starts of ids, or `last`
    #[arg(required = true)]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

pub fn delete(a: DeleteArgs) -> Result<Exit> {
    let mut store = open_existing_store(a.store.db.as_deref())?;
    // resolve every id first: a typo in the third deletes nothing
    let ids = a
        .runs
        .iter()
        .map(|r| store.resolve(r))
        .collect::<Result<Vec<_>, _>>()?;
    for id in store.delete(&ids)? {
        eprintln!("iocap: deleted run {id}");
    }
    Ok(Exit::Ok)
}

#[derive(Args, Debug)]
pub struct PruneArgs {
    /// Delete runs started longer ago than this (e.g. 90d); baseline runs are kept
    #[arg(long, value_name = "AGE", required = true)]
    pub older_than: String,
    /// Only list what would be deleted
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub store: StoreArg,
}

pub fn prune(a: PruneArgs) -> Result<Exit> {
    let age = parse_duration(&a.older_than)?;
    if age <= 0.0 {
        bail!("--older-than must be more than zero");
    }
    let cutoff = iocap_store::ago(age);
    let mut store = open_existing_store(a.store.db.as_deref())?;
    let out = store.prune(&cutoff, a.dry_run)?;
    let verb = if a.dry_run { "would delete" } else { "deleted" };
    for id in &out.deleted {
        println!("{verb} {id}");
    }
    eprintln!(
        "iocap: {verb} {} run(s) started before {cutoff}{}",
        out.deleted.len(),
        if out.kept_baselines.is_empty() {
            String::new()
        } else {
            format!(
                "; kept {} older run(s) that baselines point at",
                out.kept_baselines.len()
            )
        }
    );
    Ok(Exit::Ok)
}

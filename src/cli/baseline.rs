//! `iocap baseline set|show|clear`: the run each host's targets are compared with by
//! `compare --baseline` (which target a run is the baseline for is the store's rule).

use anyhow::Result;
use clap::{Args, Subcommand};
use iocap_report::fmt::printable;
use iocap_report::history::baselines_table;

use super::{print_stdout, Exit};
use iocap_console::keep::open_existing_store;
use iocap_flags::{listed, OutputArg, OutputFormat, StoreArg};

#[derive(Args, Debug)]
#[command(mut_arg("db", |a| a
    .global(true)
    .help("Result store [default: $IOCAP_DB, else ~/.local/share/iocap/results.db]")))]
pub struct BaselineArgs {
    #[command(subcommand)]
    pub action: BaselineAction,
    #[command(flatten)]
    pub store: StoreArg,
}

#[derive(Subcommand, Debug)]
pub enum BaselineAction {
    /// Make RUN the baseline of its host for its targets (or only --target)
    Set {
        run: String,
        #[arg(long)]
        target: Option<String>,
    },
    /// List baselines of this host (or --host, or --all hosts)
    #[command(mut_arg("output", listed))]
    Show {
        #[arg(long)]
        host: Option<String>,
        #[arg(long, conflicts_with = "host")]
        all: bool,
        #[command(flatten)]
        output: OutputArg,
    },
    /// Remove the baselines of this host (or --host), for every target or only --target
    Clear {
        #[arg(long)]
        host: Option<String>,
        #[arg(long)]
        target: Option<String>,
    },
}

fn this_host() -> String {
    iocap_platform::host::host_info().hostname
}

pub fn baseline(a: BaselineArgs) -> Result<Exit> {
    let mut store = open_existing_store(a.store.db.as_deref())?;
    match a.action {
        BaselineAction::Set { run, target } => {
            for b in store.make_baseline(&run, target)? {
                eprintln!(
                    "iocap: baseline of {} for {} is now run {}",
                    printable(&b.hostname),
                    printable(&b.target),
                    b.run_id
                );
            }
        }
        BaselineAction::Show { host, all, output } => {
            let host = if all {
                None
            } else {
                Some(host.unwrap_or_else(this_host))
            };
            let list = store.baselines(host.as_deref())?;
            match output.output {
                OutputFormat::Text if list.is_empty() => eprintln!(
                    "iocap: no baselines{} (set one with: iocap baseline set RUN)",
                    host.map(|h| format!(" for host {h}")).unwrap_or_default()
                ),
                OutputFormat::Text => print_stdout(&baselines_table(&list)),
                _ => print_stdout(&iocap_report::to_json(&list)?),
            }
        }
        BaselineAction::Clear { host, target } => {
            let host = host.unwrap_or_else(this_host);
            let n = store.baseline_clear(&host, target.as_deref())?;
            eprintln!("iocap: removed {n} baseline(s) of {host}");
        }
    }
    Ok(Exit::Ok)
}

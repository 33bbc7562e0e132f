//! Keeping every result: the flags every measuring command shares (`--db`, `--no-save`,
//! `--label`, `--tag`, `--note`, `--html`). What they do once a run has finished is
//! `iocap_console::flags::Keeping`.

use std::path::PathBuf;

use clap::Args;

/// `--db`, declared once for every command that reads or writes the result store.
#[derive(Args, Debug, Clone, Default)]
pub struct StoreArg {
    /// Result store: a SQLite file, a postgres:// URL or PostgreSQL key=value
    /// conninfo [default: $IOCAP_DB, else
    /// ~/.local/share/iocap/results.db]
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<String>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct SaveArgs {
    #[command(flatten)]
    pub store: StoreArg,
    /// Do not save the result
    #[arg(long)]
    pub no_save: bool,
    /// A name for this run, shown in the history and reports
    #[arg(long)]
    pub label: Option<String>,
    /// A tag for filtering the history (repeatable)
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// A free-text note kept with the run
    #[arg(long)]
    pub note: Option<String>,
    /// Also write a self-contained HTML report of the run to FILE (never over an existing file)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

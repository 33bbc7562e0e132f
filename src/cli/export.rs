//! `iocap export` and `iocap report`: saved runs written for other tools and people, as JSON,
//! CSV, Markdown or one HTML file (which runs an export names is the store's rule, the views
//! are iocap-report's).

use iocap_console::flags::Filtering;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::{print_stdout, Exit};
use iocap_console::claim;
use iocap_console::keep::open_existing_store;
use iocap_flags::{export_formats, report_formats, OutputFormat, RunFilterArgs, StoreArg};

/// The format names other commands take after `--output`.
const FORMAT_NAMES: [&str; 6] = ["json", "csv", "markdown", "md", "text", "html"];

/// The file of `export`/`report` `-o FILE`: a bare format name is refused, since every other
/// command's `--output` takes a format and `export last --output json` would silently write a
/// file named `json`.
fn out_file(s: &str) -> Result<PathBuf, String> {
    if FORMAT_NAMES.contains(&s.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "'{s}' is a format name, not a file: give the format with --format {s} and the \
             file with -o FILE (for a file really named {s}, write -o ./{s})"
        ));
    }
    if s.is_empty() {
        return Err("the file name is empty".into());
    }
    Ok(PathBuf::from(s))
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Runs to export (ids, unique starts of ids, or `last`); or none, with --all or filters
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,
    /// Every saved run (with filters: every run they match), oldest first
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub filter: RunFilterArgs,
    #[arg(long, value_parser = export_formats(), default_value = "json")]
    pub format: OutputFormat,
    /// Write to this new file instead of stdout
    #[arg(short, long, visible_alias = "out", value_name = "FILE", value_parser = out_file)]
    pub output: Option<PathBuf>,
    /// Allow -o to replace an existing file
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub store: StoreArg,
}

pub fn export(a: ExportArgs) -> Result<Exit> {
    let mut store = open_existing_store(a.store.db.as_deref())?;
    let filtered = a.all || a.filter.any();
    let runs = store.select(&a.runs, filtered, || a.filter.filter(0))?;
    let text = match a.format {
        OutputFormat::Csv => iocap_report::csv::render_many(&runs),
        OutputFormat::Markdown => iocap_report::markdown::render(&runs),
        _ if runs.len() == 1 => iocap_report::json(&runs[0]),
        _ => iocap_report::to_json(&runs)?,
    };
    match &a.output {
        Some(p) => {
            claim::against_store(&store, "-o", p, a.force)?.write(p, &text)?;
            eprintln!(
                "iocap: wrote {}",
                iocap_report::fmt::printable(&p.display().to_string())
            );
        }
        None => print_stdout(&text),
    }
    Ok(Exit::Ok)
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Runs to report on, overlaid in the charts (ids, unique starts of ids, or `last`)
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<String>,
    /// The HTML file to write
    #[arg(
        short,
        long,
        visible_alias = "out",
        value_name = "FILE",
        required = true,
        value_parser = out_file
    )]
    pub output: PathBuf,
    /// The report's format: HTML is the only one (for `export`'s formats use `iocap export`)
    #[arg(long, value_parser = report_formats(), default_value = "html")]
    pub format: OutputFormat,
    /// Allow replacing an existing file
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub store: StoreArg,
}

pub fn report(a: ReportArgs) -> Result<Exit> {
    let mut store = open_existing_store(a.store.db.as_deref())?;
    let claim = claim::against_store(&store, "-o", &a.output, a.force)?;
    let runs = store.load_all(&a.runs)?;
    claim
        .write(&a.output, &iocap_report::html::render(&runs))
        .context("the report was not written")?;
    eprintln!(
        "iocap: report of {} run(s) written to {}",
        runs.len(),
        iocap_report::fmt::printable(&a.output.display().to_string())
    );
    Ok(Exit::Ok)
}

//! Commands over stored runs that produce views: `compare`, `export` and `report`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use iocap_model::RunResult;
use iocap_report::compare::{compare as compare_runs, render_json, render_text, Thresholds};
use iocap_store::Store;

use super::args::pct_arg;
use super::flags::{listed, Formats, OutputArg, OutputFormat};
use super::history::RunFilterArgs;
use super::save::{open_existing_store, write_new_file, StoreArg};
use super::{print_stdout, Exit};

fn load_all(store: &mut Store, runs: &[String]) -> Result<Vec<RunResult>> {
    runs.iter()
        .map(|r| store.load(r).map_err(anyhow::Error::from))
        .collect()
}

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

/// The baseline run of `run`'s host and first target.
fn baseline_of(store: &mut Store, run: &RunResult) -> Result<RunResult> {
    let host = &run.host.hostname;
    let Some(target) = run
        .tests
        .iter()
        .flat_map(|t| t.targets.first())
        .map(|t| t.path.clone())
        .next()
    else {
        bail!("run {} has no targets, so it has no baseline", run.run_id);
    };
    let found = store
        .baselines(Some(host))?
        .into_iter()
        .find(|b| b.target == target);
    match found {
        Some(b) => Ok(store.load(&b.run_id)?),
        None => bail!(
            "no baseline for host {host} and target {target}; set one with: iocap baseline set RUN"
        ),
    }
}

pub fn compare(a: CompareArgs) -> Result<Exit> {
    let th = Thresholds {
        iops_drop_pct: a.iops_drop,
        mbps_drop_pct: a.mbps_drop,
        p99_rise_pct: a.p99_rise,
    };
    let mut store = open_existing_store(a.store.db.as_deref())?;
    let mut runs = load_all(&mut store, &a.runs)?;
    let mut outputs = Vec::new();
    let mut regressions = 0;
    if a.baseline {
        for run in &runs {
            let base = baseline_of(&mut store, run)?;
            let c = compare_runs(&base, std::slice::from_ref(run), &th);
            regressions += c.regressions();
            outputs.push(c);
        }
    } else {
        if runs.len() < 2 {
            bail!("compare needs a base and at least one run (or --baseline RUN)");
        }
        let base = runs.remove(0);
        let c = compare_runs(&base, &runs, &th);
        regressions += c.regressions();
        outputs.push(c);
    }
    let text = match a.output.output {
        OutputFormat::Text => outputs
            .iter()
            .map(render_text)
            .map(|t| iocap_report::fmt::printable_lines(&t).into_owned())
            .collect::<Vec<_>>()
            .join("\n"),
        _ if outputs.len() == 1 => render_json(&outputs[0]),
        _ => serde_json::to_string_pretty(&outputs)? + "\n",
    };
    print_stdout(&text);
    Ok(if a.fail_on_regression && regressions > 0 {
        Exit::CheckFailed
    } else {
        Exit::Ok
    })
}

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
    #[arg(long, value_parser = Formats::EXPORT, default_value = "json")]
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

/// The runs `export` names: its RUN ids, or every run `--all` and the filters select, oldest
/// first.
fn export_runs(store: &mut Store, a: ExportArgs) -> Result<Vec<RunResult>> {
    let filtered = a.all || a.filter.any();
    if !a.runs.is_empty() {
        if filtered {
            bail!("give either RUN ids or --all / filters (--host --label --tag ...), not both");
        }
        return load_all(store, &a.runs);
    }
    if !filtered {
        bail!("name the runs to export: RUN ids, --all, or filters such as --host or --since");
    }
    let mut list = store.list(&a.filter.filter(0)?)?;
    if list.is_empty() {
        bail!("no runs in {} match", store.location());
    }
    list.reverse();
    list.iter()
        .map(|r| store.load(&r.run_id).map_err(anyhow::Error::from))
        .collect()
}

pub fn export(mut a: ExportArgs) -> Result<Exit> {
    let mut store = open_existing_store(a.store.db.as_deref())?;
    let (format, output, force) = (a.format, a.output.take(), a.force);
    let runs = export_runs(&mut store, a)?;
    let text = match format {
        OutputFormat::Csv => iocap_report::csv::render_many(&runs),
        OutputFormat::Markdown => iocap_report::markdown::render(&runs),
        _ if runs.len() == 1 => iocap_report::json(&runs[0]),
        _ => serde_json::to_string_pretty(&runs)? + "\n",
    };
    match &output {
        Some(p) => {
            write_new_file(p, &text, force)?;
            eprintln!("iocap: wrote {}", p.display());
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
    #[arg(long, value_parser = Formats::REPORT, default_value = "html")]
    pub format: OutputFormat,
    /// Allow replacing an existing file
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub store: StoreArg,
}

pub fn report(a: ReportArgs) -> Result<Exit> {
    let mut store = open_existing_store(a.store.db.as_deref())?;
    let runs = load_all(&mut store, &a.runs)?;
    write_new_file(&a.output, &iocap_report::html::render(&runs), a.force)
        .context("the report was not written")?;
    eprintln!(
        "iocap: report of {} run(s) written to {}",
        runs.len(),
        a.output.display()
    );
    Ok(Exit::Ok)
}

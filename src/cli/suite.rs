//! `iocap suite list|show|run`: a list of tests run one after another, each saved as soon as it
//! finishes, so a suite stopped by Ctrl-C, a fault or a kill keeps every test it finished and
//! can be resumed (`--resume RUN`) where it stopped.

use std::collections::HashSet;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use iocap_model::{JobSpec, RunResult, SuiteInfo, TargetSpec};
use iocap_plan::{PlannedTest, Suite};

use super::args::{duration_arg, size_arg};
use super::execute::{new_run, run_repeated};
use super::roles::RoleDirs;
use super::save::{open_existing_store, SaveArgs};
use super::signals::{interrupted, pause};
use super::sure::SureArgs;
use super::{print_stdout, Exit, OutputFormat};

#[derive(Args, Debug)]
pub struct SuiteArgs {
    #[command(subcommand)]
    pub action: SuiteAction,
}

#[derive(Subcommand, Debug)]
pub enum SuiteAction {
    /// The built-in suites, and each database profile's workloads as a suite
    List,
    /// The tests of a suite (a built-in name or a TOML file)
    Show { suite: String },
    /// Run a suite (a built-in name or a TOML file)
    Run(Box<SuiteRunArgs>),
}

#[derive(Args, Debug)]
pub struct SuiteRunArgs {
    /// A built-in suite (iocap suite list), a suite TOML file, or profile:NAME|FILE
    pub suite: String,
    #[command(flatten)]
    pub roles: RoleDirs,
    /// Size of test files that do not exist yet [default: as the suite says, else 1G]
    #[arg(long, value_parser = size_arg)]
    pub size: Option<u64>,
    /// Measure each test for this long instead of the suite's duration (e.g. 5s for a trial)
    #[arg(long, value_parser = duration_arg)]
    pub duration: Option<f64>,
    /// Pause between tests so write caches drain [default: the suite's, usually 10s]
    #[arg(long, value_parser = duration_arg)]
    pub pause: Option<f64>,
    /// Continue a stopped suite run, skipping the tests it finished
    #[arg(long, value_name = "RUN")]
    pub resume: Option<String>,
    /// Permit writes to files and devices iocap did not create (destroys their contents)
    #[arg(long)]
    pub allow_overwrite: bool,
    #[arg(long, visible_alias = "format", value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    #[command(flatten)]
    pub sure: SureArgs,
    #[command(flatten)]
    pub save: SaveArgs,
}

/// A built-in suite by name, a suite file, or a database profile's workloads as a suite
/// (`profile:sqlserver`).
pub fn load_suite(what: &str) -> Result<Suite> {
    if let Some(name) = what.strip_prefix("profile:") {
        return Ok(super::preflight::load_profile(name)?.suite());
    }
    let p = std::path::Path::new(what);
    if p.exists() || what.ends_with(".toml") {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("cannot read suite file {what}"))?;
        return iocap_plan::parse_suite(&text).map_err(|e| not_toml(e, what, "suite"));
    }
    Ok(iocap_plan::suite(what)?)
}

/// The error for a suite or profile file: one that is not TOML at all (`/etc/passwd`) is named
/// as not being such a file, with the line the parser stopped at.
pub fn not_toml(e: iocap_plan::PlanError, what: &str, kind: &str) -> anyhow::Error {
    match &e {
        iocap_plan::PlanError::Toml(m) if m.contains("TOML parse error") => anyhow::anyhow!(
            "{what} is not a {kind} file: {kind} files are TOML (docs/profiles-and-suites.md), \
             and this one is not: {m}"
        ),
        _ => anyhow::Error::new(e).context(format!("in {kind} file {what}")),
    }
}

pub fn suite(a: SuiteArgs) -> Result<Exit> {
    match a.action {
        SuiteAction::List => {
            let mut t = iocap_report::table(&["suite", "tests", "takes", "what"]);
            // words, not a figure: left-aligned
            if let Some(c) = t.column_mut(3) {
                c.set_cell_alignment(comfy_table::CellAlignment::Left);
            }
            for s in iocap_plan::list_suites() {
                t.add_row(vec![
                    s.name,
                    s.tests.to_string(),
                    iocap_plan::format_secs(s.estimated_s),
                    s.description,
                ]);
            }
            // every workload of a database profile, as a suite
            for p in iocap_plan::builtin_profiles() {
                let s = p.suite();
                t.add_row(vec![
                    format!("profile:{}", p.name),
                    s.tests.len().to_string(),
                    iocap_plan::format_secs(s.estimated_s()),
                    p.description.clone(),
                ]);
            }
            print_stdout(&format!("{t}\n"));
            Ok(Exit::Ok)
        }
        SuiteAction::Show { suite } => {
            print_stdout(&iocap_report::fit_lines(&load_suite(&suite)?.render()));
            Ok(Exit::Ok)
        }
        SuiteAction::Run(r) => run(*r),
    }
}

/// The specs of one planned test, with targets and the command line's overrides filled in.
fn specs_of(t: &PlannedTest, a: &SuiteRunArgs) -> Vec<(String, JobSpec)> {
    t.workloads
        .iter()
        .map(|w| {
            let mut spec = w.spec.clone();
            spec.name = if t.workloads.len() > 1 {
                format!("{} [{}]", t.name, w.role)
            } else {
                t.name.clone()
            };
            spec.targets = vec![TargetSpec::new(a.roles.target(&w.role))];
            if let Some(size) = a.size {
                spec.size_bytes = size;
            }
            if let Some(d) = a.duration {
                spec.duration_s = d;
                spec.warmup_s = spec.warmup_s.min(d);
            }
            spec.allow_overwrite = a.allow_overwrite;
            a.sure.apply(&mut spec);
            (w.role.clone(), spec)
        })
        .collect()
}

fn run(a: SuiteRunArgs) -> Result<Exit> {
    let s = load_suite(&a.suite)?;
    // every test is checked before the first runs: a typo in test 40 must not surface an hour in
    let plan: Vec<Vec<(String, JobSpec)>> = s.tests.iter().map(|t| specs_of(t, &a)).collect();
    for (t, specs) in s.tests.iter().zip(&plan) {
        for (_, spec) in specs {
            spec.validate()
                .with_context(|| format!("suite {}: test {}", s.name, t.name))?;
        }
    }
    a.save.check()?;
    let mut run = match &a.resume {
        Some(id) => {
            let mut store = open_existing_store(a.save.store.db.as_deref())?;
            let r = store.load(id)?;
            match &r.suite {
                Some(info) if info.name == s.name => r,
                _ => bail!("run {} is not a run of suite {}", r.run_id, s.name),
            }
        }
        None => {
            let mut r = new_run("suite");
            r.suite = Some(SuiteInfo {
                name: s.name.clone(),
                planned: s.tests.len() as u32,
            });
            a.save.stamp(&mut r);
            r
        }
    };
    let done: HashSet<String> = run.tests.iter().map(|t| t.name.clone()).collect();
    let pause_s = a.pause.unwrap_or(s.pause_s);
    let mut code = Exit::Ok;
    let mut ran = 0;
    for (i, (t, specs)) in s.tests.iter().zip(&plan).enumerate() {
        if specs.iter().all(|(_, sp)| done.contains(&sp.name)) {
            continue;
        }
        if ran > 0 && pause_s > 0.0 {
            if ran == 1 {
                eprintln!(
                    "iocap: pausing {pause_s} s between tests so write caches drain (arrays with \
                     large caches may need a minute: --pause 60s)"
                );
            }
            if pause(pause_s) {
                code = Exit::Interrupted;
                break;
            }
        }
        if interrupted() {
            code = Exit::Interrupted;
            break;
        }
        eprintln!("== {} test {}/{}: {}", s.name, i + 1, s.tests.len(), t.name);
        super::progress::set_label(format!("{} (test {} of {})", t.name, i + 1, s.tests.len()));
        let only: Vec<JobSpec> = specs.iter().map(|(_, sp)| sp.clone()).collect();
        let first_new = run.tests.len();
        for outcomes in run_repeated(&only, &a.sure, 1, true)? {
            // workloads that ran at the same time share a group; each repeat is its own
            let group = (outcomes.len() > 1).then_some(if a.sure.repeat > 1 {
                run.tests.len() as u32
            } else {
                i as u32
            });
            for ((role, _), o) in specs.iter().zip(outcomes) {
                let mut r = o.result;
                r.role = Some(role.clone());
                r.group = group;
                run.tests.push(r);
            }
        }
        run.repeats = iocap_assess::repeats(&run.tests);
        ran += 1;
        super::audit::record_config(&mut run);
        a.save.save_progress(&run)?;
        let new = &run.tests[first_new..];
        if a.output == OutputFormat::Text {
            print_stdout(&iocap_report::fmt::printable_lines(
                &(iocap_report::tests_text(new) + "\n"),
            ));
        }
        if new.iter().any(|r| r.error.is_some()) {
            code = Exit::Error;
            break;
        }
        if new.iter().any(|r| r.interrupted) {
            code = Exit::Interrupted;
            break;
        }
    }
    finish_suite(&run, &a, &s, code)
}

fn finish_suite(run: &RunResult, a: &SuiteRunArgs, s: &Suite, code: Exit) -> Result<Exit> {
    match a.output {
        OutputFormat::Json => print_stdout(&iocap_report::json(run)),
        OutputFormat::Csv => print_stdout(&iocap_report::csv::render(run)),
        OutputFormat::Text if !run.repeats.is_empty() => {
            print_stdout(&iocap_report::text::render_repeats(&run.repeats));
        }
        OutputFormat::Text => {}
    }
    a.save.write_html(std::slice::from_ref(run))?;
    let (finished, _) = run.suite_progress().unwrap_or_default();
    if (finished as usize) < s.tests.len() {
        eprintln!(
            "iocap: suite {} stopped after {finished} of {} tests; continue it with: iocap suite \
             run {} --resume {}",
            s.name,
            s.tests.len(),
            a.suite,
            run.run_id
        );
    } else if !a.save.no_save {
        eprintln!(
            "iocap: suite {} finished; saved as run {}",
            s.name, run.run_id
        );
    }
    Ok(code)
}

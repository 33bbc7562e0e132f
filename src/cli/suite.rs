//! `iocap suite list|show|run`: a list of tests run one after another, each saved as soon as it
//! finishes, so a suite stopped by Ctrl-C, a fault or a kill keeps every test it finished and
//! can be resumed (`--resume RUN`) where it stopped.

use anyhow::Result;
use clap::{Args, Subcommand};
use iocap_console::{
    claim,
    flags::{Keeping, Placing},
};
use iocap_model::RunResult;
use iocap_plan::Suite;
use iocap_session::{load_suite, Session, SuiteEnd, SuiteOverrides, SuiteRun};

use super::execute::tests_text;
use super::{print_stdout, Exit};
use iocap_console::keep::open_existing_store;
use iocap_flags::{duration_arg, size_arg, CommonArgs, OutputFormat, RoleDirs, SureArgs};

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
    #[command(flatten)]
    pub common: CommonArgs<SureArgs>,
}

pub fn suite(a: SuiteArgs) -> Result<Exit> {
    match a.action {
        SuiteAction::List => print_stdout(&iocap_report::suite::list(&iocap_plan::list_runnable())),
        SuiteAction::Show { suite } => {
            print_stdout(&iocap_report::suite::show(&load_suite(&suite)?))
        }
        SuiteAction::Run(r) => return run(*r),
    }
    Ok(Exit::Ok)
}

fn run(a: SuiteRunArgs) -> Result<Exit> {
    let s = load_suite(&a.suite)?;
    let plan = SuiteRun::plan(
        &s,
        &SuiteOverrides {
            places: a.roles.places()?,
            size_bytes: a.size,
            duration_s: a.duration,
            pause_s: a.pause,
            allow_overwrite: a.common.safety.allow_overwrite,
            tune: &|spec| a.common.extra.apply(spec),
        },
    )?;
    a.common.save.claim(claim::suite(&plan))?;
    let run = match &a.resume {
        Some(id) => {
            plan.resumable(open_existing_store(a.common.save.store.db.as_deref())?.load(id)?)?
        }
        None => {
            let mut r = plan.new_run();
            a.common.save.stamp(&mut r);
            r
        }
    };
    let mut exec = super::ranks::executor(None);
    let mut session = Session::new(run, exec.as_mut())
        .repeating(a.common.extra.repeat, a.common.extra.repeat_pause);
    let end = plan.run(&mut session, |run, first_new| {
        a.common.save.save_progress(run)?;
        if a.common.output.is_text() && first_new < run.tests.len() {
            let text = tests_text(&run.tests[first_new..]) + "\n";
            print_stdout(&iocap_report::fmt::printable_lines(&text));
        }
        Ok(())
    })?;
    let code = match end {
        SuiteEnd::Finished => Exit::Ok,
        SuiteEnd::Error => Exit::Error,
        SuiteEnd::Interrupted => Exit::Interrupted,
    };
    finish_suite(&session.run, &a, &s, code)
}

fn finish_suite(run: &RunResult, a: &SuiteRunArgs, s: &Suite, code: Exit) -> Result<Exit> {
    match a.common.output.output {
        OutputFormat::Text => {
            // the tests were printed as they ran: the partial line closes them
            let repeats =
                (!run.repeats.is_empty()).then(|| iocap_report::text::render_repeats(&run.repeats));
            let text = iocap_report::partial::banner(run) + &repeats.unwrap_or_default();
            print_stdout(&iocap_report::fmt::printable_lines(&text));
        }
        OutputFormat::Csv => print_stdout(&iocap_report::csv::render(run)),
        _ => print_stdout(&iocap_report::json(run)),
    }
    a.common.save.write_html(std::slice::from_ref(run))?;
    if !super::ranks::is_root() {
        return Ok(code);
    }
    let (finished, _) = run.suite_progress().unwrap_or_default();
    let name = iocap_report::fmt::printable(&s.name);
    if (finished as usize) < s.tests.len() {
        eprintln!(
            "iocap: suite {} stopped after {finished} of {} tests; continue it with: iocap suite \
             run {} --resume {}",
            name,
            s.tests.len(),
            iocap_report::fmt::printable(&a.suite),
            run.run_id
        );
    } else if !a.common.save.no_save {
        eprintln!("iocap: suite {name} finished; saved as run {}", run.run_id);
    }
    Ok(code)
}

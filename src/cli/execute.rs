//! Printing a finished [`RunResult`] in the chosen format, and the session every measuring
//! command runs (through `ranks`' executor: the engine, with the terminal's progress).

use anyhow::Result;
use iocap_console::flags::Keeping;
use iocap_model::{RunCommand, RunResult};
use iocap_session::Session;

use super::{print_stdout, Exit};
use iocap_flags::{CommonArgs, OutputFormat};

pub use iocap_report::{run_text, tests_text};
pub use iocap_session::new_run;

/// Runs `flow` in a new session of `command` (`--repeat` too): the run, held to its stored bucket.
pub fn session(
    command: RunCommand,
    sure: Option<&iocap_flags::SureArgs>,
    save: &iocap_flags::SaveArgs,
    flow: impl FnOnce(&mut Session) -> Result<()>,
) -> Result<RunResult> {
    let mut run = new_run(command);
    save.stamp(&mut run);
    let mut exec = super::ranks::executor(Some((&run, save)));
    let mut s = Session::new(run, exec.as_mut());
    if let Some(sure) = sure {
        s = s.repeating(sure.repeat, sure.repeat_pause);
    }
    flow(&mut s)?;
    let db = save.store.db.as_deref();
    Ok(iocap_console::keep::held_against_bucket(s.finish(), db))
}

/// Prints the run in the chosen format and picks the exit code.
pub fn finish(run: &RunResult, output: OutputFormat, text: impl FnOnce() -> String) -> Exit {
    match output {
        // the views escape stored strings; this catches any a view prints as it is
        OutputFormat::Text => print_stdout(&iocap_report::fmt::printable_lines(&text())),
        OutputFormat::Csv => print_stdout(&iocap_report::csv::render(run)),
        // json: the measuring commands offer no other format
        _ => print_stdout(&iocap_report::json(run)),
    }
    let t = run.tests.iter();
    if run.tests.iter().any(|t| t.error.is_some()) {
        if output != OutputFormat::Text && super::ranks::is_root() {
            for e in run.tests.iter().filter_map(|t| t.error.as_ref()) {
                eprintln!("{}", iocap_report::fmt::error_line(&e.to_string()));
            }
        }
        return Exit::Error;
    }
    // Ctrl-C may also have come between tests (a --repeat-pause, a suite's pause)
    if t.clone().any(|t| t.interrupted) || iocap_console::interrupt::interrupted() {
        return Exit::Interrupted;
    }
    Exit::Ok
}

/// The end of a measuring command that takes [`CommonArgs`].
pub trait Finish {
    /// Prints the finished run in the chosen format, then writes its HTML report and saves it
    /// (so a store that cannot be reached never costs the figures); the exit code.
    fn finish(&self, run: &RunResult, text: impl FnOnce() -> String) -> Result<Exit>;
}

impl<E: clap::Args> Finish for CommonArgs<E> {
    fn finish(&self, run: &RunResult, text: impl FnOnce() -> String) -> Result<Exit> {
        let code = finish(run, self.output.output, text);
        self.save.keep(std::slice::from_ref(run))?;
        Ok(code)
    }
}

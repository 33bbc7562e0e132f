//! A run cut short (Ctrl-C, SIGTERM, an I/O error, a killed suite) keeps the figures of what
//! ran, and they look like a whole run's: a preflight's verdicts over half its tests, a
//! saturate's capacity at the step it reached. So every view of such a run says so first, in
//! the same words: the text views in their first line, `show` above the run's heading,
//! `compare` for the side that is partial, Markdown and HTML in a banner at the top, CSV in a
//! column. The words are made here, once, from [`RunResult::cut_short`].

use iocap_model::{CutShort, RunResult, StopCause};

use crate::fmt::printable;

/// What cut the run short, in a few words: `interrupted by SIGTERM`, `interrupted by SIGINT
/// (Ctrl-C)`, `stopped by an I/O error`, `stopped`.
pub fn cause(c: &StopCause) -> String {
    match c {
        StopCause::Signal(s) if s == "stop" => "interrupted".into(),
        StopCause::Signal(s) if s == "SIGINT" || s == "CTRL_C_EVENT" => {
            format!("interrupted by {s} (Ctrl-C)")
        }
        StopCause::Signal(s) => format!("interrupted by {}", printable(s)),
        StopCause::IoError => "stopped by an I/O error".into(),
        StopCause::Unknown => "stopped".into(),
    }
}

/// The words after `PARTIAL: `: what cut the run short, after how many tests, that the figures
/// cover only what ran, and for a suite how to go on; `None` for a whole run.
pub fn sentence(run: &RunResult) -> Option<String> {
    let CutShort {
        cause: c,
        done,
        planned,
    } = run.cut_short()?;
    let Some(planned) = planned else {
        let what = run.command.as_ref().map_or("run", |c| c.name());
        // a command that runs no engine tests (verify, replay): no count of tests to give
        let after = match run.tests.is_empty() {
            true => String::new(),
            false => format!(" after {}", crate::plural(done as usize, "complete test")),
        };
        return Some(format!(
            "this {} was {}{after}; the figures cover only what ran",
            printable(what),
            cause(&c),
        ));
    };
    let why = match c {
        StopCause::Unknown => String::new(),
        c => format!(", {}", cause(&c)),
    };
    let name = run.suite.as_ref().map_or("SUITE", |s| s.name.as_str());
    Some(format!(
        "{done} of {planned} tests finished{why}; the figures cover only those; continue it \
         with: iocap suite run SUITE --resume {}, SUITE being suite '{}' (its built-in name or \
         its file)",
        printable(&run.run_id),
        printable(name)
    ))
}

/// `PARTIAL: this preflight was interrupted by SIGTERM after 2 complete tests; the figures
/// cover only what ran` on one line, for the views that wrap it themselves (HTML, Markdown,
/// `compare`); `None` for a whole run.
pub fn partial_note(run: &RunResult) -> Option<String> {
    sentence(run).map(|s| format!("PARTIAL: {s}"))
}

/// The first lines of a text view of `run`: its [`partial_note`] wrapped to the terminal's
/// width, then a blank line; empty for a whole run.
pub fn banner(run: &RunResult) -> String {
    match sentence(run) {
        Some(s) => crate::assess::wrap("PARTIAL: ", &s, crate::width()) + "\n",
        None => String::new(),
    }
}

/// `true` or `false`: the CSV's `partial` cell.
pub(crate) fn csv_cell(run: &RunResult) -> &'static str {
    if run.cut_short().is_some() {
        "true"
    } else {
        "false"
    }
}

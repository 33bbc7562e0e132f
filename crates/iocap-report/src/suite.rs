//! `iocap suite list`: one row per suite (or profile run as a suite) with its size and how long
//! it takes; the rows are iocap-plan's (`list_runnable`), which also renders one suite's tests
//! (`iocap suite show`). A suite may come from a file: its names and description reach the
//! terminal with their controls escaped.

use comfy_table::CellAlignment;
use iocap_plan::{format_secs, Suite, SuiteSummary};

use crate::fmt::{printable, printable_lines};
use crate::{fit_lines, table};

/// `iocap suite show`: the suite's heading and one line per test, fitted to the terminal.
pub fn show(s: &Suite) -> String {
    fit_lines(&printable_lines(&s.render()))
}

/// The table of `suites`: name, tests, time and what it is for (words: left-aligned).
pub fn list(suites: &[SuiteSummary]) -> String {
    let mut t = table(&["suite", "tests", "takes", "what"]);
    if let Some(c) = t.column_mut(3) {
        c.set_cell_alignment(CellAlignment::Left);
    }
    for s in suites {
        t.add_row(vec![
            printable(&s.name).into_owned(),
            s.tests.to_string(),
            format_secs(s.estimated_s),
            printable_lines(&s.description).into_owned(),
        ]);
    }
    format!("{t}\n")
}

//! `iocap suite list`: one row per suite (or profile run as a suite) with its size and how long
//! it takes; the rows are iocap-plan's (`list_runnable`), which also renders one suite's tests.

use comfy_table::CellAlignment;
use iocap_plan::{format_secs, SuiteSummary};

use crate::table;

/// The table of `suites`: name, tests, time and what it is for (words: left-aligned).
pub fn list(suites: &[SuiteSummary]) -> String {
    let mut t = table(&["suite", "tests", "takes", "what"]);
    if let Some(c) = t.column_mut(3) {
        c.set_cell_alignment(CellAlignment::Left);
    }
    for s in suites {
        t.add_row(vec![
            s.name.clone(),
            s.tests.to_string(),
            format_secs(s.estimated_s),
            s.description.clone(),
        ]);
    }
    format!("{t}\n")
}

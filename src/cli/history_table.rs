//! `iocap history`'s table: by default the columns that fit the terminal (run id, which starts
//! with the UTC start, host, label, and each run's headline: its key figure by kind, from the report crate), wrapped to
//! the width of `COLUMNS`, else the terminal, else 80; `--wide` shows every column.

use comfy_table::{
    presets::UTF8_BORDERS_ONLY, Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table,
    Width,
};
use iocap_report::fmt::{self, printable};
use iocap_store::RunSummary;

/// The width to fit: the terminal's (`COLUMNS`, the tty, else 80), as every view uses.
pub fn width() -> u16 {
    super::width::columns().min(usize::from(u16::MAX)) as u16
}

/// A borders-only table, columns from `right_from` on right-aligned.
pub(super) fn table(header: &[&str], right_from: usize) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(header.iter().map(Cell::new));
    for i in right_from..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// One listed run and its headline (`preflight: 42,000 8K random read IOPS at p99 <= 10 ms`).
pub struct Listed<'a> {
    pub run: &'a RunSummary,
    pub headline: String,
}

fn started(r: &RunSummary) -> String {
    r.started_at
        .replace('T', " ")
        .trim_end_matches('Z')
        .to_string()
}

/// The table; `wide`: every column, however wide, else what fits `width` columns.
pub fn history_table(runs: &[Listed], wide: bool, width: u16) -> String {
    if !wide {
        // the run id starts with its UTC start time: no column of its own here
        let mut t = table(&["run (UTC start-id)", "host", "label", "key figure"], 4);
        t.set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(width);
        let id_len = runs.iter().map(|l| l.run.run_id.len()).max().unwrap_or(0);
        if width >= 60 {
            if let Some(c) = t.column_mut(0) {
                // ids whole, not split across lines
                c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(
                    id_len as u16 + 2,
                )));
            }
        }
        for l in runs {
            let r = l.run;
            t.add_row(vec![
                r.run_id.clone(),
                printable(&r.hostname).into_owned(),
                printable(r.label.as_deref().unwrap_or_default()).into_owned(),
                printable(&l.headline).into_owned(),
            ]);
        }
        return t.to_string() + "\n";
    }
    let mut t = table(
        &[
            "run",
            "started (UTC)",
            "host",
            "label",
            "tags",
            "workload",
            "targets",
            "IOPS",
            "MB/s",
            "p99",
            "key figure",
        ],
        7,
    );
    if let Some(c) = t.column_mut(10) {
        c.set_cell_alignment(CellAlignment::Left);
    }
    for l in runs {
        let r = l.run;
        let workload = if r.tests > 1 {
            format!("{} (+{} tests)", r.workload, r.tests - 1)
        } else {
            r.workload.clone()
        };
        t.add_row(vec![
            r.run_id.clone(),
            started(r),
            printable(&r.hostname).into_owned(),
            printable(r.label.as_deref().unwrap_or_default()).into_owned(),
            printable(&r.tags.join(", ")).into_owned(),
            printable(&workload).into_owned(),
            r.targets
                .iter()
                .map(|t| printable(t))
                .collect::<Vec<_>>()
                .join("\n"),
            fmt::count(r.iops),
            format!("{:.1}", r.mb_s),
            r.lat_us_p99.map(fmt::lat_us).unwrap_or_default(),
            printable(&l.headline).into_owned(),
        ]);
    }
    t.to_string() + "\n"
}

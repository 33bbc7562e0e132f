//! The store's views: `iocap history`'s table (by default the columns that fit the terminal:
//! the run id, which starts with the UTC start, host, label, and each run's key figure by its
//! kind, from [`crate::headline`]; `--wide` shows every column, however wide), the baselines'
//! table and the heading `iocap show` puts over a run.

use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Table, Width};
use iocap_model::{Baseline, RunResult, RunSummary};

use crate::fmt::{self, printable, printable_lines};
use crate::headline::headline;
use crate::{table_whole, width};

/// One listed run and its key figure (`preflight: 42,000 8K random read IOPS at p99 <= 10 ms`).
pub struct Listed<'a> {
    pub run: &'a RunSummary,
    pub headline: String,
}

/// The key figure of a listed run: the headline of its whole result, after `partial` for a run
/// stopped early; its IOPS when the result could not be read (`full` is `None`).
pub fn key_figure(run: &RunSummary, full: Option<&RunResult>) -> String {
    let Some(full) = full else {
        return format!("{} IOPS", fmt::count(run.iops));
    };
    match full.cut_short() {
        Some(c) => match c.planned {
            Some(planned) => format!("partial {}/{planned}: {}", c.done, headline(full)),
            None => format!("partial: {}", headline(full)),
        },
        None => headline(full).to_string(),
    }
}

/// The history table; `wide`: every column, however wide, else what fits [`width`].
pub fn history_table(runs: &[Listed], wide: bool) -> String {
    let t = if wide {
        wide_table(runs)
    } else {
        narrow_table(runs)
    };
    fmt::unbind(&t.to_string()) + "\n"
}

/// Run id, host, label and key figure, fitted to the terminal; a figure and its unit stay on
/// one line ([`fmt::bind_units`]).
fn narrow_table(runs: &[Listed]) -> Table {
    let width = width().min(usize::from(u16::MAX)) as u16;
    // the run id starts with its UTC start time: no column of its own here
    let mut t = table_whole(&["run (UTC start-id)", "host", "label", "key figure"], 4);
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
            printable(&r.hosts_label()).into_owned(),
            printable(r.label.as_deref().unwrap_or_default()).into_owned(),
            fmt::bind_units(&printable(&l.headline)),
        ]);
    }
    t
}

/// Every column, however wide.
fn wide_table(runs: &[Listed]) -> Table {
    let mut t = table_whole(
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
            printable(&r.hosts_label()).into_owned(),
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
    t
}

fn started(r: &RunSummary) -> String {
    r.started_at
        .replace('T', " ")
        .trim_end_matches('Z')
        .to_string()
}

/// The baselines: host, target, run and when it was set.
pub fn baselines_table(list: &[Baseline]) -> String {
    let mut t = table_whole(&["host", "target", "run", "set at (UTC)"], 4);
    for b in list {
        t.add_row(vec![
            printable(&b.hostname).into_owned(),
            printable(&b.target).into_owned(),
            b.run_id.clone(),
            b.set_at.clone(),
        ]);
    }
    t.to_string() + "\n"
}

/// `iocap show`'s text: whether the run is partial first, then its id, host, start, label, tags
/// and note, then `body`, its view ([`crate::text::run_body`]), with every stored string
/// escaped.
pub fn show_text(run: &RunResult, body: &str) -> String {
    let mut head = format!(
        "{}run {} on {}, started {}",
        crate::partial::banner(run),
        printable(&run.run_id),
        printable(&run.host.hostname),
        printable(&run.started_at)
    );
    if let Some(l) = &run.label {
        head.push_str(&format!("\nlabel: {}", printable(l)));
    }
    if !run.tags.is_empty() {
        head.push_str(&format!("\ntags: {}", printable(&run.tags.join(", "))));
    }
    if let Some(n) = &run.note {
        head.push_str(&format!("\nnote: {}", printable_lines(n)));
    }
    // every other stored string of the views, escaped too
    format!("{head}\n\n{}", printable_lines(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 23: the key figure column wrapped between `776` and `µs`. For labels of every
    /// length, each unit in the table has its figure before it on the same line.
    #[test]
    fn a_figure_and_its_unit_share_a_line() {
        for n in 0..40 {
            let run = RunSummary {
                run_id: "20261126T182945-9d0161".into(),
                started_at: "2026-11-26T18:29:45Z".into(),
                hostname: "db01".into(),
                label: Some("x".repeat(n)),
                tags: Vec::new(),
                tests: 1,
                workload: "randread 8K".into(),
                targets: Vec::new(),
                iops: 60_683.0,
                mb_s: 474.1,
                lat_us_p99: Some(776.0),
                ranks: 0,
            };
            let headline = "run: 60,683 IOPS, p99 776 µs (randread 8K)".to_string();
            let table = history_table(
                &[Listed {
                    run: &run,
                    headline,
                }],
                false,
            );
            for line in table.lines() {
                let words: Vec<&str> = line.split_whitespace().collect();
                for (i, w) in words.iter().enumerate() {
                    if w.starts_with("µs") || w.starts_with("IOPS") {
                        let figure = i > 0 && words[i - 1].ends_with(|c: char| c.is_ascii_digit());
                        assert!(figure, "label of {n}: '{w}' without its figure:\n{table}");
                    }
                }
            }
        }
    }
}

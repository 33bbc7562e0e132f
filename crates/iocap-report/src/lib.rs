//! Views of a result. Every view reads the same [`iocap_model::RunResult`], so the terminal
//! table, the CSV and the JSON cannot disagree about a figure.

pub mod assess;
pub mod audit;
pub mod compare;
pub mod cost;
pub mod csv;
pub mod fmt;
pub mod fsync;
pub mod headline;
pub mod headroom;
pub mod history;
pub mod html;
pub mod markdown;
pub mod monitor;
pub mod oscounters;
pub mod partial;
pub mod ranks;
pub mod replay;
mod rows;
pub mod streams;
pub mod suite;
pub mod sure;
mod svg;
pub mod terminal;
pub mod text;
pub mod verify;
pub mod workload;

pub use partial::partial_note;
pub use text::{run_text, tests_text};

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, CellAlignment, Table};
use iocap_model::RunResult;

/// The JSON contract: the result struct itself, pretty-printed ([`to_json`]).
pub fn json(run: &RunResult) -> String {
    to_json(run).expect("results always serialise")
}

/// `v` as pretty JSON and a line break, the way every JSON output is written: exact data, with
/// the characters a terminal acts on as `\uXXXX` escapes ([`fmt::json_escaped`]).
pub fn to_json<T: serde::Serialize + ?Sized>(v: &T) -> serde_json::Result<String> {
    let mut s = fmt::json_escaped(serde_json::to_string_pretty(v)?);
    s.push('\n');
    Ok(s)
}

/// The I/O size of a spec in a few characters: `8K`, or `512-60K mix` for a block-size mix.
pub fn size_label(s: &iocap_model::JobSpec) -> String {
    let min = s.bs_split.iter().map(|b| b.bs_bytes).min();
    let max = s.bs_split.iter().map(|b| b.bs_bytes).max();
    match (min, max) {
        (Some(lo), Some(hi)) if lo != hi => format!(
            "{}-{} mix",
            iocap_model::format_bytes(lo),
            iocap_model::format_bytes(hi)
        ),
        _ => iocap_model::format_bytes(s.bs_bytes),
    }
}

/// The width the terminal views fit, 80 unless the front end says otherwise ([`set_width`]).
static WIDTH: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(80);

/// Sets the width every terminal table and wrapped sentence fits (the front end reads it from
/// `COLUMNS` or the terminal once, at start); at least 40.
pub fn set_width(columns: usize) {
    WIDTH.store(columns.max(40), std::sync::atomic::Ordering::Relaxed);
}

/// The width terminal views fit: 80 unless [`set_width`] said otherwise.
pub fn width() -> usize {
    WIDTH.load(std::sync::atomic::Ordering::Relaxed)
}

/// `text` with every line longer than [`width`] wrapped at spaces, its continuations indented
/// four columns past the line's own indentation; shorter lines (and tables) are left alone.
pub fn fit_lines(text: &str) -> String {
    let w = width();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.chars().count() <= w {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let lead = line.len() - line.trim_start().len();
        out.push_str(&fmt::wrap_indented(
            &line[..lead],
            line.trim_start(),
            w,
            (lead + 4).min(w / 2),
        ));
    }
    out
}

/// A terminal table with `header`: borders only, the first column left-aligned and every
/// column after it (the figures) right-aligned; cells wrap so the table fits [`width`].
pub fn table(header: &[&str]) -> Table {
    let mut t = table_whole(header, 1);
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    t.set_width(width().min(u16::MAX as usize) as u16);
    t
}

/// A terminal table with `header`: borders only, the columns from `right_from` on (the
/// figures) right-aligned, as wide as its cells whatever the terminal (`history --wide`);
/// [`table`] fits the terminal.
pub fn table_whole(header: &[&str], right_from: usize) -> Table {
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

/// Change in percent of `run` against `base`: compare's rule, shared by every view.
pub(crate) use iocap_assess::compare::change_pct;

/// `1 thread`, `3 threads`.
pub(crate) fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    #[test]
    fn size_labels() {
        let mut s = iocap_model::JobSpec::default();
        assert_eq!(size_label(&s), "8K");
        s.bs_split = iocap_model::parse_bs_split("512:10,60K:90").unwrap();
        s.bs_bytes = 61440;
        assert_eq!(size_label(&s), "512-60K mix");
    }

    use super::*;

    #[test]
    fn changes_and_plurals() {
        assert_eq!(change_pct(200.0, 150.0), Some(-25.0));
        assert_eq!(change_pct(0.0, 150.0), None);
        assert_eq!(change_pct(-1.0, 1.0), None);
        assert_eq!(change_pct(f64::NAN, 1.0), None);
        assert_eq!(change_pct(1.0, f64::INFINITY), None);
        assert_eq!(plural(1, "run"), "1 run");
        assert_eq!(plural(0, "run"), "0 runs");
    }
}

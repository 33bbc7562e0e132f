//! Terminal views of what the assessing commands conclude: the load–latency steps and knee of
//! `iocap saturate`, the scale-up of `iocap scaleup`, the capacity table of `iocap preflight`,
//! and tests that ran at the same time (one `group`) with what they did together.
//!
//! The rows of each table and the sentences under them are built here once and drawn by both
//! the terminal tables and the HTML report, so the two cannot disagree.

mod cachescan;
mod group;
mod preflight;
mod saturation;
mod scaleup;

use comfy_table::CellAlignment;
use iocap_model::{format_bytes, TestResult};

use crate::fmt::{self, wrap_indented};
use crate::table;

pub use cachescan::render_cachescan;
pub(crate) use cachescan::{cachescan_steps, level_sentences};
pub use group::{concurrent_groups, render_group};
pub(crate) use group::{group_table, max_p99};
pub use preflight::render_preflight;
pub(crate) use preflight::{preflight_what, value, verdict_counts};
pub use saturation::render_saturation;
pub(crate) use saturation::{
    capacity_sentence, drop_sentence, knee_sentence, max_sentence, refill_lines, saturation_sizes,
    saturation_steps, saturation_throttled,
};
pub use scaleup::render_scaleup;
pub(crate) use scaleup::{linear_iops, scaleup_alone, scaleup_sentence, scaleup_together};

/// A table's header and rows, and which columns hold words (left-aligned) rather than figures.
pub(crate) struct Rows {
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
    pub words: Vec<usize>,
}

impl Rows {
    /// The terminal table.
    pub(crate) fn render(&self) -> String {
        let mut t = table(&self.header);
        for &i in &self.words {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Left);
            }
        }
        for r in &self.rows {
            t.add_row(r.clone());
        }
        t.to_string()
    }
}

/// A latency target as people set it: `10 ms`, `500 µs`; else as [`fmt::lat_us`] writes it.
pub(crate) fn target(us: f64) -> String {
    if us >= 1000.0 && us % 1000.0 == 0.0 {
        format!("{} ms", us / 1000.0)
    } else if us >= 1.0 && us.fract() == 0.0 && us < 1000.0 {
        format!("{us} µs")
    } else {
        fmt::lat_us(us)
    }
}

/// `randread 8K`, `randrw (30% writes) 8K`.
pub(crate) fn workload(t: &TestResult) -> String {
    let s = &t.spec;
    let mix = if s.rw.is_mixed() {
        format!(" ({}% writes)", s.write_pct)
    } else {
        String::new()
    };
    format!("{}{mix} {}", s.rw.name(), format_bytes(s.bs_bytes))
}

pub(crate) fn paths(t: &TestResult) -> String {
    let p: Vec<&str> = if t.targets.is_empty() {
        t.spec.targets.iter().map(|t| t.path.as_str()).collect()
    } else {
        t.targets.iter().map(|t| t.path.as_str()).collect()
    };
    p.join(", ")
}

/// Joins `items` with `, `, keeping under about `max` characters: `a, b … (7)`.
pub(crate) fn short_list(items: &[String], max: usize) -> String {
    let all = items.join(", ");
    if all.chars().count() <= max || items.len() < 3 {
        return all;
    }
    format!(
        "{} … {} ({})",
        items[0],
        items[items.len() - 1],
        items.len()
    )
}

/// `head` then `body` wrapped at `width` columns, later lines indented under the body.
pub(crate) fn wrap(head: &str, body: &str, width: usize) -> String {
    wrap_indented(head, body, width, head.chars().count())
}

/// `text` with every line longer than `width` (at least 40) wrapped under its own text:
/// after its label column (`  verdict        ...`) when it has one, else two columns in.
/// The views made of `key  value` lines (replay's, verify's) fit the width so.
pub(crate) fn wrap_long_lines(text: &str, width: usize) -> String {
    let width = width.max(40);
    text.lines()
        .map(|l| match l.chars().count() > width {
            true => wrap_line(l, width),
            false => format!("{l}\n"),
        })
        .collect()
}

/// A long line wrapped under its text: after its label column when it has one (a run of two
/// spaces in its first 24 columns), else two columns in.
fn wrap_line(l: &str, width: usize) -> String {
    let lead = l.len() - l.trim_start().len();
    let rest = &l[lead..];
    let (head, indent) = match rest.find("  ") {
        Some(i) if lead + i < 24 => {
            let gap = rest[i..].len() - rest[i..].trim_start().len();
            (&l[..lead + i + gap], lead + i + gap)
        }
        _ => (&l[..lead], lead + 2),
    };
    wrap_indented(head, &l[head.len()..], width, indent)
}

pub(crate) fn trim_pct(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_well() {
        assert_eq!(target(10_000.0), "10 ms");
        assert_eq!(target(500.0), "500 µs");
        assert_eq!(target(2_500.0), "2.50 ms");
        assert_eq!(preflight::value(Some(42_000.4), "IOPS"), "42,000 IOPS");
        assert_eq!(preflight::value(Some(2_450.0), "us"), "2.45 ms");
        assert_eq!(preflight::value(Some(3.0), "ms"), "3.00 ms");
        assert_eq!(preflight::value(Some(212.44), "MB/s"), "212.4 MB/s");
        assert_eq!(preflight::value(None, "IOPS"), "-");
        assert_eq!(preflight::value(Some(f64::NAN), "IOPS"), "-");
    }

    #[test]
    fn sentences_wrap_under_their_text() {
        let w = wrap("1. FAIL  ", "log: one two three four five", 20);
        assert_eq!(
            w,
            "1. FAIL  log: one\n         two three\n         four five\n"
        );
        let long = "x".repeat(30);
        assert_eq!(wrap("- ", &long, 10), format!("- {long}\n"));
    }
}

//! How the views write figures, in one place: counts with thousands separators, latencies,
//! durations, sizes, what a missing figure reads, stored strings made safe for a terminal
//! ([`printable`]) and for the HTML report and its charts ([`escape`]), an error with its causes
//! ([`error_text`]), and a sentence wrapped under its head (`wrap_indented`, the model's, which
//! the error text and the views' notes share).
//!
//! A figure that is missing (not measured, not finite) reads [`MISSING`] in the terminal tables
//! and the HTML report, [`MISSING_DASH`] in comparisons and Markdown, [`UNKNOWN`] inside a
//! sentence; each view passes the one it prints, so a view's output does not change when
//! another's does.

mod error;

pub use error::{error_line, error_text, note_line};
pub use iocap_model::text::{acts_on_terminal, json_escaped, printable, printable_lines};
pub(crate) use iocap_model::text::{push_escaped, wrap_indented};
/// Sizes as the parsers read them back (`8K`, `1.5G`) and for people (`77.5G`); latencies in
/// whole microseconds (`850 µs`, `12.5 ms`): the model's, as the measuring crates' sentences use
/// them too.
pub use iocap_model::{format_bytes, format_us, human_bytes};

/// A missing figure in the terminal tables, the HTML report and the CSV-like columns.
pub const MISSING: &str = "-";
/// A missing figure in comparisons and in Markdown, where a hyphen could read as a minus sign.
pub const MISSING_DASH: &str = "–";
/// A figure not known, inside a sentence or a chart's tooltip.
pub const UNKNOWN: &str = "?";

pub use iocap_model::figures::{count, count_or, decimal_or, lat_us, lat_us_or, pct_or, secs};

/// Escapes text for HTML and SVG element content and quoted attribute values: the HTML report's
/// pages and the charts drawn into them.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

/// A space that a table's cell never wraps at: [`bind_units`] puts it between a figure and its
/// unit, [`unbind`] makes it a plain space again once the table is laid out.
const BOUND: char = '\u{a0}';

/// `s` with each figure bound to the unit after it (`776 µs`, `26,930 IOPS`, `12 %`), so a
/// table that wraps the cell (at spaces) never leaves the number at the end of one line and
/// its unit on the next. Undo with [`unbind`] on the rendered table.
pub fn bind_units(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev = ' ';
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied().unwrap_or(' ');
        let unit = next.is_alphabetic() || next == '%';
        out.push(if c == ' ' && prev.is_ascii_digit() && unit {
            BOUND
        } else {
            c
        });
        prev = c;
    }
    out
}

/// A laid-out table with the spaces of [`bind_units`] plain again.
pub fn unbind(table: &str) -> String {
    table.replace(BOUND, " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_stay_with_their_figures() {
        let s = "run: 26,930 IOPS, p99 776 µs at 12 % (write 64K), qd 16 x 1 thread";
        let bound = bind_units(s);
        for pair in [
            "26,930\u{a0}IOPS",
            "p99 776\u{a0}µs",
            "12\u{a0}%",
            "x 1\u{a0}thread",
        ] {
            assert!(bound.contains(pair), "{pair}: {bound}");
        }
        assert!(bound.contains("(write 64K), qd 16"), "{bound}");
        assert_eq!(unbind(&bound), s);
    }

    #[test]
    fn latency_units() {
        assert_eq!(lat_us(5.123), "5.12 µs");
        assert_eq!(lat_us(85.34), "85.3 µs");
        assert_eq!(lat_us(412.6), "413 µs");
        assert_eq!(lat_us(1250.0), "1.25 ms");
        assert_eq!(lat_us(25_000.0), "25.0 ms");
        assert_eq!(lat_us_or(None, MISSING), "-");
        assert_eq!(lat_us_or(Some(f64::NAN), MISSING_DASH), "–");
    }

    #[test]
    fn counts() {
        assert_eq!(count(0.0), "0");
        assert_eq!(count(999.4), "999");
        assert_eq!(count(123_456.7), "123,457");
        assert_eq!(count(1_000_000.0), "1,000,000");
        assert_eq!(count(-5.0), "0");
        assert_eq!(count_or(-5.0, MISSING), "0");
        assert_eq!(count_or(f64::INFINITY, MISSING), "-");
        assert_eq!(decimal_or(1480.25, MISSING), "1,480.2");
        assert_eq!(decimal_or(212.44, MISSING), "212.4");
        assert_eq!(decimal_or(0.0, MISSING), "0.0");
        assert_eq!(decimal_or(-0.01, MISSING), "0.0");
        assert_eq!(decimal_or(-1234.5, MISSING), "-1,234.5");
        assert_eq!(decimal_or(f64::NAN, MISSING), "-");
        assert_eq!(secs(30.0), "30.0 s");
        assert_eq!(pct_or(87.54, MISSING), "87.5 %");
        assert_eq!(pct_or(f64::NAN, MISSING), "-");
    }
}

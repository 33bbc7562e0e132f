//! Markdown: results to paste into a ticket, a wiki page or a mail to a storage vendor. GitHub
//! pipe tables with right-aligned figures, units on every number, and the context a reader
//! needs to trust them (host, workload, engine, targets, warnings).
//!
//! Labels, notes, paths and warnings are user or system strings: they are escaped so a `|`, a
//! newline or a stray `*` cannot break a table or turn into formatting, and their control and
//! bidirectional characters read escaped (`\e`, `\u{202e}`), as in the text views, so none
//! acts on a terminal or reorders the text of a rendered page.

use iocap_model::{human_bytes, EngineFeature, RunResult, TestResult};

use crate::fmt::{self, MISSING_DASH};
use crate::rows::{
    cpu_line, latency_cells, latency_header, ops, throughput_cells, THROUGHPUT_HEADER,
};
use crate::text::describe;

/// Escapes a string for Markdown prose and table cells: backslash-escapes the characters that
/// split cells or start formatting, turns line breaks into `<br>` so a cell stays on one line,
/// a tab into a space, and shows the other characters that act on a terminal escaped.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev = ' ';
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied().unwrap_or(' ');
        match c {
            // inside a word (`io_uring`, `O_DIRECT`) an underscore cannot start emphasis
            '_' if prev.is_alphanumeric() && next.is_alphanumeric() => out.push(c),
            '\\' | '|' | '*' | '_' | '`' | '<' | '>' | '[' | ']' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push_str("<br>");
            }
            '\n' => out.push_str("<br>"),
            '\t' => out.push(' '),
            c if fmt::acts_on_terminal(c) => fmt::push_escaped(&mut out, c),
            c => out.push(c),
        }
        prev = c;
    }
    out
}

/// Like [`esc`] but line breaks become spaces: for headings.
fn esc_line(s: &str) -> String {
    esc(&s.replace("\r\n", " ").replace(['\n', '\r'], " "))
}

/// One pipe-table row.
fn row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

/// Header and alignment rows: the first `text_cols` columns left-aligned, the figures after
/// them right-aligned.
fn header(text_cols: usize, cols: &[&str]) -> String {
    let mut s = row(&cols.iter().map(|c| c.to_string()).collect::<Vec<_>>());
    let align: Vec<String> = (0..cols.len())
        .map(|i| {
            if i < text_cols {
                "---".into()
            } else {
                "---:".into()
            }
        })
        .collect();
    s.push_str(&row(&align));
    s
}

fn render_test(out: &mut String, t: &TestResult) {
    out.push_str(&format!("### {}\n\n", esc_line(&t.name)));
    out.push_str(&format!("- Workload: {}\n", esc(&describe(t))));
    let mut measured = fmt::secs(t.duration_s);
    if t.spec.warmup_s > 0.0 {
        measured.push_str(&format!(" after {} of warmup", fmt::secs(t.spec.warmup_s)));
    }
    if t.interrupted {
        measured.push_str(", interrupted (figures cover the time measured)");
    }
    out.push_str(&format!("- Measured: {measured}\n"));
    if !t.engine_features.is_empty() {
        out.push_str(&format!(
            "- Engine features: {}\n",
            esc(&EngineFeature::list(&t.engine_features))
        ));
    }
    if let [tr] = t.targets.as_slice() {
        out.push_str(&format!(
            "- Target: {} ({}, {}{})\n",
            esc(&tr.path),
            esc(tr.kind.name()),
            human_bytes(tr.size_bytes),
            device(tr.device.as_deref(), tr.fs_type.as_deref())
        ));
    }
    out.push_str(&format!("- {}\n", cpu_line(t)));
    if let Some(e) = &t.error {
        out.push_str(&format!("- **I/O error:** {}\n", esc(&e.to_string())));
    }
    out.push('\n');

    let ops = ops(t);
    out.push_str(&header(1, &THROUGHPUT_HEADER));
    for (n, o) in &ops {
        out.push_str(&row(&throughput_cells(n, o)));
    }
    out.push('\n');

    let lat: Vec<_> = ops
        .iter()
        .filter_map(|(n, o)| o.lat_us.as_ref().map(|l| (n, l)))
        .collect();
    if !lat.is_empty() {
        out.push_str("Latency:\n\n");
        out.push_str(&header(1, &latency_header("")));
        for (n, l) in lat {
            out.push_str(&row(&latency_cells(n, l)));
        }
        out.push('\n');
    }

    if t.targets.len() > 1 {
        out.push_str("Per target:\n\n");
        out.push_str(&header(
            2,
            &["target", "device", "IOPS", "MB/s", "p50", "p99", "max"],
        ));
        for tr in &t.targets {
            let l = tr.total.lat_us.as_ref();
            let lat =
                |f: fn(&iocap_model::LatencyUs) -> f64| fmt::lat_us_or(l.map(f), MISSING_DASH);
            out.push_str(&row(&[
                esc(&tr.path),
                esc(&device_cell(tr.device.as_deref(), tr.fs_type.as_deref())),
                fmt::count(tr.total.iops),
                format!("{:.1}", tr.total.mb_s),
                lat(|l| l.p50),
                lat(|l| l.p99),
                lat(|l| l.max),
            ]));
        }
        out.push('\n');
    }

    if !t.warnings.is_empty() {
        out.push_str("Warnings:\n\n");
        for w in &t.warnings {
            out.push_str(&format!("- {}\n", esc(w)));
        }
        out.push('\n');
    }
}

/// `, on nvme0n1p2 (xfs)`, or nothing when neither is known.
fn device(dev: Option<&str>, fs: Option<&str>) -> String {
    match (dev.map(esc), fs.map(esc)) {
        (Some(d), Some(f)) => format!(", on {d} ({f})"),
        (Some(d), None) => format!(", on {d}"),
        (None, Some(f)) => format!(", on {f}"),
        (None, None) => String::new(),
    }
}

/// `nvme0n1p2 (xfs)` for a table cell, `–` when neither is known.
fn device_cell(dev: Option<&str>, fs: Option<&str>) -> String {
    match (dev.map(esc), fs.map(esc)) {
        (Some(d), Some(f)) => format!("{d} ({f})"),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => MISSING_DASH.into(),
    }
}

/// A Markdown document of `runs`: per run a heading, for a run cut short the banner that says
/// so, host and workload lines, throughput and latency tables, per-target figures when a test
/// has several targets, and warnings.
pub fn render(runs: &[RunResult]) -> String {
    let mut out = String::from("# iocap results\n");
    for r in runs {
        let mut title = esc_line(&r.run_id);
        if let Some(l) = &r.label {
            title.push_str(&format!(" — {}", esc_line(l)));
        }
        title.push_str(&format!(
            " — {} — {}",
            esc_line(&r.started_at),
            esc_line(&r.host.hostname)
        ));
        while out.ends_with("\n\n") {
            out.pop();
        }
        out.push_str(&format!("\n## {title}\n\n"));
        if let Some(p) = crate::partial_note(r) {
            // a block quote in bold, before anything else of the run
            out.push_str(&format!("> **{}**\n\n", esc(&p)));
        }
        let h = &r.host;
        out.push_str(&format!(
            "- Host: {}, Linux {}, {}, {} CPUs, {} memory\n",
            esc(&h.hostname),
            esc(&h.kernel),
            esc(&h.cpu_model),
            h.cpus,
            human_bytes(h.memory_bytes)
        ));
        out.push_str(&format!("- iocap {}\n", esc(&r.iocap_version)));
        if !r.tags.is_empty() {
            let tags: Vec<String> = r.tags.iter().map(|t| esc(t)).collect();
            out.push_str(&format!("- Tags: {}\n", tags.join(", ")));
        }
        if let Some(n) = &r.note {
            out.push_str(&format!("- Note: {}\n", esc(n)));
        }
        out.push('\n');
        for t in &r.tests {
            render_test(&mut out, t);
        }
    }
    if runs.is_empty() {
        out.push_str("\nNo runs.\n");
    }
    // One trailing newline, no blank line at the end.
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escaping() {
        assert_eq!(esc("a|b"), "a\\|b");
        assert_eq!(esc("one\ntwo\r\nthree"), "one<br>two<br>three");
        assert_eq!(esc("x\\|y"), "x\\\\\\|y");
        assert_eq!(esc("*bold* <b>"), "\\*bold\\* \\<b\\>");
        assert_eq!(esc("plain 8K/s"), "plain 8K/s");
        assert_eq!(esc("io_uring /d/_tmp_/x"), "io_uring /d/\\_tmp\\_/x");
        assert_eq!(esc("a\tb\x1bc\u{202e}d"), "a b\\ec\\u{202e}d");
    }
}

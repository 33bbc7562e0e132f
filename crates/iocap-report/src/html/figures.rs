//! The full figures at the end of the report: per run and test the same throughput, latency
//! and per-target tables as the terminal view, and the CPU cost, for readers who need the
//! exact numbers behind the charts; after the last test of a group that ran at the same time,
//! the group's table with its `together` line.

use std::fmt::Write as _;

use iocap_model::{RunResult, TestResult};

use super::{escape, swatch};
use crate::assess::group_table;
use crate::fmt::{self, MISSING};
use crate::plural;
use crate::rows::{
    cpu_line, latency_cells, latency_header, ops, throughput_cells, THROUGHPUT_HEADER,
};

/// An HTML table; a first column headed `target` or `volume` holds paths, which may wrap.
pub(super) fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    table_with(out, header, rows, &[]);
}

/// [`table`], with the columns `words` (words, not figures) aligned left.
pub(super) fn table_with(out: &mut String, header: &[&str], rows: &[Vec<String>], words: &[usize]) {
    out.push_str(r#"<div class="scroll"><table><thead><tr>"#);
    for (j, h) in header.iter().enumerate() {
        let class = if j > 0 && words.contains(&j) {
            r#" class="word""#
        } else {
            ""
        };
        let _ = write!(out, "<th{class}>{}</th>", escape(h));
    }
    out.push_str("</tr></thead><tbody>");
    for r in rows {
        out.push_str("<tr>");
        for (j, cell) in r.iter().enumerate() {
            let class = if j == 0 && (header[0] == "target" || header[0] == "volume") {
                r#" class="path""#
            } else if j > 0 && words.contains(&j) {
                r#" class="word""#
            } else {
                ""
            };
            let _ = write!(out, "<td{class}>{}</td>", escape(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

pub(super) fn figures(out: &mut String, runs: &[RunResult], names: &[String]) {
    out.push_str(r#"<section id="figures"><h2>Full figures</h2>"#);
    for (i, r) in runs.iter().enumerate() {
        for (k, t) in r.tests.iter().enumerate() {
            let _ = write!(
                out,
                "<h3>{}{} — {}</h3>",
                swatch(i),
                escape(&names[i]),
                escape(&t.name)
            );
            let ops = ops(t);
            let rows: Vec<Vec<String>> = ops.iter().map(|(n, o)| throughput_cells(n, o)).collect();
            table(out, &THROUGHPUT_HEADER, &rows);
            let rows: Vec<Vec<String>> = ops
                .iter()
                .filter_map(|(n, o)| Some(latency_cells(n, o.lat_us.as_ref()?)))
                .collect();
            if rows.is_empty() {
                out.push_str("<p>No latency figures: no I/O completed.</p>");
            } else {
                table(out, &latency_header("latency"), &rows);
            }
            let rows: Vec<Vec<String>> = t
                .targets
                .iter()
                .map(|tr| {
                    let l = tr.total.lat_us.as_ref();
                    let lat =
                        |f: fn(&iocap_model::LatencyUs) -> f64| fmt::lat_us_or(l.map(f), MISSING);
                    vec![
                        tr.path.clone(),
                        tr.device.clone().unwrap_or_else(|| MISSING.into()),
                        tr.fs_type.clone().unwrap_or_else(|| MISSING.into()),
                        fmt::count(tr.total.iops),
                        format!("{:.1}", tr.total.mb_s),
                        lat(|l| l.p50),
                        lat(|l| l.p99),
                        lat(|l| l.max),
                    ]
                })
                .collect();
            table(
                out,
                &[
                    "target", "device", "fs", "IOPS", "MB/s", "p50", "p99", "max",
                ],
                &rows,
            );
            if let Some(ot) = crate::oscounters::os_table(t) {
                let os = t.os_counters.as_ref().map(crate::oscounters::title);
                let _ = write!(out, "<h4>{}</h4>", escape(&os.unwrap_or_default()));
                if !ot.rows.is_empty() {
                    let header: Vec<&str> = ot.header.iter().map(String::as_str).collect();
                    table_with(out, &header, &ot.rows, &[0]);
                }
                for n in &ot.notes {
                    let _ = write!(out, "<p>{}</p>", escape(n));
                }
            }
            let _ = write!(out, "<p>{}.</p>", cpu_line(t));
            if let Some(g) = t.group {
                let last = !r.tests[k + 1..].iter().any(|u| u.group == Some(g));
                let members: Vec<&TestResult> =
                    r.tests.iter().filter(|u| u.group == Some(g)).collect();
                if last && members.len() > 1 {
                    let _ = write!(
                        out,
                        "<h3>{}{} — group {g}: {} at the same time</h3>",
                        swatch(i),
                        escape(&names[i]),
                        plural(members.len(), "workload")
                    );
                    let rows = group_table(&members);
                    table_with(out, &rows.header, &rows.rows, &rows.words);
                }
            }
        }
    }
    out.push_str("</section>");
}

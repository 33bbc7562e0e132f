//! The self-contained HTML report: one file a DBA can mail, archive or print, that opens with no
//! network and no script. It reads, top to bottom: a banner for each run cut short (its figures
//! cover only what ran), the preflight verdicts (when a run has them),
//! a plain-language summary (and how later runs compare with the first), the host and test
//! setup, the saturation curve and scale-up (when a run has them), charts drawn by
//! [`crate::svg`], every warning, and the full figures as the terminal view shows them, with
//! tests that ran at the same time shown together.
//!
//! Several runs are compared test by test (the first test of each run together, and so on), in
//! one colour per run. Every string that comes from a result is escaped with [`escape`].
//!
//! Each section of the page has its own submodule (`preflight`, `summary`, `setup`,
//! `saturation`, `charts`, `warnings`, `figures`); this file holds what they share (run names,
//! colour swatches), the style sheet and the page frame. Escaping is [`crate::fmt`]'s, shared
//! with the charts.

mod cachescan;
mod charts;
mod cost;
mod figures;
mod preflight;
mod ranks;
mod saturation;
mod setup;
mod summary;
mod warnings;
mod workload;

use std::fmt::Write as _;

use iocap_model::RunResult;

use crate::{plural, svg};

/// Escaping is [`crate::fmt`]'s: the charts escape their labels with it too.
pub use crate::fmt::escape;

const CSS: &str = r#"
:root{color-scheme:light}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
 color:#1d1d1f;background:#fff;margin:0 auto;max-width:1240px;padding:20px 28px 48px;line-height:1.45;font-size:15px}
h1{font-size:26px;margin:4px 0 2px}h2{font-size:20px;margin:32px 0 10px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:16px;margin:20px 0 8px}.sub{color:#555;margin:0 0 12px}
.summary li{margin:6px 0}.run-name{font-weight:600}
.swatch{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;vertical-align:baseline}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));gap:14px}
.card{border:1px solid #ddd;border-radius:6px;padding:10px 14px}
.card h3{margin-top:4px}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}
dl.kv dt{color:#555}dl.kv dd{margin:0;overflow-wrap:anywhere}
.tag{display:inline-block;background:#eef2f7;border:1px solid #d4dbe5;border-radius:3px;padding:0 5px;margin:0 4px 2px 0;font-size:13px}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:14px}
figure.chart-card{margin:0;border:1px solid #e2e2e2;border-radius:6px;padding:6px;break-inside:avoid;page-break-inside:avoid}
svg.chart{display:block;width:100%;height:auto}
.warnings{border:1px solid #e0a040;border-left:6px solid #d97706;background:#fff8ec;border-radius:6px;padding:8px 16px}
.warnings.ok{border-color:#9ccf9c;border-left-color:#2e7d32;background:#f3faf3}
.warnings li{margin:4px 0}.error{color:#a01010;font-weight:600}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:6px 0 14px;font-size:13.5px;font-variant-numeric:tabular-nums}
th,td{padding:3px 9px;border-bottom:1px solid #e6e6e6;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}th{background:#f4f5f7;font-weight:600}
td.path{white-space:normal;overflow-wrap:anywhere;max-width:340px}
th.word,td.word{text-align:left}
.badge{display:inline-block;min-width:3.3em;text-align:center;font-weight:700;font-size:12px;letter-spacing:.04em;
 border-radius:3px;padding:1px 6px;color:#fff;-webkit-print-color-adjust:exact;print-color-adjust:exact}
.badge.pass{background:#2e7d32}.badge.warn{background:#b45309}.badge.fail{background:#b91c1c}.badge.info{background:#6b7280}
.preflight{margin-bottom:18px}.verdicts{margin:4px 0 8px}.verdicts .badge{margin-right:2px}
table.capacity{width:100%}table.capacity th,table.capacity td{text-align:left}
table.capacity .num{text-align:right}table.capacity td.metric{white-space:normal}
table.capacity tr.row td{border-bottom:none;padding-top:7px}
table.capacity tr.sentence td{white-space:normal;color:#333;padding-bottom:8px;border-bottom:1px solid #ddd}
table.capacity tbody.v-fail tr.sentence td{color:#7f1010}
.capacity-lines{margin:4px 0 8px}.caption{margin:10px 0 0;color:#555;font-size:13.5px}.capacity-lines li{margin:2px 0}
.summary .together{color:#333}
.partial-banner{border:1px solid #b91c1c;border-left:6px solid #b91c1c;background:#fdecec;color:#7f1010;border-radius:6px;padding:8px 16px;margin:10px 0 16px}
footer{margin-top:36px;color:#777;font-size:12.5px}
@media print{
 @page{margin:14mm}
 body{max-width:none;padding:0;font-size:10.5pt;background:#fff;color:#000}
 h2,h3{break-after:avoid;page-break-after:avoid}
 .cards{grid-template-columns:1fr 1fr;gap:8px}.charts{display:block}
 .card,figure.chart-card,table,.warnings,table.capacity tbody{break-inside:avoid;page-break-inside:avoid}
 figure.chart-card{max-width:16cm;margin:0 auto 6mm;border:none}
 th{background:#fff;border-bottom:1.5px solid #000}
 .warnings,.warnings.ok{background:#fff}
 table.capacity{break-inside:auto;page-break-inside:auto}
 .scroll{overflow:visible}table{font-size:8.5pt}
}
"#;

/// The name a run goes by in legends: its label, else its run id; made unique.
fn run_names(runs: &[RunResult]) -> Vec<String> {
    let base: Vec<String> = runs
        .iter()
        .map(|r| {
            r.label
                .clone()
                .filter(|l| !l.trim().is_empty())
                .unwrap_or_else(|| r.run_id.clone())
        })
        .collect();
    base.iter()
        .enumerate()
        .map(|(i, n)| {
            if base.iter().filter(|m| *m == n).count() > 1 {
                format!("{n} (#{})", i + 1)
            } else {
                n.clone()
            }
        })
        .collect()
}

/// A small square in the colour of run `i`, as in the charts.
fn swatch(i: usize) -> String {
    format!(
        r#"<span class="swatch" style="background:{}"></span>"#,
        svg::colour(i)
    )
}

/// Above everything else, for each run cut short (Ctrl-C, SIGTERM, an I/O error, a suite that
/// did not finish), a banner that says its figures cover only what ran.
fn partial_banner(out: &mut String, runs: &[RunResult], names: &[String]) {
    for (i, r) in runs.iter().enumerate() {
        if let Some(p) = crate::partial_note(r) {
            let who = if runs.len() > 1 {
                format!("{}{}: ", swatch(i), escape(&names[i]))
            } else {
                String::new()
            };
            let _ = write!(
                out,
                r#"<p class="partial-banner" role="alert">{who}<strong>{}</strong></p>"#,
                escape(&p)
            );
        }
    }
}

/// Renders `runs` as one self-contained HTML page: preflight, summary, setup, saturation,
/// scale-up, charts, warnings and full figures (the assessment sections only for runs that have
/// the result). The page needs no network and runs no script; charts are inline SVG. With several
/// runs, later runs are compared with the first and all runs share the charts, test by test.
/// Never panics: empty input, empty series and tests without I/O give a page that says so.
pub fn render(runs: &[RunResult]) -> String {
    let names = run_names(runs);
    let mut out = String::with_capacity(64 * 1024);
    let hosts: Vec<&str> = runs.iter().fold(vec![], |mut v, r| {
        if !v.contains(&r.host.hostname.as_str()) {
            v.push(r.host.hostname.as_str());
        }
        v
    });
    let title = match runs {
        [] => "iocap report".to_string(),
        [_] => format!("iocap report: {}", names[0]),
        _ => format!("iocap report: {} runs", runs.len()),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{CSS}</style></head><body><h1>{}</h1><p class=\"sub\">{} on {}</p>",
        escape(&title),
        escape(&title),
        plural(runs.len(), "run"),
        escape(&hosts.join(", "))
    );
    if runs.is_empty() {
        out.push_str("<p>No results to show.</p>");
    } else {
        partial_banner(&mut out, runs, &names);
        preflight::preflight(&mut out, runs, &names);
        summary::summary(&mut out, runs, &names);
        ranks::ranks(&mut out, runs, &names);
        setup::setup(&mut out, runs, &names);
        saturation::saturation(&mut out, runs, &names);
        saturation::scaleup(&mut out, runs, &names);
        cachescan::cachescan(&mut out, runs, &names);
        cost::cost(&mut out, runs, &names);
        workload::workload(&mut out, runs, &names);
        if runs.iter().any(|r| !r.tests.is_empty()) {
            out.push_str(r#"<section id="charts"><h2>Charts</h2>"#);
            charts::chart_sets(&mut out, runs, &names);
            out.push_str("</section>");
        }
        warnings::warnings(&mut out, runs, &names);
        figures::figures(&mut out, runs, &names);
    }
    let version = runs.first().map(|r| r.iocap_version.as_str()).unwrap_or("");
    let _ = writeln!(
        out,
        "<footer>Made by iocap {}. Hover over a point or bar for its value.</footer></body></html>",
        escape(version)
    );
    out
}

//! The "Preflight" section that opens a report of `iocap preflight`: per run, the capacity
//! table with a verdict badge on every row (the word and a colour, so it reads in print and to
//! the colour-blind), what each row means right under it, and the preflight's warnings.

use std::fmt::Write as _;

use iocap_model::{RunResult, Verdict};

use super::{escape, swatch};
use crate::assess::{preflight_what, value, verdict_counts};
use crate::fmt::MISSING;

/// `<span class="badge fail">FAIL</span>`.
pub(super) fn badge(v: Verdict) -> String {
    format!(
        r#"<span class="badge {}">{}</span>"#,
        v.name().to_ascii_lowercase(),
        v.name()
    )
}

pub(super) fn preflight(out: &mut String, runs: &[RunResult], names: &[String]) {
    let with: Vec<(usize, &RunResult)> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.preflight.is_some())
        .collect();
    if with.is_empty() {
        return;
    }
    out.push_str(r#"<section id="preflight"><h2>Preflight</h2>"#);
    for (i, r) in with {
        let Some(p) = &r.preflight else { continue };
        let _ = write!(
            out,
            r#"<div class="preflight"><h3>{}{}: {}</h3>"#,
            swatch(i),
            escape(&names[i]),
            escape(&preflight_what(p))
        );
        let counts: Vec<String> = [Verdict::Fail, Verdict::Warn, Verdict::Pass, Verdict::Info]
            .iter()
            .filter_map(|v| {
                let n = p.rows.iter().filter(|r| r.verdict == *v).count();
                (n > 0).then(|| format!("{} × {n}", badge(*v)))
            })
            .collect();
        let _ = write!(
            out,
            r#"<p class="verdicts" title="{}">{}</p>"#,
            escape(&verdict_counts(p)),
            if counts.is_empty() {
                "No capacity rows.".to_string()
            } else {
                counts.join(" ")
            }
        );
        if p.cache_included {
            out.push_str(
                r#"<p class="cache-included"><strong>Cache included:</strong> the test files could not be made 4 times larger than the largest cache found, so part of these figures are cache hits (see the warnings).</p>"#,
            );
        }
        if !p.rows.is_empty() {
            let against = p.rows.iter().any(|r| r.against.is_some());
            let cols = if against { 5 } else { 4 };
            out.push_str(r#"<div class="scroll"><table class="capacity"><thead><tr><th>verdict</th><th>role</th><th>metric</th><th class="num">value</th>"#);
            if against {
                out.push_str("<th>against</th>");
            }
            out.push_str("</tr></thead>");
            for row in &p.rows {
                let _ = write!(
                    out,
                    r#"<tbody class="v-{}"><tr class="row"><td>{}</td><td>{}</td><td class="metric">{}</td><td class="num">{}</td>"#,
                    row.verdict.name().to_ascii_lowercase(),
                    badge(row.verdict),
                    row.role.name(),
                    escape(&row.metric),
                    escape(&value(row.value, &row.unit))
                );
                if against {
                    let _ = write!(
                        out,
                        r#"<td class="metric">{}</td>"#,
                        escape(row.against.as_deref().unwrap_or(MISSING))
                    );
                }
                let _ = write!(
                    out,
                    r#"</tr><tr class="sentence"><td></td><td colspan="{}">{}</td></tr></tbody>"#,
                    cols - 1,
                    escape(&row.sentence)
                );
            }
            out.push_str("</table></div>");
        }
        if !p.warnings.is_empty() {
            let items: Vec<String> = p
                .warnings
                .iter()
                .map(|w| format!("<li>{}</li>", escape(w)))
                .collect();
            let _ = write!(
                out,
                r#"<div class="warnings"><ul>{}</ul></div>"#,
                items.concat()
            );
        }
        out.push_str("</div>");
    }
    out.push_str("</section>");
}

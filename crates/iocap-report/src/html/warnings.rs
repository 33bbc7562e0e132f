//! The warnings section: every I/O error, interruption and warning of every test in one list,
//! each naming its run and test, or a plain statement that there were none. Kept as its own
//! section so a problem is never buried in the figures.

use std::fmt::Write as _;

use iocap_model::RunResult;

use super::escape;
use crate::fmt;

pub(super) fn warnings(out: &mut String, runs: &[RunResult], names: &[String]) {
    let mut items = vec![];
    for (i, r) in runs.iter().enumerate() {
        for t in &r.tests {
            let who = format!("{} / {}", names[i], t.name);
            if let Some(e) = &t.error {
                items.push(format!(
                    r#"<li class="error">{}: I/O error: {}</li>"#,
                    escape(&who),
                    escape(&e.to_string())
                ));
            }
            if t.interrupted {
                items.push(format!(
                    "<li>{}: interrupted after {}</li>",
                    escape(&who),
                    fmt::secs(t.duration_s)
                ));
            }
            for w in &t.warnings {
                items.push(format!("<li>{}: {}</li>", escape(&who), escape(w)));
            }
        }
    }
    out.push_str(r#"<section id="warnings"><h2>Warnings</h2>"#);
    if items.is_empty() {
        out.push_str(r#"<div class="warnings ok">No warnings and no errors.</div>"#);
    } else {
        let _ = write!(
            out,
            r#"<div class="warnings"><ul>{}</ul></div>"#,
            items.concat()
        );
    }
    out.push_str("</section>");
}

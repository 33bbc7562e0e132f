//! The "Per host" section: for every test that ran on several hosts at once (MPI ranks), a row
//! per rank beside the merged figures the rest of the page shows, its start offset, and the
//! hosts below the ranks' median by more than their noise marked slow.

use std::fmt::Write as _;

use iocap_model::RunResult;

use super::escape;
use super::figures::table_with;
use crate::fmt::{self, MISSING};

pub(super) fn ranks(out: &mut String, runs: &[RunResult], names: &[String]) {
    let tests: Vec<(usize, &iocap_model::TestResult)> = runs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.tests.iter().map(move |t| (i, t)))
        .filter(|(_, t)| t.ranks.is_some())
        .collect();
    if tests.is_empty() {
        return;
    }
    out.push_str(r#"<section id="ranks"><h2>Per host</h2>"#);
    for (i, t) in tests {
        let Some(r) = &t.ranks else { continue };
        let _ = write!(
            out,
            "<h3>{}{}</h3><p>{} ranks, start spread {:.0} µs.</p>",
            if runs.len() > 1 {
                format!("{}: ", escape(&names[i]))
            } else {
                String::new()
            },
            escape(&t.name),
            r.ranks.len(),
            r.start_spread_us
        );
        let rows: Vec<Vec<String>> = r
            .ranks
            .iter()
            .map(|s| {
                let p99 = s.result.total.lat_us.as_ref().map(|l| l.p99);
                vec![
                    s.rank.to_string(),
                    s.host.clone(),
                    fmt::count_or(s.result.total.iops, MISSING),
                    format!("{:.1}", s.result.total.mb_s),
                    fmt::lat_us_or(p99, MISSING),
                    format!("+{:.0} µs", s.start_offset_us),
                    if s.below_median { "slow" } else { "" }.to_string(),
                ]
            })
            .collect();
        table_with(
            out,
            &["rank", "host", "IOPS", "MB/s", "p99", "start", ""],
            &rows,
            &[1, 6],
        );
    }
    out.push_str("</section>");
}

//! The per-host view of a test run on several hosts at once (MPI ranks): one row per rank
//! beside the merged figures above it, the start spread, and the hosts whose IOPS fall below
//! the ranks' median by more than their own noise, named.

use iocap_model::TestResult;

use crate::fmt::printable;
use crate::fmt::{count as fmt_count, lat_us as fmt_lat_us};
use crate::table;

/// The per-host table of `r`, empty for a test on one host.
pub fn render(r: &TestResult) -> String {
    let Some(ranks) = &r.ranks else {
        return String::new();
    };
    let mut out = format!(
        "\nper host: {} ranks, start spread {:.0} µs, merged in {:.1} ms\n",
        ranks.ranks.len(),
        ranks.start_spread_us,
        ranks.merge_us / 1e3
    );
    let mut t = table(&["rank", "host", "IOPS", "MB/s", "p99", "start", ""]);
    for s in &ranks.ranks {
        let p99 = s.result.total.lat_us.as_ref().map(|l| l.p99);
        t.add_row(vec![
            s.rank.to_string(),
            printable(&s.host).into_owned(),
            fmt_count(s.result.total.iops),
            format!("{:.1}", s.result.total.mb_s),
            p99.map_or_else(|| "-".into(), fmt_lat_us),
            format!("+{:.0} µs", s.start_offset_us),
            if s.below_median { "slow" } else { "" }.into(),
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    for s in ranks.ranks.iter().filter(|s| s.below_median) {
        let says = format!(
            "rank {} ({}) is below the ranks' median IOPS by more than its own noise: a slow \
             host or path.",
            s.rank,
            printable(&s.host)
        );
        out.push_str(&crate::assess::wrap("", &says, crate::width()));
    }
    out
}

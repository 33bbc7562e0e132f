//! The per-host view of a test run on several hosts at once (MPI ranks): one row per rank
//! beside the merged figures above it, the start spread, and the hosts whose IOPS fall below
//! the ranks' median by more than their own noise, named.

use iocap_model::TestResult;

use crate::fmt::{self, printable, MISSING};
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
            fmt::count_or(s.result.total.iops, MISSING),
            format!("{:.1}", s.result.total.mb_s),
            fmt::lat_us_or(p99, MISSING),
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

/// The per-host tables of compared runs (the base first): for `compare`, under the merged
/// figures' comparison, for every test that ran on several hosts.
pub fn render_runs(runs: &[&iocap_model::RunResult]) -> String {
    let mut out = String::new();
    for r in runs {
        for t in r.tests.iter().filter(|t| t.ranks.is_some()) {
            out.push_str(&format!(
                "\n{}: {}",
                printable(&r.run_id),
                printable(&t.name)
            ));
            out.push_str(&render(t));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use iocap_model::fixture::{run, FixtureRun};
    use iocap_model::{RankScope, Ranks, RunResult};

    /// A run whose one test ran on three hosts, the third at half the others' IOPS.
    pub(crate) fn on_three_hosts() -> RunResult {
        let mut r = run(&FixtureRun::default());
        let scope = |rank: u32, iops: f64| RankScope {
            rank,
            host: format!("db0{rank}"),
            start_offset_us: f64::from(rank) * 40.0,
            below_median: iops < 30_000.0,
            result: run(&FixtureRun {
                iops,
                ..FixtureRun::default()
            })
            .tests
            .remove(0),
            host_info: None,
        };
        r.tests[0].ranks = Some(Ranks {
            start_spread_us: 80.0,
            merge_us: 500.0,
            ranks: vec![scope(0, 40_000.0), scope(1, 41_000.0), scope(2, 20_000.0)],
        });
        r
    }

    #[test]
    fn the_text_and_html_views_have_a_row_per_host_and_name_the_slow_one() {
        crate::set_width(80);
        let r = on_three_hosts();
        let text = super::render(&r.tests[0]);
        assert!(
            text.contains("per host: 3 ranks, start spread 80 µs"),
            "{text}"
        );
        for h in ["db00", "db01", "db02"] {
            assert!(text.contains(h), "{text}");
        }
        assert_eq!(
            text.matches("slow").count(),
            2,
            "the mark and the sentence: {text}"
        );
        assert!(text.contains("rank 2 (db02) is below"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        let html = crate::html::render(std::slice::from_ref(&r));
        assert!(html.contains("<h2>Per host</h2>") && html.contains("db02"));
        // a test on one host has no such table
        let one = run(&FixtureRun::default());
        assert!(super::render(&one.tests[0]).is_empty());
        assert!(!crate::html::render(std::slice::from_ref(&one)).contains("Per host"));
        let both = super::render_runs(&[&one, &r]);
        assert_eq!(both.matches("per host:").count(), 1, "{both}");
        assert!(both.contains(&r.run_id), "{both}");
    }
}

//! `--repeat N`: one figure per run is a sample of the storage's mood, not its capacity. The
//! median across runs, with the interquartile range beside it, is what a rerun tomorrow should
//! land near; the minimum and maximum show how far one run can stray.

use iocap_model::{RepeatSpread, RepeatSummary, TestResult};

fn spread(values: &[f64]) -> Option<RepeatSpread> {
    let (q1, median, q3) = iocap_stats::quartiles(values)?;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(RepeatSpread {
        median,
        q1,
        q3,
        min,
        max,
        iqr_pct: if median != 0.0 {
            (q3 - q1) / median * 100.0
        } else {
            0.0
        },
    })
}

/// The spread across runs of every test that ran more than once (`repeat` set), in the order
/// the tests first appear. Interrupted and failed runs are left out; a test none of whose runs
/// completed has no summary.
pub fn repeats(tests: &[TestResult]) -> Vec<RepeatSummary> {
    let mut names: Vec<&str> = Vec::new();
    for t in tests.iter().filter(|t| t.repeat.is_some()) {
        if !names.contains(&t.name.as_str()) {
            names.push(&t.name);
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let runs: Vec<&TestResult> = tests
                .iter()
                .filter(|t| t.name == name && t.repeat.is_some())
                .filter(|t| !t.interrupted && t.error.is_none())
                .collect();
            let figure = |f: fn(&TestResult) -> Option<f64>| {
                let v: Option<Vec<f64>> = runs.iter().map(|t| f(t)).collect();
                v.and_then(|v| spread(&v))
            };
            Some(RepeatSummary {
                name: name.to_string(),
                runs: runs.len() as u32,
                iops: figure(|t| Some(t.total.iops))?,
                mb_s: figure(|t| Some(t.total.mb_s))?,
                p99_us: figure(|t| t.total.lat_us.as_ref().map(|l| l.p99)),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, i: u32, iops: f64) -> TestResult {
        let mut t = iocap_model::fixture::run(&Default::default()).tests[0].clone();
        t.name = name.into();
        t.repeat = Some(i);
        t.total.iops = iops;
        t.total.mb_s = iops * 8192.0 / 1e6;
        t
    }

    #[test]
    fn median_and_quartiles_across_runs() {
        let tests = vec![
            run("a", 1, 100.0),
            run("a", 2, 300.0),
            run("b", 1, 50.0),
            run("a", 3, 200.0),
            run("a", 4, 400.0),
            run("a", 5, 500.0),
        ];
        let r = repeats(&tests);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].name, "a");
        assert_eq!(r[0].runs, 5);
        let s = &r[0].iops;
        assert_eq!(
            (s.min, s.q1, s.median, s.q3, s.max),
            (100.0, 200.0, 300.0, 400.0, 500.0)
        );
        assert!((s.iqr_pct - 200.0 / 3.0).abs() < 1e-9);
        assert_eq!(r[1].runs, 1);
    }

    #[test]
    fn failed_runs_do_not_count_and_unrepeated_tests_have_no_summary() {
        let mut bad = run("a", 2, 1.0);
        bad.interrupted = true;
        let mut plain = run("c", 1, 10.0);
        plain.repeat = None;
        let r = repeats(&[run("a", 1, 100.0), bad, plain]);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].runs, r[0].iops.median), (1, 100.0));
    }
}

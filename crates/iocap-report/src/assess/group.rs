//! Tests that ran at the same time (one `group`), and what they did together.

use iocap_model::TestResult;

use super::{workload, Rows};
use crate::fmt::{self, MISSING};
use crate::plural;

/// The tests of a run that ran at the same time, by `group` in order of first appearance, each
/// group ready for [`render_group`]; tests that ran alone are left out.
pub fn concurrent_groups(tests: &[TestResult]) -> Vec<(u32, Vec<&TestResult>)> {
    let mut out: Vec<(u32, Vec<&TestResult>)> = vec![];
    for t in tests {
        let Some(g) = t.group else { continue };
        match out.iter_mut().find(|(n, _)| *n == g) {
            Some((_, v)) => v.push(t),
            None => out.push((g, vec![t])),
        }
    }
    out
}

/// The worst p99 of `tests`.
pub(crate) fn max_p99(tests: &[&TestResult]) -> Option<f64> {
    tests
        .iter()
        .filter_map(|t| t.total.lat_us.as_ref().map(|l| l.p99))
        .filter(|v| v.is_finite())
        .reduce(f64::max)
}

pub(crate) fn group_table(tests: &[&TestResult]) -> Rows {
    let mut rows: Vec<Vec<String>> = tests
        .iter()
        .map(|t| {
            vec![
                t.role.map_or_else(|| MISSING.into(), |r| r.name().into()),
                format!("{} ({})", t.name, workload(t)),
                fmt::count_or(t.total.iops, MISSING),
                fmt::decimal_or(t.total.mb_s, MISSING),
                fmt::lat_us_or(t.total.lat_us.as_ref().map(|l| l.p99), MISSING),
            ]
        })
        .collect();
    let sum = |f: fn(&TestResult) -> f64| tests.iter().map(|t| f(t)).sum::<f64>();
    rows.push(vec![
        "together".into(),
        format!("sum of {}", plural(tests.len(), "workload")),
        fmt::count_or(sum(|t| t.total.iops), MISSING),
        fmt::decimal_or(sum(|t| t.total.mb_s), MISSING),
        match max_p99(tests) {
            Some(v) => format!("{} (max)", fmt::lat_us(v)),
            None => MISSING.into(),
        },
    ]);
    Rows {
        header: vec!["role", "workload", "IOPS", "MB/s", "p99"],
        rows,
        words: vec![1],
    }
}

/// Tests that ran at the same time (one `group`): a line per workload (role, workload, IOPS,
/// MB/s, p99), then `together`: the summed IOPS and MB/s and the worst p99, marked `(max)`.
pub fn render_group(tests: &[&TestResult]) -> String {
    if tests.is_empty() {
        return "no tests\n".into();
    }
    let first = tests[0].group;
    let mut out = match first {
        Some(g) if tests.iter().all(|t| t.group == first) => {
            format!(
                "group {g}: {} at the same time\n",
                plural(tests.len(), "workload")
            )
        }
        _ => format!("{} at the same time\n", plural(tests.len(), "workload")),
    };
    out.push_str(&group_table(tests).render());
    out.push('\n');
    out
}

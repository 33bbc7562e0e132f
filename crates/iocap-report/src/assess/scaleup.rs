//! `iocap scaleup`: each volume alone, then 1, 2, 4, ... together against linear.

use iocap_model::{ScaleStep, ScaleUp};

use super::{short_list, Rows};
use crate::fmt::{self, MISSING};
use crate::plural;

pub(crate) fn scaleup_alone(s: &ScaleUp) -> Rows {
    let rows = s
        .alone
        .iter()
        .map(|v| {
            vec![
                v.path.clone(),
                fmt::count_or(v.iops, MISSING),
                fmt::decimal_or(v.mb_s, MISSING),
                fmt::lat_us_or(v.lat_us_p99, MISSING),
                if v.slow {
                    "◀ slow".into()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    Rows {
        header: vec!["volume", "IOPS", "MB/s", "p99", "note"],
        rows,
        words: vec![4],
    }
}

/// What the volumes of `step` did alone, summed: the linear expectation.
pub(crate) fn linear_iops(s: &ScaleUp, step: &ScaleStep) -> f64 {
    let alone: Option<f64> = step
        .paths
        .iter()
        .map(|p| s.alone.iter().find(|v| &v.path == p).map(|v| v.iops))
        .sum();
    match alone {
        Some(v) if !step.paths.is_empty() => v,
        _ if step.efficiency_pct > 0.0 => step.iops * 100.0 / step.efficiency_pct,
        _ => f64::NAN,
    }
}

pub(crate) fn scaleup_together(s: &ScaleUp) -> Rows {
    let rows = s
        .together
        .iter()
        .map(|t| {
            vec![
                t.paths.len().to_string(),
                fmt::count_or(t.iops, MISSING),
                fmt::decimal_or(t.mb_s, MISSING),
                fmt::count_or(linear_iops(s, t), MISSING),
                fmt::pct_or(t.efficiency_pct, MISSING),
                short_list(&t.paths, 60),
            ]
        })
        .collect();
    Rows {
        header: vec![
            "volumes",
            "IOPS",
            "MB/s",
            "linear IOPS",
            "efficiency",
            "paths",
        ],
        rows,
        words: vec![5],
    }
}

/// `4 volumes together: 310,000 IOPS, 92.0 % of linear`, for the largest step.
pub(crate) fn scaleup_sentence(s: &ScaleUp) -> Option<String> {
    let last = s.together.iter().max_by_key(|t| t.paths.len())?;
    Some(format!(
        "{} together: {} IOPS, {} of linear",
        plural(last.paths.len(), "volume"),
        fmt::count_or(last.iops, MISSING),
        fmt::pct_or(last.efficiency_pct, MISSING)
    ))
}

/// The `iocap scaleup` view: each volume alone (slow ones flagged), then 1, 2, 4, ... together
/// with their aggregate and the efficiency against the sum of the same volumes alone.
pub fn render_scaleup(s: &ScaleUp) -> String {
    let mut out = String::from("scale-up\n\neach volume alone\n");
    if s.alone.is_empty() {
        out.push_str("no volumes measured alone\n");
    } else {
        out.push_str(&scaleup_alone(s).render());
        out.push('\n');
    }
    out.push_str("\ntogether (linear: the sum of the same volumes alone)\n");
    if s.together.is_empty() {
        out.push_str("no volumes measured together\n");
    } else {
        out.push_str(&scaleup_together(s).render());
        out.push('\n');
    }
    out.push('\n');
    let slow = s.slow_paths();
    if !slow.is_empty() {
        out.push_str(&format!(
            "slow: {} (more than 20 % below the median of the others)\n",
            slow.join(", ")
        ));
    }
    if let Some(line) = scaleup_sentence(s) {
        out.push_str(&format!("{line}\n"));
    }
    out
}

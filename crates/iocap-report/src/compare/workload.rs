//! Two recorded workloads side by side (`iocap compare` of capture or characterise runs): the
//! figures a DBA compares between yesterday's trace and today's, or production and staging.
//! Shown, never flagged: a workload is what was asked of the storage, not what it did.

use iocap_model::request::Op;
use iocap_model::workload::Workload;
use iocap_model::{format_bytes, human_bytes};

use super::Difference;
use crate::fmt::{count, lat_us};

/// A figure's name, and how it reads for one workload.
type Figure = (&'static str, fn(&Workload) -> String);

/// One row per figure, `base` and `run` as people read them; empty unless both are workloads.
pub(super) fn rows(base: Option<&Workload>, run: Option<&Workload>) -> Vec<Difference> {
    let (Some(b), Some(r)) = (base, run) else {
        return vec![];
    };
    let figures: [Figure; 11] = [
        ("requests", |w| count(w.records as f64)),
        ("IOPS mean", |w| count(w.rate.iops_mean)),
        ("IOPS peak", |w| count(w.rate.iops_peak)),
        ("MB/s mean", |w| format!("{:.1}", w.rate.mb_s_mean)),
        ("reads", |w| format!("{:.1} %", share(w, Op::Read))),
        ("commonest size", |w| {
            w.sizes
                .iter()
                .filter(|s| s.size_bytes > 0)
                .max_by_key(|s| s.count)
                .map_or("-".into(), |s| format_bytes(s.size_bytes))
        }),
        ("sequential", |w| {
            format!("{:.1} %", w.randomness.sequential_pct)
        }),
        ("queue depth (busy)", |w| {
            w.queue_depth
                .as_ref()
                .map_or("-".into(), |q| q.typical.to_string())
        }),
        ("read p99", |w| p99(w, Op::Read)),
        ("flushes/s", |w| format!("{:.1}", w.durability.flush_per_s)),
        ("working set", |w| human_bytes(w.working_set.distinct_bytes)),
    ];
    figures
        .iter()
        .map(|(f, v)| Difference {
            field: (*f).into(),
            base: v(b),
            run: v(r),
        })
        .collect()
}

fn share(w: &Workload, op: Op) -> f64 {
    w.mix
        .iter()
        .find(|m| m.op == op)
        .map_or(0.0, |m| m.count_pct)
}

fn p99(w: &Workload, op: Op) -> String {
    w.latency
        .iter()
        .find(|l| l.op == op && l.size_class == "all")
        .map_or("-".into(), |l| lat_us(l.latency.p99_us))
}

#[cfg(test)]
mod tests {
    use iocap_model::workload::*;

    fn run(iops: f64, reads: f64) -> iocap_model::RunResult {
        let mut r = iocap_model::fixture::run(&Default::default());
        r.tests.clear();
        r.workload = Some(Workload {
            records: 1000,
            mix: vec![OpShare {
                op: iocap_model::request::Op::Read,
                count_pct: reads,
                ..Default::default()
            }],
            rate: Rate {
                iops_mean: iops,
                ..Default::default()
            },
            ..Default::default()
        });
        r
    }

    #[test]
    fn two_workloads_compare_figure_by_figure() {
        let c = crate::compare::compare(
            &run(1000.0, 70.0),
            &[run(2500.0, 90.0)],
            &Default::default(),
        );
        let rows = &c.runs[0].workload;
        let iops = rows.iter().find(|d| d.field == "IOPS mean").unwrap();
        assert_eq!((iops.base.as_str(), iops.run.as_str()), ("1,000", "2,500"));
        let reads = rows.iter().find(|d| d.field == "reads").unwrap();
        assert_eq!(
            (reads.base.as_str(), reads.run.as_str()),
            ("70.0 %", "90.0 %")
        );
        let text = crate::compare::render_text(&c);
        assert!(
            text.contains("IOPS mean") && text.contains("2,500"),
            "{text}"
        );
        assert_eq!(c.regression_count, 0, "a workload is shown, never flagged");
    }
}

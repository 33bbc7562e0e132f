//! Two replays side by side (`iocap compare` of replay runs): the same trace on storage A and
//! on storage B is the main use. Shown, not flagged: the regression thresholds are the tests'.

use iocap_model::replay::{Replay, ReplaySide};
use iocap_model::request::Op;

use super::Difference;
use crate::fmt::{count, lat_us, MISSING};

/// A figure's name, and how it reads for one replay.
type Figure = (&'static str, fn(&Replay) -> String);

/// One row per figure; empty unless both runs are replays.
pub(super) fn rows(base: Option<&Replay>, run: Option<&Replay>) -> Vec<Difference> {
    let (Some(b), Some(r)) = (base, run) else {
        return vec![];
    };
    let figures: [Figure; 13] = [
        ("trace", |p| {
            let name = |t: &String| {
                std::path::Path::new(t)
                    .file_name()
                    .map_or(t.clone(), |n| n.to_string_lossy().into_owned())
            };
            p.trace.iter().map(name).collect::<Vec<_>>().join(", ")
        }),
        ("target", |p| p.target.clone()),
        ("timing", |p| {
            format!("{} {}x, map {}", p.timing, p.speed, p.mapping)
        }),
        ("IOPS", |p| count(p.replayed.iops)),
        ("MB/s", |p| format!("{:.1}", p.replayed.mb_s)),
        ("read p50", |p| lat(&p.replayed, Op::Read, |l| l.p50_us)),
        ("read p99", |p| lat(&p.replayed, Op::Read, |l| l.p99_us)),
        ("write p99", |p| lat(&p.replayed, Op::Write, |l| l.p99_us)),
        ("flush p99", |p| lat(&p.replayed, Op::Flush, |l| l.p99_us)),
        ("queue depth mean", |p| {
            p.replayed
                .qd_mean
                .map_or(MISSING.into(), |q| format!("{q:.1}"))
        }),
        ("lag p99", |p| lat_us(p.lag.p99_us)),
        ("late > 1 ms", |p| format!("{:.2} %", p.lag.late_1ms_pct)),
        ("kept up", |p| {
            if p.verdict.kept_up { "yes" } else { "no" }.into()
        }),
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

fn lat(s: &ReplaySide, op: Op, pick: fn(&iocap_model::workload::Percentiles) -> f64) -> String {
    s.latency
        .iter()
        .find(|l| l.op == op)
        .map_or(MISSING.into(), |l| lat_us(pick(&l.latency)))
}

#[cfg(test)]
mod tests {
    use iocap_model::replay::*;
    use iocap_model::workload::Percentiles;

    fn run(iops: f64, p99_us: f64) -> iocap_model::RunResult {
        let mut r = iocap_model::fixture::run(&Default::default());
        r.tests.clear();
        r.replay = Some(Replay {
            trace: vec!["pg.iotrace".into()],
            replayed: ReplaySide {
                iops,
                latency: vec![OpLatency {
                    op: iocap_model::request::Op::Read,
                    count: 10,
                    latency: Percentiles {
                        p99_us,
                        ..Percentiles::default()
                    },
                }],
                ..ReplaySide::default()
            },
            ..Replay::default()
        });
        r
    }

    #[test]
    fn two_replays_compare_side_by_side() {
        let c = crate::compare::compare(
            &run(12_000.0, 800.0),
            &[run(30_000.0, 250.0)],
            &Default::default(),
        );
        let rows = &c.runs[0].replay;
        let row = |f: &str| rows.iter().find(|d| d.field == f).unwrap();
        assert_eq!(
            (row("IOPS").base.as_str(), row("IOPS").run.as_str()),
            ("12,000", "30,000")
        );
        assert_eq!(row("read p99").run, "250 µs");
        assert_eq!(row("trace").base, "pg.iotrace");
        let text = crate::compare::render_text(&c);
        assert!(text.contains("replay") && text.contains("30,000"), "{text}");
    }
}

//! The terminal view of `iocap replay`: what was replayed where and how, then the recording and
//! the replay side by side (rate, reads, queue depth, latency per operation), the schedule lag
//! and the verdict. Within 80 columns.

use std::fmt::Write as _;

use iocap_model::human_bytes;
use iocap_model::replay::{Replay, ReplaySide};
use iocap_model::request::Op;

use crate::fmt::{count, decimal_or, lat_us, printable, MISSING};

/// The replay as text.
pub fn render(r: &Replay) -> String {
    let mut o = String::new();
    heading(&mut o, r);
    sides(&mut o, r);
    lag(&mut o, r);
    crate::assess::wrap_long_lines(&o, crate::width())
}

fn heading(o: &mut String, r: &Replay) {
    let _ = writeln!(
        o,
        "Replay: {} ({})",
        printable(&r.trace.join(", ")),
        r.format
    );
    let created = if r.created { ", created" } else { "" };
    let _ = writeln!(
        o,
        "  onto {} ({}{created}), {} range; trace spans {}, mapping {}",
        printable(&r.target),
        r.target_kind.name().replace('_', " "),
        human_bytes(r.range_bytes),
        human_bytes(r.trace_span_bytes),
        r.mapping
    );
    let timing = match r.timing.as_str() {
        "fast" => match r.fast_depth {
            Some(d) => format!("fast (fixed depth {d})"),
            None => "fast (at the recorded depth)".into(),
        },
        t => format!("{t} at {}x", r.speed),
    };
    let _ = writeln!(
        o,
        "  timing {timing}; {}, {}, at most {} in flight{}",
        r.io_engine,
        if r.direct { "O_DIRECT" } else { "buffered" },
        r.max_inflight,
        if r.interrupted { "; INTERRUPTED" } else { "" }
    );
}

/// One row of the side-by-side table.
fn row(o: &mut String, label: &str, rec: String, rep: String) {
    let _ = writeln!(o, "  {label:<22}{rec:>14}{rep:>14}");
}

fn sides(o: &mut String, r: &Replay) {
    let (a, b) = (&r.recorded, &r.replayed);
    o.push('\n');
    row(o, "", "recorded".into(), "replayed".into());
    let secs = |s: &ReplaySide| format!("{:.2} s", s.duration_s);
    row(o, "duration", secs(a), secs(b));
    row(o, "requests", count(a.ios as f64), count(b.ios as f64));
    row(o, "IOPS", count(a.iops), count(b.iops));
    row(
        o,
        "MB/s",
        decimal_or(a.mb_s, MISSING),
        decimal_or(b.mb_s, MISSING),
    );
    let reads = |s: &ReplaySide| format!("{:.1} %", s.read_pct);
    row(o, "reads (of reads+writes)", reads(a), reads(b));
    let qd_mean = |s: &ReplaySide| s.qd_mean.map_or(MISSING.into(), |q| format!("{q:.1}"));
    let qd_max = |s: &ReplaySide| s.qd_max.map_or(MISSING.into(), |q| q.to_string());
    row(o, "queue depth mean", qd_mean(a), qd_mean(b));
    row(o, "queue depth max", qd_max(a), qd_max(b));
    for op in [Op::Read, Op::Write, Op::Flush, Op::Discard] {
        let find = |s: &ReplaySide| s.latency.iter().find(|l| l.op == op).cloned();
        let (x, y) = (find(a), find(b));
        if x.is_none() && y.is_none() {
            continue;
        }
        type Pick = fn(&iocap_model::workload::Percentiles) -> f64;
        let picks: [(&str, Pick); 3] = [
            ("p50", |p| p.p50_us),
            ("p99", |p| p.p99_us),
            ("p99.9", |p| p.p999_us),
        ];
        for (name, pick) in picks {
            let v = |l: &Option<iocap_model::replay::OpLatency>| {
                l.as_ref()
                    .map_or(MISSING.into(), |l| lat_us(pick(&l.latency)))
            };
            row(o, &format!("{op} latency {name}"), v(&x), v(&y));
        }
    }
}

fn lag(o: &mut String, r: &Replay) {
    o.push('\n');
    if r.timing != "fast" {
        let l = &r.lag;
        let _ = writeln!(
            o,
            "  schedule lag   p50 {}, p99 {}, p99.9 {}, max {}",
            lat_us(l.p50_us),
            lat_us(l.p99_us),
            lat_us(l.p999_us),
            lat_us(l.max_us)
        );
        let _ = writeln!(
            o,
            "                 {} requests ({:.2} %) issued over 1 ms late",
            count(l.late_1ms as f64),
            l.late_1ms_pct
        );
    }
    let _ = writeln!(o, "  verdict        {}", r.verdict.text);
    let skipped: Vec<String> = r
        .ops
        .iter()
        .filter(|op| op.skipped > 0)
        .map(|op| format!("{} {}", count(op.skipped as f64), op.op))
        .collect();
    if !skipped.is_empty() {
        let _ = writeln!(o, "  not replayed   {}", skipped.join(", "));
    }
    let errors: Vec<String> = r
        .ops
        .iter()
        .filter(|op| op.errors > 0)
        .map(|op| format!("{} {}", count(op.errors as f64), op.op))
        .collect();
    if !errors.is_empty() {
        let _ = writeln!(o, "  I/O errors     {}", errors.join(", "));
    }
    if let Some(f) = &r.fault {
        let _ = writeln!(o, "  first fault    {}", printable(&f.to_string()));
    }
    for w in &r.warnings {
        let _ = writeln!(o, "  warning: {}", printable(w));
    }
}

#[cfg(test)]
mod tests {
    use iocap_model::replay::{Lag, OpLatency, ReplayOp, ReplayVerdict};
    use iocap_model::workload::Percentiles;

    use super::*;

    fn side(iops: f64, p99_us: f64) -> ReplaySide {
        ReplaySide {
            duration_s: 10.0,
            ios: (iops * 10.0) as u64,
            iops,
            mb_s: iops * 8192.0 / 1e6,
            read_pct: 70.0,
            latency: vec![OpLatency {
                op: iocap_model::request::Op::Read,
                count: 1000,
                latency: Percentiles {
                    p50_us: p99_us / 4.0,
                    p99_us,
                    p999_us: p99_us * 2.0,
                    ..Percentiles::default()
                },
            }],
            qd_mean: Some(3.2),
            qd_max: Some(17),
        }
    }

    #[test]
    fn the_view_puts_the_recording_beside_the_replay_within_80_columns() {
        let r = Replay {
            trace: vec!["/var/tmp/pgbench-20261126.iotrace".into()],
            format: "iocap trace".into(),
            target: "/mnt/new-array/iocap.testfile".into(),
            target_kind: iocap_model::TargetKind::File,
            created: true,
            range_bytes: 64 << 30,
            trace_span_bytes: 200 << 30,
            mapping: "scale".into(),
            timing: "recorded".into(),
            speed: 1.0,
            max_inflight: 256,
            io_engine: iocap_model::Engine::IoUring,
            direct: true,
            recorded: side(12_400.0, 900.0),
            replayed: side(12_398.0, 310.0),
            ops: vec![ReplayOp {
                op: iocap_model::request::Op::Discard,
                recorded: 40,
                skipped: 40,
                ..ReplayOp::default()
            }],
            lag: Lag {
                p99_us: 2_400.0,
                late_1ms_pct: 3.5,
                ..Lag::default()
            },
            verdict: ReplayVerdict {
                kept_up: false,
                text: "fell behind: lag p99 2.4 ms, max 9.0 ms; 3.5 % issued over 1 ms late".into(),
            },
            ..Replay::default()
        };
        crate::set_width(80);
        let t = render(&r);
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        let iops = t
            .lines()
            .find(|l| l.trim_start().starts_with("IOPS"))
            .unwrap();
        assert!(iops.contains("12,400") && iops.contains("12,398"), "{iops}");
        let p99 = t.lines().find(|l| l.contains("read latency p99 ")).unwrap();
        assert!(p99.contains("900 µs") && p99.contains("310 µs"), "{p99}");
        assert!(t.contains("mapping scale") && t.contains("fell behind: lag p99 2.4 ms"));
        assert!(t.contains("not replayed   40 discard"), "{t}");
        // a long verdict wraps under its text, not under its label
        let mut long = r.clone();
        long.verdict.text = format!("{} {}", r.verdict.text, "and a great deal more ".repeat(4));
        let t = render(&long);
        let at = t
            .lines()
            .position(|l| l.starts_with("  verdict        fell"))
            .unwrap();
        let next = t.lines().nth(at + 1).unwrap();
        assert!(
            next.starts_with(&" ".repeat(17)) && !next.starts_with(&" ".repeat(18)),
            "{t}"
        );
    }
}

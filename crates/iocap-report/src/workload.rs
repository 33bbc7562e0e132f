//! The terminal view of a recorded workload (`iocap characterise`, the end of `iocap
//! capture`): the seed method's questions, one short block each, within 80 columns; last, with
//! `--against RUN`, the headroom on that run's curve ([`crate::headroom`]).

use std::fmt::Write as _;

use iocap_model::workload::{Percentiles, Workload};
use iocap_model::{format_bytes, human_bytes};

use crate::fmt::{count, lat_us, printable};

/// What a finished capture wrote, for stderr: the file, its size per request, then, each on
/// a line of its own, the completions that are no request of the trace's: those of requests
/// issued before the start (with data, in the first seconds), and those of zero bytes whose
/// issue was not seen (the flush machinery ends a write with preflush or FUA a second time,
/// with no bytes; or a flush's completion without its issue). Neither is a lost request.
pub fn captured_line(
    path: &str,
    records: u64,
    file_bytes: u64,
    before_start: u64,
    zero_byte: u64,
) -> String {
    let mut o = format!(
        "{} requests written to {} ({} bytes, {:.1} per request)",
        count(records as f64),
        printable(path),
        count(file_bytes as f64),
        file_bytes as f64 / records.max(1) as f64
    );
    if before_start > 0 {
        let _ = write!(
            o,
            "\n  {} completions of requests issued before the start left out",
            count(before_start as f64)
        );
    }
    if zero_byte > 0 {
        let _ = write!(
            o,
            "\n  {} zero-byte completions left out (not requests): the flush\n  \
             machinery's second end of a write with preflush or FUA, or a flush's\n  \
             end without its issue",
            count(zero_byte as f64)
        );
    }
    o
}

/// The workload as text.
pub fn render(w: &Workload) -> String {
    let mut o = String::new();
    heading(&mut o, w);
    crate::streams::render(&mut o, w);
    mix(&mut o, w);
    shape(&mut o, w);
    rate(&mut o, w);
    durability(&mut o, w);
    latency(&mut o, w);
    others(&mut o, w);
    if let Some(h) = &w.headroom {
        o.push('\n');
        o.push_str(&crate::headroom::render(h));
    }
    // the prose lines wrap at the terminal's width (the tables fit 80 columns as they are)
    let width = crate::width().max(40);
    o.lines()
        .map(|l| match l.chars().count() > width {
            true => crate::fmt::wrap_indented("", l, width, 2),
            false => format!("{l}\n"),
        })
        .collect()
}

fn heading(o: &mut String, w: &Workload) {
    let what = if w.target.is_empty() {
        w.files.join(", ")
    } else {
        w.target.clone()
    };
    let _ = writeln!(
        o,
        "Workload: {} requests in {:.1} s ({}, {})\n  of {}",
        count(w.records as f64),
        w.duration_s,
        w.source,
        printable(&w.devices.join(", ")),
        printable(&what),
    );
    if !w.filters.is_empty() {
        let _ = writeln!(o, "Only: {}", printable(&w.filters.join(", ")));
    }
    let lost = w.lost_ring_full + w.lost_other;
    if lost > 0 {
        let _ = writeln!(
            o,
            "WARNING: {} requests were lost by the capture ({} when its ring buffer was \
             full, {} whose issue or completion it did not see); every figure below misses \
             them",
            count(lost as f64),
            count(w.lost_ring_full as f64),
            count(w.lost_other as f64)
        );
    }
    if !w.complete {
        let why = w
            .read_error
            .as_deref()
            .unwrap_or("the trace ended before its end mark");
        let _ = writeln!(
            o,
            "WARNING: incomplete trace, figures cover what was read: {}",
            printable(why)
        );
    }
    if !w.has_completions {
        let _ = writeln!(
            o,
            "The trace has no completion times: no queue depth or latency."
        );
    }
}

fn mix(o: &mut String, w: &Workload) {
    let _ = writeln!(o, "\nMix            requests    share      bytes    share");
    for m in &w.mix {
        let _ = writeln!(
            o,
            "  {:<12} {:>10} {:>7.1} % {:>10} {:>6.1} %",
            m.op,
            count(m.count as f64),
            m.count_pct,
            human_bytes(m.bytes),
            m.bytes_pct
        );
    }
    let _ = writeln!(o, "Sizes");
    for op in w.mix.iter().map(|m| m.op) {
        let sizes: Vec<String> = w
            .sizes
            .iter()
            .filter(|s| s.op == op)
            .take(5)
            .map(|s| {
                let size = if s.size_bytes == 0 {
                    "other".into()
                } else {
                    format_bytes(s.size_bytes)
                };
                format!(
                    "{size} {}%",
                    if s.pct < 1.0 {
                        format!("{:.1}", s.pct)
                    } else {
                        format!("{:.0}", s.pct)
                    }
                )
            })
            .collect();
        if !sizes.is_empty() {
            let _ = writeln!(o, "  {:<12} {}", op, sizes.join(", "));
        }
    }
}

fn shape(o: &mut String, w: &Workload) {
    let r = &w.randomness;
    let _ = writeln!(
        o,
        "\nRandomness: {:.1} % sequential, {:.1} % within 1 MiB, {:.1} % further\n  ({} \
         runs followed: a run is {})",
        r.sequential_pct,
        r.near_pct,
        r.far_pct,
        count(r.streams as f64),
        if w.file_map.is_some() {
            "a file (a process outside the mapped files)"
        } else {
            "a device and a process"
        }
    );
    if let Some(q) = &w.queue_depth {
        let top: Vec<String> = {
            let mut d = q.depths.clone();
            d.sort_by(|a, b| b.issued_pct.total_cmp(&a.issued_pct));
            d.iter()
                .take(4)
                .map(|d| format!("{} ({:.0}%)", d.depth, d.issued_pct))
                .collect()
        };
        let _ = writeln!(
            o,
            "Queue depth: mean {:.1}, max {}, most of the busy time at {}\n  requests \
             issued at: {}",
            q.mean,
            q.max,
            q.typical,
            top.join(", ")
        );
    }
}

fn rate(o: &mut String, w: &Workload) {
    let r = &w.rate;
    let _ = writeln!(
        o,
        "\nRate: mean {} IOPS {:.1} MB/s; peak {} IOPS {:.1} MB/s\n  ({} s buckets; the 99th \
         percentile bucket {} IOPS)",
        count(r.iops_mean),
        r.mb_s_mean,
        count(r.iops_peak),
        r.mb_s_peak,
        r.bucket_s,
        count(r.iops_p99)
    );
    let b = &r.bursts;
    if b.on_periods > 0 {
        let _ = writeln!(
            o,
            "Bursts: peak/mean {:.1}; {} periods above {} IOPS,\n  typically {:.0} s on, {:.0} s \
             off (mean {} IOPS when on)",
            r.peak_to_mean,
            b.on_periods,
            count(b.threshold_iops),
            b.on_s_median,
            b.off_s_median,
            count(b.on_iops_mean)
        );
    } else {
        let _ = writeln!(o, "Bursts: none (peak/mean {:.1})", r.peak_to_mean);
    }
}

fn pcts(p: &Percentiles) -> String {
    format!(
        "p50 {} p90 {} p99 {} p99.9 {} max {}",
        lat_us(p.p50_us),
        lat_us(p.p90_us),
        lat_us(p.p99_us),
        lat_us(p.p999_us),
        lat_us(p.max_us)
    )
}

fn durability(o: &mut String, w: &Workload) {
    let d = &w.durability;
    let _ = writeln!(
        o,
        "\nDurability: {:.1} flushes/s, {:.1} FUA writes/s",
        d.flush_per_s, d.fua_per_s
    );
    if let Some(l) = &d.durable_latency {
        let _ = writeln!(
            o,
            "  write until durable ({} writes): {}",
            count(d.durable_writes as f64),
            pcts(l)
        );
    }
}

fn latency(o: &mut String, w: &Workload) {
    if w.latency.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nLatency        size    requests      p50      p99    p99.9      max"
    );
    for l in &w.latency {
        let p = &l.latency;
        let _ = writeln!(
            o,
            "  {:<12} {:<6} {:>10} {:>8} {:>8} {:>8} {:>8}",
            l.op,
            l.size_class,
            count(l.count as f64),
            lat_us(p.p50_us),
            lat_us(p.p99_us),
            lat_us(p.p999_us),
            lat_us(p.max_us)
        );
    }
}

fn others(o: &mut String, w: &Workload) {
    let s = &w.working_set;
    let _ = writeln!(
        o,
        "\nWorking set: {} distinct ({} read, {} written){}",
        human_bytes(s.distinct_bytes),
        human_bytes(s.read_bytes),
        human_bytes(s.written_bytes),
        if s.capped {
            ", at least: too large to track block by block"
        } else {
            ""
        }
    );
    if let Some(f) = &s.fits {
        let _ = writeln!(o, "  fits in {f}");
    }
    let _ = writeln!(o, "\nProcesses        requests      bytes   reads");
    for p in &w.processes {
        let name: String = printable(&p.comm).chars().take(14).collect();
        let _ = writeln!(
            o,
            "  {:<14} {:>10} {:>10} {:>5.0} %",
            name,
            count(p.count as f64),
            human_bytes(p.bytes),
            p.read_pct
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iocap_model::workload::*;

    #[test]
    fn a_captures_line_names_each_kind_of_completion_left_out_within_80_columns() {
        let t = captured_line("t.iotrace", 354_457, 2_300_000, 0, 0);
        assert_eq!(
            t,
            "354,457 requests written to t.iotrace (2,300,000 bytes, 6.5 per request)"
        );
        let t = captured_line("t.iotrace", 10, 100, 3, 4_901);
        assert!(
            t.contains("\n  3 completions of requests issued before the start left out"),
            "{t}"
        );
        assert!(
            t.contains("\n  4,901 zero-byte completions left out"),
            "{t}"
        );
        assert!(!t.contains("lost"), "{t}");
        for line in t.lines() {
            assert!(line.chars().count() + "iocap: ".len() <= 80, "{line}");
        }
    }

    #[test]
    fn the_view_fits_80_columns_and_names_what_a_user_looks_for() {
        let w = Workload {
            source: "capture".into(),
            devices: vec!["nvme0n1".into()],
            target: "/var/lib/postgresql".into(),
            records: 123_456_789,
            duration_s: 3600.0,
            has_completions: true,
            lost_ring_full: 12,
            mix: vec![OpShare {
                op: iocap_model::request::Op::WriteZeroes,
                count: 123_456_789,
                bytes: 1 << 50,
                count_pct: 100.0,
                bytes_pct: 100.0,
            }],
            sizes: vec![SizeCount {
                op: iocap_model::request::Op::WriteZeroes,
                size_bytes: 131072,
                count: 9,
                pct: 0.4,
            }],
            queue_depth: Some(QueueDepth {
                typical: 32,
                max: 128,
                mean: 31.5,
                depths: vec![DepthShare {
                    depth: 64,
                    time_pct: 99.0,
                    issued_pct: 99.0,
                }],
                ..Default::default()
            }),
            rate: Rate {
                iops_mean: 123_456.0,
                iops_peak: 9_876_543.0,
                mb_s_peak: 99_999.9,
                iops_p99: 9_000_000.0,
                bucket_s: 1024.0,
                bursts: Bursts {
                    on_periods: 1234,
                    threshold_iops: 9_999_999.0,
                    on_s_median: 1024.0,
                    off_s_median: 2048.0,
                    on_iops_mean: 9_999_999.0,
                },
                peak_to_mean: 80.0,
                ..Default::default()
            },
            durability: Durability {
                durable_writes: 123_456_789,
                durable_latency: Some(Percentiles {
                    mean_us: 999_999.0,
                    p50_us: 999_999.0,
                    p90_us: 999_999.0,
                    p99_us: 999_999.0,
                    p999_us: 999_999.0,
                    max_us: 99_999_999.0,
                }),
                ..Default::default()
            },
            latency: vec![LatencyRow {
                op: iocap_model::request::Op::WriteZeroes,
                size_class: ">256K".into(),
                count: 123_456_789,
                ..Default::default()
            }],
            processes: vec![ProcessRow {
                comm: "postgres: checkp".into(),
                count: 123_456_789,
                bytes: 1 << 50,
                read_pct: 100.0,
            }],
            ..Default::default()
        };
        let text = render(&w);
        for line in text.lines() {
            assert!(
                line.chars().count() <= 80,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        for words in [
            "123,456,789 requests",
            "Mix",
            "Randomness",
            "Queue depth: mean 31.5, max 128",
            "Bursts",
            "write until durable",
            "Latency",
            "Working set",
            "Processes",
            "12 requests were lost",
        ] {
            assert!(text.contains(words), "no `{words}` in\n{text}");
        }
    }
}

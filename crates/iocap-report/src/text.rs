//! The terminal summary: what was run, then throughput, latency percentiles, per-target figures,
//! CPU cost and every warning, in tables with units on every number.

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, CellAlignment, Table};
use iocap_model::{format_bytes, OpStats, TestResult};

use crate::{fmt_count, fmt_lat_us};

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(header.iter().map(Cell::new));
    for i in 1..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// One-line description of the workload.
pub fn describe(r: &TestResult) -> String {
    let s = &r.spec;
    let mix = if s.rw.is_mixed() {
        format!(" ({}% writes)", s.write_pct)
    } else {
        String::new()
    };
    let threads: u32 = r.targets.iter().map(|t| t.threads).sum::<u32>().max(1);
    let mut parts = vec![
        format!("{}{mix} {}", s.rw.name(), format_bytes(s.bs_bytes)),
        format!(
            "qd {} x {} thread{}",
            s.qd,
            threads,
            if threads == 1 { "" } else { "s" }
        ),
        if r.direct {
            "O_DIRECT".into()
        } else {
            "buffered".into()
        },
        r.engine.clone(),
    ];
    if s.write_through {
        parts.push("O_DSYNC".into());
    }
    if s.fsync_every > 0 {
        parts.push(format!("fsync every {} writes", s.fsync_every));
    }
    if let Some(rate) = s.effective_rate_iops() {
        parts.push(format!("throttled to {} IOPS", fmt_count(rate)));
    }
    parts.join(", ")
}

fn throughput_row(t: &mut Table, name: &str, o: &OpStats) {
    t.add_row(vec![
        name.to_string(),
        fmt_count(o.ios as f64),
        fmt_count(o.iops),
        format!("{:.1}", o.mib_s),
        format!("{:.1}", o.mb_s),
    ]);
}

fn latency_row(t: &mut Table, name: &str, o: &OpStats) {
    let Some(l) = &o.lat_us else { return };
    let mut row = vec![name.to_string()];
    for v in [
        l.min, l.p50, l.p90, l.p95, l.p99, l.p99_9, l.p99_99, l.p99_999, l.max, l.mean, l.stddev,
    ] {
        row.push(fmt_lat_us(v));
    }
    t.add_row(row);
}

/// The whole summary of one test.
pub fn render_test(r: &TestResult) -> String {
    let mut out = String::new();
    let what = describe(r);
    if what.starts_with(&r.name) {
        out.push_str(&format!("{what}\n"));
    } else {
        out.push_str(&format!("{}: {what}\n", r.name));
    }
    out.push_str(&format!(
        "measured {:.1} s{}\n\n",
        r.duration_s,
        if r.spec.warmup_s > 0.0 {
            format!(" after {:.1} s of warmup", r.spec.warmup_s)
        } else {
            String::new()
        }
    ));
    let ops: Vec<(&str, &OpStats)> = {
        let mut v = Vec::new();
        if r.read.ios > 0 && r.write.ios > 0 {
            v.push(("read", &r.read));
            v.push(("write", &r.write));
        }
        v.push(("total", &r.total));
        if r.sync.ios > 0 {
            v.push(("fsync", &r.sync));
        }
        v
    };
    let mut t = table(&["", "I/Os", "IOPS", "MiB/s", "MB/s"]);
    for (n, o) in &ops {
        throughput_row(&mut t, n, o);
    }
    out.push_str(&t.to_string());
    out.push_str("\n\nlatency\n");
    let mut t = table(&[
        "", "min", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "p99.999", "max", "mean",
        "stddev",
    ]);
    for (n, o) in &ops {
        latency_row(&mut t, n, o);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    if r.targets.len() > 1 {
        out.push_str("\nper target\n");
        let mut t = table(&["target", "IOPS", "MB/s", "p50", "p99", "max"]);
        for tr in &r.targets {
            let l = tr.total.lat_us.clone().unwrap_or_default();
            t.add_row(vec![
                tr.path.clone(),
                fmt_count(tr.total.iops),
                format!("{:.1}", tr.total.mb_s),
                fmt_lat_us(l.p50),
                fmt_lat_us(l.p99),
                fmt_lat_us(l.max),
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    out.push_str(&format!(
        "\nCPU: {:.2} s user + {:.2} s system = {:.1} µs per I/O; mean queue depth {:.1}\n",
        r.cpu.user_s, r.cpu.sys_s, r.cpu.us_per_io, r.qd_mean
    ));
    if let Some(e) = &r.error {
        out.push_str(&format!("\nI/O ERROR: {e}\n"));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

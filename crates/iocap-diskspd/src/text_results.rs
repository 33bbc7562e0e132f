//! The `Results for timespan N` part of DiskSpd's text: test time and thread count, the CPU
//! table, the Total/Read/Write I/O tables and the latency percentiles, in DiskSpd 2.2's
//! columns and number formats (see `text` for the rest of the report).

use crate::cpu;
use crate::figures::{self, Counts, Section, Thread};
use crate::DiskspdRun;
use iocap_model::{HostInfo, OpStats, TestResult};
use std::fmt::Write;

/// DiskSpd's percentile rows between `min` and `max`.
const PERCENTILES: [(f64, &str); 13] = [
    (0.25, "25th"),
    (0.5, "50th"),
    (0.75, "75th"),
    (0.9, "90th"),
    (0.95, "95th"),
    (0.99, "99th"),
    (0.999, "3-nines"),
    (0.9999, "4-nines"),
    (0.99999, "5-nines"),
    (0.999999, "6-nines"),
    (0.9999999, "7-nines"),
    (0.99999999, "8-nines"),
    (0.999999999, "9-nines"),
];

/// `Results for timespan N`: time, threads, CPU, the three I/O tables, the latency tables.
pub(crate) fn results(s: &mut String, run: &DiskspdRun, test: &TestResult, host: &HostInfo) {
    if test.duration_s <= 0.0 {
        s.push_str(
            "The test was interrupted before the measurements began. No results are displayed.\n",
        );
        return;
    }
    let pool = run.profile.total_threads.is_some();
    let _ = write!(
        s,
        "\nactual test time:\t{:.2}s\nthread count:\t\t{}\n",
        test.duration_s,
        figures::thread_count(test, pool)
    );
    if let (Some(_), Some(o)) = (run.profile.total_threads, run.profile.pool_requests) {
        let _ = writeln!(s, "request count:\t\t{o}");
    }
    match cpu::table(test, host) {
        Some(t) => cpu_table(s, &t),
        None => {
            // a result without every CPU's time: iocap's own process, as before
            let c = figures::cpu(test, host.cpus);
            let _ = write!(
                s,
                "\nCPU |  Usage |  User  | Kernel |  Idle\n{}\navg.| {:6.2}%| {:6.2}%| {:6.2}%| {:6.2}%\n",
                "-".repeat(40),
                c.usage,
                c.user,
                c.kernel,
                c.idle
            );
        }
    }
    let threads = figures::threads(test, pool);
    for (title, section) in [
        ("Total IO", Section::Total),
        ("Read IO", Section::Read),
        ("Write IO", Section::Write),
    ] {
        let _ = writeln!(s, "\n{title}");
        table(s, run, test, &threads, section);
    }
    if run.latency {
        let targets = figures::targets(test);
        if targets.len() > 1 {
            for t in &targets {
                let _ = writeln!(s, "\nLatency distribution: {}", t.path);
                let (r, w) = t.split.unzip();
                chart(s, r, w, Some(t.total));
            }
        }
        s.push_str("\nTotal latency distribution:\n");
        chart(s, Some(&test.read), Some(&test.write), Some(&test.total));
    }
}

/// DiskSpd's per-CPU table: a place column for each of socket, node, group and core that the
/// host has more than one of (core: when a core has several CPUs), then the CPU's number in
/// its group and its shares; the `avg.` row under them.
fn cpu_table(s: &mut String, t: &cpu::Table) {
    let columns = [
        (t.multi_socket, "Socket | ", "---------", "         "),
        (t.multi_node, "Node | ", "-------", "       "),
        (t.multi_group, "Group | ", "--------", "        "),
        (t.smt, "Core | ", "-------", "       "),
    ];
    let shown: Vec<_> = columns.iter().filter(|c| c.0).collect();
    let head: String = shown.iter().map(|c| c.1).collect();
    let border: String = shown.iter().map(|c| c.2).collect::<String>() + &"-".repeat(40);
    let _ = write!(
        s,
        "\n{head}CPU |  Usage |  User  | Kernel |  Idle\n{border}\n"
    );
    for r in &t.rows {
        let p = &r.place;
        let cells = [
            (t.multi_socket, p.socket, 7),
            (t.multi_node, p.node, 5),
            (t.multi_group, Some(p.group), 6),
            (t.smt, p.core, 5),
        ];
        for (_, v, width) in cells.iter().filter(|c| c.0) {
            let v = v.map_or_else(|| "?".to_string(), |v| v.to_string());
            let _ = write!(s, "{v:>width$}| ");
        }
        let c = &r.share;
        let f = cpu::finite;
        let _ = writeln!(
            s,
            "{:>4}| {:6.2}%| {:6.2}%| {:6.2}%| {:6.2}%",
            p.number,
            f(c.usage_pct),
            f(c.user_pct),
            f(c.kernel_pct),
            f(c.idle_pct)
        );
    }
    let pad: String = shown.iter().map(|c| c.3).collect();
    let [usage, user, kernel, idle] = t.avg;
    let _ = writeln!(
        s,
        "{border}\n{pad}avg.| {usage:6.2}%| {user:6.2}%| {kernel:6.2}%| {idle:6.2}%"
    );
}

/// One of the Total/Read/Write IO tables: a row per thread per target, in thread order.
fn table(
    s: &mut String,
    run: &DiskspdRun,
    test: &TestResult,
    threads: &[Thread],
    section: Section,
) {
    let (lat, std) = (run.latency, run.per_interval_std);
    let _ = writeln!(
        s,
        "thread |       bytes     |     I/Os     |    MiB/s   |  I/O per s {}{}{}|  file",
        if lat { "|  AvgLat  " } else { "" },
        if std { "| IopsStdDev " } else { "" },
        if lat { "| LatStdDev " } else { "" },
    );
    let border = format!(
        "{}{}{}{}------------\n",
        "-".repeat(66),
        if lat { "-".repeat(11) } else { String::new() },
        if std { "-".repeat(13) } else { String::new() },
        if lat { "-".repeat(12) } else { String::new() },
    );
    s.push_str(&border);
    let single = threads.len() == 1 && threads[0].targets.len() == 1;
    for thread in threads {
        for row in &thread.targets {
            let iops_std = match &row.series {
                Some(series) => Some(series.iops_std_dev(section)),
                None if single => figures::iops_std_dev(test, section),
                None => None,
            };
            let _ = write!(s, "{:>6} | ", thread.label);
            cells(s, run, row.stats(section), test.duration_s, iops_std);
            let size = figures::display_size(row.size_bytes);
            let _ = writeln!(s, " | {} ({size})", row.path);
        }
    }
    s.push_str(&border);
    s.push_str("total:   ");
    let total = Counts::of(figures::test_stats(test, section));
    cells(
        s,
        run,
        Some(total),
        test.duration_s,
        figures::iops_std_dev(test, section),
    );
    s.push('\n');
}

/// Bytes, I/Os, MiB/s, I/O per s and the optional latency and IOPS columns of one row.
fn cells(
    s: &mut String,
    run: &DiskspdRun,
    stats: Option<Counts>,
    secs: f64,
    iops_std: Option<f64>,
) {
    let Some(st) = stats else {
        let _ = write!(
            s,
            "{:>15} | {:>12} | {:>10} | {:>10}",
            "N/A", "N/A", "N/A", "N/A"
        );
        let columns = [
            (run.latency, " |      N/A"),
            (run.per_interval_std, " |        N/A"),
            (run.latency, " |       N/A"),
        ];
        for (_, cell) in columns.iter().filter(|(on, _)| *on) {
            s.push_str(cell);
        }
        return;
    };
    let _ = write!(
        s,
        "{:>15} | {:>12} | {:>10.2} | {:>10.2}",
        st.bytes,
        st.ios,
        figures::per_second(st.bytes as f64 / 1_048_576.0, secs),
        figures::per_second(st.ios as f64, secs)
    );
    if run.latency {
        let _ = write!(s, " | {:>8.3}", st.lat_ms.map_or(0.0, |(mean, _)| mean));
    }
    if run.per_interval_std {
        let _ = match iops_std {
            Some(v) => write!(s, " | {v:>10.2}"),
            None => write!(s, " | {:>10}", "N/A"),
        };
    }
    if run.latency {
        let _ = match st.lat_ms {
            Some((_, sd)) => write!(s, " |  {sd:>8.3}"),
            None => write!(s, " |       N/A"),
        };
    }
}

/// The `%-ile | Read (ms) | Write (ms) | Total (ms)` table.
fn chart(s: &mut String, read: Option<&OpStats>, write: Option<&OpStats>, total: Option<&OpStats>) {
    s.push_str("  %-ile |  Read (ms) | Write (ms) | Total (ms)\n");
    s.push_str(&"-".repeat(46));
    s.push('\n');
    let mut qs = vec![0.0];
    qs.extend(PERCENTILES.iter().map(|(q, _)| q));
    qs.push(1.0);
    let column = |stats: Option<&OpStats>| match stats {
        Some(st) => figures::quantiles_ms(st, &qs),
        None => vec![None; qs.len()],
    };
    let (r, w, t) = (column(read), column(write), column(total));
    let mut names = vec!["min"];
    names.extend(PERCENTILES.iter().map(|(_, n)| n));
    names.push("max");
    let cell =
        |v: Option<f64>| v.map_or_else(|| format!("{:>10}", "N/A"), |ms| format!("{ms:>10.3}"));
    for (i, name) in names.iter().enumerate() {
        let _ = writeln!(
            s,
            "{name:>7} | {} | {} | {}",
            cell(r[i]),
            cell(w[i]),
            cell(t[i])
        );
    }
}

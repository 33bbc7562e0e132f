//! DiskSpd's text output (`-Rtext`, the default), in DiskSpd 2.2's layout: the same section
//! titles, labels, column order, widths and number formats, because people compare it by eye
//! with their Windows results and scripts cut figures out of it by label (`total:`, `avg.|`,
//! `99th |`). A row of the I/O tables is one thread on one target, numbered as DiskSpd numbers
//! its threads, and the CPU table has every CPU, system-wide (see `figures` and `cpu`). What
//! iocap cannot know the DiskSpd way is left out or shown as `N/A` rather than invented: in a
//! result saved before the engine kept them, the CPU table has the `avg.` row only (iocap's
//! own process) and a row stands for all threads of one target. iocap's notes, its own
//! process's CPU among them, follow the last table, on lines of their own.

use crate::figures::{self, Counts, Section, Thread};
use crate::{cpu, series};
use crate::{Access, DiskspdRun, Throttle, WriteBuffers};
use iocap_model::{HostInfo, OpStats, RunResult, TestResult};
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

/// The whole text report: the parameters, the host, then one "timespan" per test of `result`.
pub fn render_text(result: &RunResult, run: &DiskspdRun) -> String {
    let mut s = format!(
        "\nCommand Line: {}\n\nInput parameters:\n\n",
        run.command_line
    );
    for (i, test) in result.tests.iter().enumerate() {
        let _ = writeln!(s, "\ttimespan: {:>3}\n\t-------------", i + 1);
        timespan(&mut s, run, test);
        s.push('\n');
    }
    system(&mut s, result);
    for (i, test) in result.tests.iter().enumerate() {
        let _ = writeln!(s, "\nResults for timespan {}:\n{}", i + 1, "*".repeat(79));
        results(&mut s, run, test, &result.host);
    }
    notes(&mut s, run, result);
    s
}

/// `System information`: the host, its topology and power scheme when the result has them.
fn system(s: &mut String, result: &RunResult) {
    let h = &result.host;
    let _ = write!(
        s,
        "System information:\n\n\tcomputer name: {}\n\tstart time: {}\n\n\tcpu count:\t\t{}\n",
        h.hostname,
        figures::diskspd_time(&result.started_at),
        h.cpus
    );
    if let Some(t) = &h.topology {
        let l = cpu::Layout::of(t);
        let counts = [
            ("core count:\t", l.cores.len()),
            ("group count:\t", l.groups.len()),
            ("node count:\t", l.nodes.len()),
            ("socket count:\t", l.sockets.len()),
        ];
        for (label, n) in counts {
            let _ = writeln!(s, "\t{label}\t{n}");
        }
        s.push_str("\theterogeneous cores:\tn\n");
    }
    if h.topology.is_some() || h.power_policy.is_some() {
        let (name, guid) = power_scheme(h);
        let guid = guid.map(|g| format!(" ({g})")).unwrap_or_default();
        let _ = writeln!(s, "\n\tactive power scheme:\t{name}{guid}");
    }
}

/// The power scheme's name and GUID as DiskSpd states them: `<unknown>` for a name it cannot
/// read (DiskSpd's own word for it); no GUID where the host has none (Linux).
pub(crate) fn power_scheme(h: &HostInfo) -> (&str, Option<&str>) {
    match &h.power_policy {
        Some(p) if !p.name.trim().is_empty() => (&p.name, p.guid.as_deref()),
        Some(p) => (UNKNOWN, p.guid.as_deref()),
        None => (UNKNOWN, None),
    }
}

/// What DiskSpd writes for a power scheme it cannot read.
pub(crate) const UNKNOWN: &str = "<unknown>";

/// The `Input parameters` of one timespan.
fn timespan(s: &mut String, run: &DiskspdRun, test: &TestResult) {
    let p = &run.profile;
    let _ = writeln!(s, "\tduration: {}s", p.duration_s);
    let _ = writeln!(s, "\twarm up time: {}s", p.warmup_s);
    let _ = writeln!(s, "\tcool down time: {}s", p.cooldown_s);
    if p.no_affinity {
        s.push_str("\taffinity disabled\n");
    }
    if run.latency {
        s.push_str("\tmeasuring latency\n");
    }
    if run.per_interval_std {
        let _ = writeln!(
            s,
            "\tgathering IOPS at intervals of {}ms",
            series::bucket_ms(test)
        );
    }
    let _ = writeln!(s, "\trandom seed: {}", p.seed);
    if let Some(n) = p.total_threads {
        let _ = writeln!(s, "\tthread pool with {n} threads");
        let o = p.pool_requests.unwrap_or(0);
        let _ = writeln!(s, "\tnumber of outstanding I/O operations per thread: {o}");
    }
    if !p.affinity.is_empty() {
        let cpus: Vec<String> = p.affinity.iter().map(|c| format!("0/{c}")).collect();
        let _ = writeln!(
            s,
            "\tadvanced affinity round robin (group/core): {}",
            cpus.join(", ")
        );
    }
    if p.write_buffers == WriteBuffers::RandomPerIo {
        s.push_str("\tgenerating random data for each write IO\n");
    }
    for path in &p.targets {
        target(s, run, path);
    }
}

/// The `path:` block of one target.
fn target(s: &mut String, run: &DiskspdRun, path: &str) {
    let p = &run.profile;
    let _ = write!(
        s,
        "\tpath: '{path}'\n\t\tthink time: 0ms\n\t\tburst size: 0\n"
    );
    s.push_str(if p.disable_os_cache {
        "\t\tsoftware cache disabled\n"
    } else {
        "\t\tusing software cache\n"
    });
    s.push_str(match (p.write_through, p.disable_os_cache) {
        (true, false) => "\t\thardware and software write caches disabled, writethrough on\n",
        (true, true) => "\t\thardware write cache disabled, writethrough on\n",
        (false, _) => "\t\tusing hardware write cache, writethrough off\n",
    });
    match p.write_buffers {
        WriteBuffers::Zero => s.push_str("\t\tzeroing write buffers\n"),
        WriteBuffers::Random { bytes } => {
            let size = figures::display_size(bytes);
            let _ = write!(
                s,
                "\t\twrite buffer size: {size}\n\t\twrite buffer source: random fill\n"
            );
        }
        _ => {}
    }
    let _ = match p.write_pct {
        0 => writeln!(s, "\t\tperforming read test"),
        100 => writeln!(s, "\t\tperforming write test"),
        w => writeln!(
            s,
            "\t\tperforming mix test (read/write ratio: {}/{w})",
            100 - w
        ),
    };
    let _ = writeln!(
        s,
        "\t\tblock size: {}",
        figures::display_size(p.block_bytes)
    );
    let _ = match p.access {
        Access::Random { align_bytes } => {
            let a = figures::display_size(align_bytes);
            writeln!(s, "\t\tusing random I/O (alignment: {a})")
        }
        Access::Sequential {
            stride_bytes,
            interlocked,
        } => {
            let how = if interlocked { " interlocked" } else { "" };
            let st = figures::display_size(stride_bytes);
            writeln!(s, "\t\tusing{how} sequential I/O (stride: {st})")
        }
    };
    target_tail(s, run);
}

/// The second half of a target's block: queueing, sizes, threads, priority, throttle.
fn target_tail(s: &mut String, run: &DiskspdRun) {
    let p = &run.profile;
    if p.total_threads.is_none() || p.pool_requests.is_none() {
        let _ = writeln!(
            s,
            "\t\tnumber of outstanding I/O operations per thread: {}",
            p.requests
        );
    } else {
        s.push_str("\t\trelative IO weight in thread pool: 1\n");
    }
    let sizes = [
        ("max file size", p.max_size_bytes),
        ("thread stride size", p.thread_stride_bytes),
    ];
    for (label, bytes) in sizes.into_iter().filter(|(_, b)| *b > 0) {
        let _ = writeln!(s, "\t\t{label}: {}", figures::display_size(bytes));
    }
    for (on, hint) in [
        (p.hints.sequential, "FILE_FLAG_SEQUENTIAL_SCAN"),
        (p.hints.random, "FILE_FLAG_RANDOM_ACCESS"),
        (p.hints.temporary, "FILE_ATTRIBUTE_TEMPORARY"),
    ] {
        if on {
            let _ = writeln!(s, "\t\tusing {hint} hint");
        }
    }
    if let Some(t) = p.threads_per_target {
        let _ = writeln!(s, "\t\tthreads per file: {t}");
        if p.requests > 1 {
            s.push_str(if p.completion_routines {
                "\t\tusing completion routines (ReadFileEx/WriteFileEx)\n"
            } else {
                "\t\tusing I/O Completion Ports\n"
            });
        }
    }
    s.push_str("\t\tIO priority: normal\n");
    let _ = match p.throttle {
        Some(Throttle::Iops(n)) => writeln!(s, "\t\tthroughput rate-limited to {n} IOPS"),
        Some(Throttle::BytesPerMs(b)) => writeln!(s, "\t\tthroughput rate-limited to {b} B/ms"),
        None => Ok(()),
    };
}

/// `Results for timespan N`: time, threads, CPU, the three I/O tables, the latency tables.
fn results(s: &mut String, run: &DiskspdRun, test: &TestResult, host: &HostInfo) {
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

/// iocap's notes and the run's warnings, interruptions and faults, after DiskSpd's tables.
fn notes(s: &mut String, run: &DiskspdRun, result: &RunResult) {
    let mut lines: Vec<String> = run.notes.clone();
    for test in &result.tests {
        if !test.cpu.system.is_empty() && test.duration_s > 0.0 {
            let c = figures::cpu(test, result.host.cpus);
            lines.push(format!(
                "iocap's own process used {:.2}% of the CPUs' time (user {:.2}%, kernel \
                 {:.2}%); the CPU table is every process on the host",
                c.usage, c.user, c.kernel
            ));
        }
        lines.extend(test.warnings.iter().cloned());
        if test.interrupted {
            lines.push(format!(
                "interrupted; the figures cover the {:.1} s measured",
                test.duration_s
            ));
        }
        if let Some(fault) = &test.error {
            lines.push(format!(
                "stopped by an I/O error after {:.1} s: {fault}",
                test.duration_s
            ));
        }
    }
    if !lines.is_empty() {
        s.push('\n');
        for line in lines {
            // iocap's own lines: within 80 columns, whatever DiskSpd's tables take
            s.push_str(&iocap_model::text::wrap_indented("note: ", &line, 80, 6));
        }
    }
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;

//! DiskSpd's text output (`-Rtext`, the default), in DiskSpd 2.2's layout: the same section
//! titles, labels, column order, widths and number formats, because people compare it by eye
//! with their Windows results and scripts cut figures out of it by label (`total:`, `avg.|`,
//! `99th |`). A row of the I/O tables is one thread on one target, numbered as DiskSpd numbers
//! its threads, and the CPU table has every CPU, system-wide (see `figures` and `cpu`). What
//! iocap cannot know the DiskSpd way is left out or shown as `N/A` rather than invented: in a
//! result saved before the engine kept them, the CPU table has the `avg.` row only (iocap's
//! own process) and a row stands for all threads of one target. iocap's notes, its own
//! process's CPU among them, follow the last table, on lines of their own. This file writes
//! the parameters, the host and the notes; `text_results` each timespan's results.

use crate::{cpu, figures, series, text_results};
use crate::{Access, DiskspdRun, Throttle, WriteBuffers};
use iocap_model::{RunResult, TestResult};
use std::fmt::Write;

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
        text_results::results(&mut s, run, test, &result.host);
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
        let (name, guid) = cpu::power_scheme(h);
        let guid = guid.map(|g| format!(" ({g})")).unwrap_or_default();
        let _ = writeln!(s, "\n\tactive power scheme:\t{name}{guid}");
    }
}

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
        "\tpath: '{path}'\n\t\tthink time: {}ms\n\t\tburst size: {}\n",
        p.think_ms.unwrap_or(0),
        p.burst_ios.unwrap_or(0)
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
    if p.parallel_async {
        s.push_str("\t\tusing parallel async I/O\n");
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
            match p.random_pct.filter(|&r| r != 100) {
                Some(pct) => writeln!(
                    s,
                    "\t\tusing mixed random/sequential I/O ({pct}% random) (alignment/stride: {a})"
                ),
                None => writeln!(s, "\t\tusing random I/O (alignment: {a})"),
            }
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
        ("base file offset", p.base_bytes),
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

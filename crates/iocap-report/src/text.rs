//! The terminal summary: what was run, then throughput, latency percentiles, per-target figures,
//! CPU cost and every warning, in tables with units on every number.

use iocap_model::{RunKind, RunResult, System, TestResult};

use crate::fmt::{printable, printable_lines};
use crate::rows::{
    cpu_line, latency_cells, latency_header, ops, throughput_cells, THROUGHPUT_HEADER,
};
pub use crate::sure::render_repeats;
use crate::{fmt, plural, table};

/// One-line description of the workload.
pub fn describe(r: &TestResult) -> String {
    let s = &r.spec;
    let mix = if s.rw.is_mixed() {
        format!(" ({}% writes)", s.write_pct)
    } else {
        String::new()
    };
    let threads: u32 = r.targets.iter().map(|t| t.threads).sum::<u32>().max(1);
    // a run on Windows (its engines are iocp and sync) says it in Windows' words
    let windows = r.engine.system() == System::Windows;
    let mut parts = vec![
        format!("{}{mix} {}", s.rw.name(), crate::size_label(s)),
        format!("qd {} x {}", s.qd, plural(threads as usize, "thread")),
        if r.direct && windows {
            "unbuffered".into()
        } else if r.direct {
            "O_DIRECT".into()
        } else {
            "buffered".into()
        },
        r.engine.to_string(),
    ];
    if let Some(b) = s.burst {
        parts.push(format!(
            "bursts of {:.0} s every {:.0} s",
            b.on_s,
            b.on_s + b.off_s
        ));
    }
    if s.write_through && windows {
        parts.push("write-through".into());
    } else if s.write_through {
        parts.push("O_DSYNC".into());
    }
    if s.fsync_every > 0 {
        parts.push(format!("fsync every {} writes", s.fsync_every));
    }
    if s.write_pct > 0 && s.compressible_pct > 0 {
        parts.push(format!("{} % compressible", s.compressible_pct));
    }
    if s.write_pct > 0 && s.dedupe_pct > 0 {
        parts.push(format!("{} % duplicate blocks", s.dedupe_pct));
    }
    if let Some(rate) = s.effective_rate_iops() {
        parts.push(format!("throttled to {} IOPS", fmt::count(rate)));
        if s.rate_process == iocap_model::RateProcess::Poisson {
            parts.push("Poisson arrivals".into());
        }
    }
    parts.join(", ")
}

/// The whole summary of one test.
/// The latency percentiles of each operation in two tables that fit 80 columns: the body of
/// the distribution with its mean and spread, then the tail.
fn latency_text(ops: &[(&str, &iocap_model::OpStats)]) -> String {
    let header = latency_header("");
    let (body, tail) = ([0, 1, 2, 3, 4, 5, 10, 11], [0, 6, 7, 8, 9]);
    let mut out = String::new();
    for (title, cols) in [("latency", &body[..]), ("latency tail", &tail[..])] {
        let mut t = table(&cols.iter().map(|&i| header[i]).collect::<Vec<_>>());
        for (n, o) in ops {
            if let Some(l) = &o.lat_us {
                let cells = latency_cells(n, l);
                t.add_row(cols.iter().map(|&i| cells[i].clone()).collect::<Vec<_>>());
            }
        }
        out.push_str(&format!("\n{title}\n{t}\n"));
    }
    out
}

pub fn render_test(r: &TestResult) -> String {
    let mut out = String::new();
    let what = describe(r);
    // a long name (a --bs-split mix) with its workload: wrapped at spaces
    if what.starts_with(&r.name) {
        out.push_str(&crate::fit_lines(&printable(&what)));
    } else {
        out.push_str(&crate::fit_lines(&format!(
            "{}: {what}",
            printable(&r.name)
        )));
    }
    out.push_str(&format!(
        "measured {}{}\n\n",
        fmt::secs(r.duration_s),
        if r.spec.warmup_s > 0.0 {
            format!(" after {} of warmup", fmt::secs(r.spec.warmup_s))
        } else {
            String::new()
        }
    ));
    let ops = ops(r);
    let mut t = table(&THROUGHPUT_HEADER);
    for (n, o) in &ops {
        t.add_row(throughput_cells(n, o));
    }
    out.push_str(&t.to_string());
    out.push('\n');
    out.push_str(&crate::sure::render_uncertainty(r));
    out.push_str(&latency_text(&ops));
    if r.targets.len() > 1 {
        out.push_str("\nper target\n");
        let mut t = table(&["target", "IOPS", "MB/s", "p50", "p99", "max"]);
        for tr in &r.targets {
            let l = tr.total.lat_us.clone().unwrap_or_default();
            t.add_row(vec![
                printable(&tr.path).into_owned(),
                fmt::count(tr.total.iops),
                format!("{:.1}", tr.total.mb_s),
                fmt::lat_us(l.p50),
                fmt::lat_us(l.p99),
                fmt::lat_us(l.max),
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    out.push_str(&crate::ranks::render(r));
    out.push_str(&crate::oscounters::render_os(r));
    out.push_str(&format!("\n{}\n", cpu_line(r)));
    out.push_str(&crate::sure::render_submit(r));
    if let Some(e) = &r.error {
        out.push_str(&format!(
            "\nI/O ERROR: {}\n",
            printable_lines(&e.to_string())
        ));
    }
    for w in &r.warnings {
        out.push_str(&crate::assess::wrap(
            "warning: ",
            &printable_lines(w),
            crate::width(),
        ));
    }
    out
}

/// The text view of tests as they were printed when they ran: each test, and after the tests
/// that ran together, a line for them together.
pub fn tests_text(tests: &[TestResult]) -> String {
    let mut out = String::new();
    for (i, t) in tests.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&render_test(t));
        let group_ends = t.group.is_some() && tests.get(i + 1).map(|n| n.group) != Some(t.group);
        if group_ends {
            let members: Vec<&TestResult> = tests.iter().filter(|x| x.group == t.group).collect();
            out.push('\n');
            out.push_str(&crate::assess::render_group(&members));
        }
    }
    out
}

/// `iocap run`'s view: for a run cut short, the line that says so first
/// ([`crate::partial::banner`]); each test (the targets of one test are not a group), then the
/// spread across `--repeat` runs.
pub fn single_run_text(run: &RunResult) -> String {
    let mut text = crate::partial::banner(run);
    text += &run
        .tests
        .iter()
        .map(render_test)
        .collect::<Vec<_>>()
        .join("\n");
    if !run.repeats.is_empty() {
        text.push('\n');
        text.push_str(&render_repeats(&run.repeats));
    }
    text
}

/// The text view of a whole run, as the command that made it printed it: for a run cut short,
/// the line that says so first ([`crate::partial::banner`]), then [`run_body`].
pub fn run_text(run: &RunResult) -> String {
    crate::partial::banner(run) + &run_body(run)
}

/// The view of a run chosen by its [`RunKind`], without the partial banner (`iocap show` puts
/// that above its heading).
pub fn run_body(run: &RunResult) -> String {
    use crate::assess;
    let view = match run.kind() {
        RunKind::Preflight => run
            .preflight
            .as_ref()
            .map(|p| assess::render_preflight(run, p)),
        RunKind::Cachescan => run.cachescan.as_ref().map(assess::render_cachescan),
        RunKind::Saturation => run
            .saturation
            .as_ref()
            .map(|s| assess::render_saturation(run, s)),
        RunKind::Cost => run.cost.as_ref().map(crate::cost::render),
        RunKind::Fsync => run.fsync.as_ref().map(crate::fsync::render),
        RunKind::Scaleup => run.scaleup.as_ref().map(assess::render_scaleup),
        RunKind::Verify => run.verify.as_ref().map(crate::verify::render),
        RunKind::Workload => run.workload.as_ref().map(crate::workload::render),
        RunKind::Replay => run.replay.as_ref().map(crate::replay::render),
        RunKind::Suite | RunKind::Test => None,
    };
    let mut text = view.unwrap_or_else(|| tests_text(&run.tests));
    // views that show no test, and so none of its warnings, say the stored bucket's themselves
    if matches!(run.kind(), RunKind::Saturation | RunKind::Scaleup) {
        text.push_str(&stored_bucket_lines(run));
    }
    text
}

/// A `warning:` line for each test shorter than the burst of the stored bucket
/// (`run.stored_bucket`), aligned with the saturate view's lines; nothing without one.
pub fn stored_bucket_lines(run: &RunResult) -> String {
    let inside = run.stored_bucket.iter().flat_map(|b| &b.inside);
    inside
        .map(|t| crate::assess::wrap("warning:  ", &printable_lines(&t.sentence), crate::width()))
        .collect()
}

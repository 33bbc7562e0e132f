//! DiskSpd's XML output (`-Rxml`): the element names, nesting, order and number formats of
//! DiskSpd 2.2, so that scripts reading `Results/TimeSpan/Thread/Target/ReadBytes`,
//! `Results/TimeSpan/Latency/Bucket` and the like read iocap's output unchanged. Elements iocap
//! cannot fill truthfully are left out rather than invented (the per-CPU `<CPU>` entries, the
//! processor topology, the histogram bucket counts); docs/diskspd.md lists them. iocap adds no
//! element of its own: its notes are XML comments, which parsers skip.
//!
//! Written by hand: the document is small and flat, and the one thing a library would add,
//! escaping, is the few lines of [`escape`]. DiskSpd itself does not escape paths; iocap does.

use crate::figures::{self, Row, Section};
use crate::{Access, DiskspdRun, Output, Throttle, WriteBuffers};
use iocap_model::{RunResult, TestResult};
use std::fmt::{Display, Write};

/// An indenting writer: two spaces a level, as DiskSpd indents.
struct Xml {
    out: String,
    depth: usize,
}

impl Xml {
    fn indent(&mut self) {
        self.out.extend(std::iter::repeat_n(' ', 2 * self.depth));
    }
    fn open(&mut self, tag: &str) {
        self.indent();
        let _ = writeln!(self.out, "<{tag}>");
        self.depth += 1;
    }
    fn close(&mut self, tag: &str) {
        self.depth -= 1;
        self.indent();
        let _ = writeln!(self.out, "</{tag}>");
    }
    fn leaf(&mut self, tag: &str, value: impl Display) {
        self.indent();
        let _ = writeln!(self.out, "<{tag}>{}</{tag}>", escape(&value.to_string()));
    }
    fn empty(&mut self, tag: &str, attrs: &[(&str, String)]) {
        self.indent();
        let _ = write!(self.out, "<{tag}");
        for (name, value) in attrs {
            let _ = write!(self.out, " {name}=\"{}\"", escape(value));
        }
        self.out.push_str("/>\n");
    }
    /// A comment: markup is not read inside one, but `--` may not occur, so it is split.
    fn comment(&mut self, text: &str) {
        self.indent();
        let clean: String = text
            .chars()
            .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
            .collect();
        let mut body = clean;
        while body.contains("--") {
            body = body.replace("--", "- -");
        }
        let _ = writeln!(self.out, "<!-- {body} -->");
    }
}

/// Text and attribute values: the five markup characters as entities; control characters XML
/// 1.0 cannot carry at all become U+FFFD.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The whole XML report: `<System>`, `<Profile>`, then one `<TimeSpan>` per test.
pub fn render_xml(result: &RunResult, run: &DiskspdRun) -> String {
    let mut x = Xml {
        out: String::new(),
        depth: 0,
    };
    x.open("Results");
    x.comment(&format!(
        "written by iocap {} (DiskSpd-compatible output), not by DiskSpd",
        result.iocap_version
    ));
    x.open("System");
    x.leaf("ComputerName", &result.host.hostname);
    x.open("Tool");
    x.leaf("Version", &result.iocap_version);
    x.close("Tool");
    x.leaf("RunTime", figures::diskspd_time(&result.started_at));
    x.close("System");
    profile(&mut x, run, result.tests.len());
    for test in &result.tests {
        timespan(&mut x, run, test, result.host.cpus);
    }
    for note in &run.notes {
        x.comment(&format!("iocap note: {note}"));
    }
    for test in &result.tests {
        for w in &test.warnings {
            x.comment(&format!("iocap warning: {w}"));
        }
        if let Some(fault) = &test.error {
            x.comment(&format!("iocap: stopped by an I/O error: {fault}"));
        }
    }
    x.close("Results");
    x.out
}

fn flag(on: bool) -> &'static str {
    if on {
        "true"
    } else {
        "false"
    }
}

/// `<Profile>`: the parameters as DiskSpd states them, one `<TimeSpan>` per test.
fn profile(x: &mut Xml, run: &DiskspdRun, timespans: usize) {
    let p = &run.profile;
    x.open("Profile");
    x.leaf("Progress", p.progress);
    x.leaf(
        "ResultFormat",
        if run.output == Output::Xml {
            "xml"
        } else {
            "text"
        },
    );
    x.leaf("Verbose", flag(p.verbose));
    x.open("TimeSpans");
    for _ in 0..timespans.max(1) {
        x.open("TimeSpan");
        x.leaf("CompletionRoutines", flag(p.completion_routines));
        x.leaf("MeasureLatency", flag(run.latency));
        x.leaf("CalculateIopsStdDev", flag(run.per_interval_std));
        x.leaf("DisableAffinity", flag(p.no_affinity));
        x.leaf("Duration", p.duration_s);
        x.leaf("Warmup", p.warmup_s);
        x.leaf("Cooldown", p.cooldown_s);
        x.leaf("ThreadCount", p.total_threads.unwrap_or(0));
        x.leaf("RequestCount", p.pool_requests.unwrap_or(0));
        // the buckets' real width (iocap samples once a second), not what -D asked: a script
        // divides each bucket's count by it
        x.leaf("IoBucketDuration", crate::SAMPLED_INTERVAL_MS);
        x.leaf("RandSeed", p.seed);
        if !p.affinity.is_empty() {
            x.open("Affinity");
            for cpu in &p.affinity {
                let attrs = [("Group", "0".to_string()), ("Processor", cpu.to_string())];
                x.empty("AffinityGroupAssignment", &attrs);
            }
            x.close("Affinity");
        }
        x.open("Targets");
        for path in &p.targets {
            profile_target(x, run, path);
        }
        x.close("Targets");
        x.close("TimeSpan");
    }
    x.close("TimeSpans");
    x.close("Profile");
}

/// One `<Target>` of the profile.
fn profile_target(x: &mut Xml, run: &DiskspdRun, path: &str) {
    let p = &run.profile;
    x.open("Target");
    x.leaf("Path", path);
    x.leaf("BlockSize", p.block_bytes);
    x.leaf("BaseFileOffset", 0);
    x.leaf("SequentialScan", flag(p.hints.sequential));
    x.leaf("RandomAccess", flag(p.hints.random));
    x.leaf("TemporaryFile", flag(p.hints.temporary));
    x.leaf("UseLargePages", flag(p.large_pages));
    if p.disable_os_cache {
        x.leaf("DisableOSCache", "true");
    }
    if p.write_through {
        x.leaf("WriteThrough", "true");
    }
    x.open("WriteBufferContent");
    match p.write_buffers {
        WriteBuffers::Zero => x.leaf("Pattern", "zero"),
        WriteBuffers::Pattern | WriteBuffers::RandomPerIo => x.leaf("Pattern", "sequential"),
        WriteBuffers::Random { bytes } => {
            x.leaf("Pattern", "random");
            x.open("RandomDataSource");
            x.leaf("SizeInBytes", bytes);
            x.close("RandomDataSource");
        }
    }
    x.close("WriteBufferContent");
    x.leaf("ParallelAsyncIO", "false");
    if let Some(bytes) = run.create_bytes {
        x.leaf("FileSize", bytes);
    }
    match p.access {
        Access::Random { align_bytes } => x.leaf("Random", align_bytes),
        Access::Sequential {
            stride_bytes,
            interlocked,
        } => {
            x.leaf("StrideSize", stride_bytes);
            x.leaf("InterlockedSequential", flag(interlocked));
        }
    }
    x.leaf("ThreadStride", p.thread_stride_bytes);
    x.leaf("MaxFileSize", p.max_size_bytes);
    x.leaf("RequestCount", p.requests);
    x.leaf("WriteRatio", p.write_pct);
    match p.throttle {
        Some(Throttle::Iops(n)) => {
            x.indent();
            let _ = writeln!(x.out, "<Throughput unit=\"IOPS\">{n}</Throughput>");
        }
        Some(Throttle::BytesPerMs(b)) => x.leaf("Throughput", b),
        None => x.leaf("Throughput", 0),
    }
    x.leaf("ThreadsPerFile", p.threads_per_target.unwrap_or(1));
    x.leaf("IOPriority", 3);
    x.leaf("Weight", 1);
    x.close("Target");
}

/// One measured `<TimeSpan>`.
fn timespan(x: &mut Xml, run: &DiskspdRun, test: &TestResult, cpus: u32) {
    x.open("TimeSpan");
    if test.duration_s <= 0.0 {
        x.leaf(
            "Error",
            "The test was interrupted before the measurements began. No results are displayed.",
        );
        x.close("TimeSpan");
        return;
    }
    x.leaf("TestTimeSeconds", format!("{:.2}", test.duration_s));
    x.leaf("ThreadCount", figures::thread_count(test));
    x.leaf("RequestCount", run.profile.pool_requests.unwrap_or(0));
    x.leaf("ProcCount", cpus);
    let c = figures::cpu(test, cpus);
    x.open("CpuUtilization");
    x.open("Average");
    x.leaf("UsagePercent", format!("{:.2}", c.usage));
    x.leaf("UserPercent", format!("{:.2}", c.user));
    x.leaf("KernelPercent", format!("{:.2}", c.kernel));
    x.leaf("IdlePercent", format!("{:.2}", c.idle));
    x.close("Average");
    x.close("CpuUtilization");
    if run.latency {
        latency(x, test);
    }
    if run.per_interval_std {
        iops(x, test);
    }
    let rows = figures::rows(test);
    for row in &rows {
        x.open("Thread");
        x.leaf("Id", row.first_thread);
        thread_target(x, run, test, row, rows.len() == 1);
        x.close("Thread");
    }
    x.close("TimeSpan");
}

/// The `<Target>` of a `<Thread>`: counts, then latency and IOPS as asked.
fn thread_target(x: &mut Xml, run: &DiskspdRun, test: &TestResult, row: &Row, only: bool) {
    x.open("Target");
    x.leaf("Path", &row.path);
    x.leaf("BytesCount", row.total.bytes);
    x.leaf("FileSize", row.size_bytes);
    x.leaf("IOCount", row.total.ios);
    if let Some((r, w)) = row.split {
        x.leaf("ReadBytes", r.bytes);
        x.leaf("ReadCount", r.ios);
        x.leaf("WriteBytes", w.bytes);
        x.leaf("WriteCount", w.ios);
    }
    if run.latency {
        let (r, w) = row.split.unzip();
        for (stats, avg, std) in [
            (r, "AverageReadLatencyMilliseconds", "ReadLatencyStdev"),
            (w, "AverageWriteLatencyMilliseconds", "WriteLatencyStdev"),
            (
                Some(row.total),
                "AverageLatencyMilliseconds",
                "LatencyStdev",
            ),
        ] {
            if let Some((mean, sd)) = stats.and_then(figures::latency_ms) {
                x.leaf(avg, format!("{mean:.3}"));
                x.leaf(std, format!("{sd:.3}"));
            }
        }
    }
    if run.per_interval_std && only {
        iops(x, test);
    }
    x.close("Target");
}

/// `<Latency>`: averages, then a `<Bucket>` for min, 1 to 99 %, 99.9 % to 99.9999999 %, max.
fn latency(x: &mut Xml, test: &TestResult) {
    x.open("Latency");
    for (stats, avg, std) in [
        (&test.read, "AverageReadMilliseconds", "ReadLatencyStdev"),
        (&test.write, "AverageWriteMilliseconds", "WriteLatencyStdev"),
        (&test.total, "AverageTotalMilliseconds", "LatencyStdev"),
    ] {
        if let Some((mean, sd)) = figures::latency_ms(stats) {
            x.leaf(avg, format!("{mean:.3}"));
            x.leaf(std, format!("{sd:.3}"));
        }
    }
    let mut points: Vec<(f64, String)> = vec![(0.0, "0".into())];
    points.extend((1..=99).map(|p| (f64::from(p) / 100.0, p.to_string())));
    for decimals in 1..=7 {
        let label = format!("99.{}", "9".repeat(decimals));
        let q: f64 = label.parse::<f64>().unwrap_or(99.0) / 100.0;
        points.push((q, label));
    }
    points.push((1.0, "100".into()));
    let qs: Vec<f64> = points.iter().map(|(q, _)| *q).collect();
    let columns = [
        ("ReadMilliseconds", figures::quantiles_ms(&test.read, &qs)),
        ("WriteMilliseconds", figures::quantiles_ms(&test.write, &qs)),
        ("TotalMilliseconds", figures::quantiles_ms(&test.total, &qs)),
    ];
    for (i, (_, label)) in points.iter().enumerate() {
        x.open("Bucket");
        x.leaf("Percentile", label);
        for (tag, values) in &columns {
            if let Some(ms) = values[i] {
                x.leaf(tag, format!("{ms:.3}"));
            }
        }
        x.close("Bucket");
    }
    x.close("Latency");
}

/// `<Iops>`: the standard deviation of the per-second IOPS and the series itself. iocap's
/// series counts all I/Os: `Read` and `Write` are given only when the test did one of them.
fn iops(x: &mut Xml, test: &TestResult) {
    x.open("Iops");
    for (section, tag) in [
        (Section::Read, "ReadIopsStdDev"),
        (Section::Write, "WriteIopsStdDev"),
        (Section::Total, "IopsStdDev"),
    ] {
        let has_ios = figures::test_stats(test, section).ios > 0;
        if let Some(sd) = figures::iops_std_dev(test, section).filter(|_| has_ios) {
            x.leaf(tag, format!("{sd:.3}"));
        }
    }
    let (reads, writes) = (test.read.ios > 0, test.write.ios > 0);
    for s in &test.per_second {
        let mut attrs = vec![("SampleMillisecond", format!("{:.0}", s.t_s * 1000.0))];
        let total = format!("{:.0}", s.iops);
        match (reads, writes) {
            (true, true) => {}
            _ => {
                let (r, w) = if writes {
                    ("0".into(), total.clone())
                } else {
                    (total.clone(), "0".into())
                };
                attrs.push(("Read", r));
                attrs.push(("Write", w));
            }
        }
        attrs.push(("Total", total));
        if let (Some(mean), false) = (s.lat_us_mean, reads && writes) {
            let tag = if writes {
                "WriteAvgLatencyMilliseconds"
            } else {
                "ReadAvgLatencyMilliseconds"
            };
            attrs.push((tag, format!("{:.3}", mean / 1000.0)));
        }
        x.empty("Bucket", &attrs);
    }
    x.close("Iops");
}

#[cfg(test)]
#[path = "xml_tests.rs"]
mod tests;

//! The measured `<TimeSpan>` of DiskSpd's XML: time and thread count, every CPU, the latency
//! percentiles, `-D`'s series, then one `<Thread>` per DiskSpd thread with its `<Target>`s, in
//! DiskSpd 2.2's order and number formats (see `xml` for the document around it).

use crate::cpu;
use crate::figures::{self, Counts, Row, Section};
use crate::series::Series;
use crate::xml_writer::Xml;
use crate::DiskspdRun;
use iocap_model::detail::IntervalOps;
use iocap_model::{HostInfo, TestResult};

/// One measured `<TimeSpan>`.
pub(crate) fn timespan(x: &mut Xml, run: &DiskspdRun, test: &TestResult, host: &HostInfo) {
    x.open("TimeSpan");
    if test.duration_s <= 0.0 {
        x.leaf(
            "Error",
            "The test was interrupted before the measurements began. No results are displayed.",
        );
        x.close("TimeSpan");
        return;
    }
    let pool = run.profile.total_threads.is_some();
    x.leaf("TestTimeSeconds", format!("{:.2}", test.duration_s));
    x.leaf("ThreadCount", figures::thread_count(test, pool));
    x.leaf("RequestCount", run.profile.pool_requests.unwrap_or(0));
    x.leaf("ProcCount", host.cpus);
    cpu_utilization(x, test, host);
    if run.latency {
        latency(x, test);
    }
    if run.per_interval_std {
        match Series::of_test(test) {
            Some(series) => iops(x, &series),
            None => iops_without_split(x, test),
        }
    }
    let threads = figures::threads(test, pool);
    let only = threads.len() == 1 && threads[0].targets.len() == 1;
    for thread in &threads {
        x.open("Thread");
        x.leaf("Id", thread.id);
        for row in &thread.targets {
            thread_target(x, run, test, row, only);
        }
        x.close("Thread");
    }
    x.close("TimeSpan");
}

fn pct(v: f64) -> String {
    format!("{:.2}", cpu::finite(v))
}

/// `<CpuUtilization>`: a `<CPU>` per CPU and their `<Average>`, system-wide. iocap's own
/// process follows as a comment; a result without every CPU's time has iocap's own process
/// as the average, as before.
fn cpu_utilization(x: &mut Xml, test: &TestResult, host: &HostInfo) {
    let own = figures::cpu(test, host.cpus);
    x.open("CpuUtilization");
    let Some(t) = cpu::table(test, host) else {
        x.open("Average");
        x.leaf("UsagePercent", pct(own.usage));
        x.leaf("UserPercent", pct(own.user));
        x.leaf("KernelPercent", pct(own.kernel));
        x.leaf("IdlePercent", pct(own.idle));
        x.close("Average");
        x.close("CpuUtilization");
        return;
    };
    if host.topology.is_none() {
        x.comment("iocap: the host's topology was not recorded: Socket, Node and Core unknown");
    }
    let known = |v: Option<u32>| v.map_or_else(|| "unknown".to_string(), |v| v.to_string());
    for r in &t.rows {
        let p = &r.place;
        x.open("CPU");
        x.leaf("Socket", known(p.socket));
        x.leaf("Node", known(p.node));
        x.leaf("Group", p.group);
        x.leaf("Core", known(p.core));
        x.leaf("EfficiencyClass", 0);
        x.leaf("Id", p.number);
        x.leaf("UsagePercent", pct(r.share.usage_pct));
        x.leaf("UserPercent", pct(r.share.user_pct));
        x.leaf("KernelPercent", pct(r.share.kernel_pct));
        x.leaf("IdlePercent", pct(r.share.idle_pct));
        x.close("CPU");
    }
    x.open("Average");
    for (tag, v) in [
        "UsagePercent",
        "UserPercent",
        "KernelPercent",
        "IdlePercent",
    ]
    .into_iter()
    .zip(t.avg)
    {
        x.leaf(tag, pct(v));
    }
    x.close("Average");
    x.close("CpuUtilization");
    x.comment(&format!(
        "iocap's own process: usage {:.2}%, user {:.2}%, kernel {:.2}% of all CPUs; the CPU \
         elements above are every process on the host",
        own.usage, own.user, own.kernel
    ));
}

/// The `<Target>` of a `<Thread>`: counts, then latency and IOPS as asked.
fn thread_target(x: &mut Xml, run: &DiskspdRun, test: &TestResult, row: &Row, only: bool) {
    x.open("Target");
    x.leaf("Path", &row.path);
    x.leaf("BytesCount", row.total.bytes);
    x.leaf("FileSize", row.size_bytes);
    x.leaf("IOCount", row.total.ios);
    match row.split {
        Some((r, w)) => {
            x.leaf("ReadBytes", r.bytes);
            x.leaf("ReadCount", r.ios);
            x.leaf("WriteBytes", w.bytes);
            x.leaf("WriteCount", w.ios);
        }
        None => {
            // a result that does not tell this target's reads from its writes
            for tag in ["ReadBytes", "ReadCount", "WriteBytes", "WriteCount"] {
                x.leaf(tag, "N/A");
            }
        }
    }
    if run.latency {
        let (r, w) = row.split.unzip();
        let lines: [(Option<Counts>, &str, &str); 3] = [
            (r, "AverageReadLatencyMilliseconds", "ReadLatencyStdev"),
            (w, "AverageWriteLatencyMilliseconds", "WriteLatencyStdev"),
            (
                Some(row.total),
                "AverageLatencyMilliseconds",
                "LatencyStdev",
            ),
        ];
        for (counts, avg, std) in lines {
            if let Some((mean, sd)) = counts.and_then(|c| c.lat_ms) {
                x.leaf(avg, format!("{mean:.3}"));
                x.leaf(std, format!("{sd:.3}"));
            }
        }
    }
    if run.per_interval_std {
        // a lone thread's series is the test's when the workers kept none of their own
        match (&row.series, only.then(|| Series::of_test(test))) {
            (Some(series), _) => iops(x, series),
            (None, Some(Some(series))) => iops(x, &series),
            (None, Some(None)) => iops_without_split(x, test),
            (None, None) => {}
        }
    }
    x.close("Target");
}

/// DiskSpd's `HistoBuckets` attribute: a count, or `unknown` for a result without histograms.
fn histo_buckets(stats: &iocap_model::OpStats) -> String {
    figures::histo_buckets(stats).map_or_else(|| "unknown".into(), |n| n.to_string())
}

/// `<Latency>`: averages, then a `<Bucket>` for min, 1 to 99 %, 99.9 % to 99.9999999 %, max.
fn latency(x: &mut Xml, test: &TestResult) {
    let attrs = [
        ("ReadHistoBuckets", histo_buckets(&test.read)),
        ("WriteHistoBuckets", histo_buckets(&test.write)),
        ("TotalHistoBuckets", histo_buckets(&test.total)),
    ];
    x.open_with("Latency", &attrs);
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

/// The four latency attributes of one kind of I/O in one interval, in ms (0 when none).
fn latency_attrs(kind: &'static str, ops: &IntervalOps) -> [(String, String); 4] {
    let l = ops.lat_us.filter(|_| ops.ios > 0).unwrap_or_default();
    let ms = |us: f64| format!("{:.3}", cpu::finite(us) / 1000.0);
    [
        (format!("{kind}MinLatencyMilliseconds"), ms(l.min)),
        (format!("{kind}MaxLatencyMilliseconds"), ms(l.max)),
        (format!("{kind}AvgLatencyMilliseconds"), ms(l.mean)),
        (format!("{kind}LatencyStdDev"), ms(l.stddev)),
    ]
}

/// `<Iops>` from a series with reads and writes apart: the deviation of each kind that
/// completed I/O, then a `<Bucket>` per interval with its rates and latency.
fn iops(x: &mut Xml, series: &Series) {
    x.open("Iops");
    for (section, tag) in [
        (Section::Read, "ReadIopsStdDev"),
        (Section::Write, "WriteIopsStdDev"),
        (Section::Total, "IopsStdDev"),
    ] {
        if series.has(section) {
            x.leaf(tag, format!("{:.3}", series.iops_std_dev(section)));
        }
    }
    for s in &series.samples {
        let (r, w) = (series.rate(s.read.ios), series.rate(s.write.ios));
        let mut attrs: Vec<(String, String)> = vec![
            ("SampleMillisecond".into(), s.ms.to_string()),
            ("Read".into(), format!("{r:.0}")),
            ("Write".into(), format!("{w:.0}")),
            ("Total".into(), format!("{:.0}", r + w)),
        ];
        attrs.extend(latency_attrs("Read", &s.read));
        attrs.extend(latency_attrs("Write", &s.write));
        let attrs: Vec<(&str, String)> =
            attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        x.empty("Bucket", &attrs);
    }
    x.close("Iops");
}

/// `<Iops>` of a result saved before the series split reads from writes: it has each second's
/// total IOPS and mean latency. A mixed test's read and write figures are unknown and say so
/// (`N/A`), where DiskSpd has numbers; a test of one kind has them all.
fn iops_without_split(x: &mut Xml, test: &TestResult) {
    x.open("Iops");
    let (reads, writes) = (test.read.ios > 0, test.write.ios > 0);
    if reads && writes {
        x.comment("iocap: this result's series does not tell reads from writes");
    }
    for (section, tag, has) in [
        (Section::Read, "ReadIopsStdDev", reads),
        (Section::Write, "WriteIopsStdDev", writes),
        (Section::Total, "IopsStdDev", reads || writes),
    ] {
        if has {
            let sd = figures::iops_std_dev(test, section);
            x.leaf(
                tag,
                sd.map_or_else(|| "N/A".into(), |sd| format!("{sd:.3}")),
            );
        }
    }
    for s in &test.per_second {
        let total = format!("{:.0}", s.iops);
        let (r, w) = match (reads, writes) {
            (true, true) => ("N/A".to_string(), "N/A".to_string()),
            (false, true) => ("0".into(), total.clone()),
            _ => (total.clone(), "0".into()),
        };
        let mut attrs = vec![
            ("SampleMillisecond", format!("{:.0}", s.t_s * 1000.0)),
            ("Read", r),
            ("Write", w),
            ("Total", total),
        ];
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

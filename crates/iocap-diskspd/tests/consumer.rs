//! iocap's `-Rxml` read the way DiskSpd's own `Process-DiskSpd.ps1` reads a result file: the
//! first line, the test time, reads and writes summed over every `Thread/Target`, the IOPS
//! coefficient of variation from `Iops/ReadIopsStdDev` and `WriteIopsStdDev`, the profile's
//! first target, the average and the hottest CPU, the average latencies and the latency
//! buckets at its percentiles. No value it reads may be empty or `N/A` where DiskSpd gives a
//! number: the script would silently compute a 0 (PowerShell's `$null / x`) or throw.

use iocap_diskspd::{parse, render_xml};
use iocap_model::fixture::{run as fixture, FixtureRun};
use iocap_model::RwMode;
use std::collections::BTreeMap;

mod support;
use support::reader::{read, text, Element};

/// The script's percentiles (`$l`).
const PERCENTILES: [&str; 10] = [
    "25", "50", "75", "90", "95", "99", "99.9", "99.99", "99.999", "100",
];

/// One value the script reads, as a number: `Err` names it when it is missing, empty, `N/A` or
/// not a number.
fn number(name: &str, v: Option<&str>) -> Result<f64, String> {
    match v {
        None => Err(format!("{name}: missing")),
        Some(s) => s
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("{name}: {s:?} is not a number")),
    }
}

fn one<'a>(x: &'a [Element], path: &str) -> Option<&'a str> {
    text(x, &format!("Results/{path}")).first().copied()
}

/// The sum of one leaf over every `Thread/Target` (`measure -sum -Property`).
fn sum(x: &[Element], leaf: &str) -> Result<f64, String> {
    let targets = x
        .iter()
        .filter(|e| e.path == "Results/TimeSpan/Thread/Target")
        .count();
    let values = text(x, &format!("Results/TimeSpan/Thread/Target/{leaf}"));
    if values.len() != targets {
        return Err(format!("{leaf}: in {} of {targets} targets", values.len()));
    }
    values.iter().map(|v| number(leaf, Some(v))).sum()
}

/// `$h[$_.Percentile] = $_`: each latency bucket's value of one kind by its percentile.
fn buckets<'a>(x: &'a [Element], kind: &str) -> BTreeMap<&'a str, Option<&'a str>> {
    let mut out = BTreeMap::new();
    let mut at = None;
    for e in x {
        match e.path.strip_prefix("Results/TimeSpan/Latency/Bucket") {
            Some("") => at = None,
            Some("/Percentile") => {
                at = Some(e.text.as_str());
                out.insert(e.text.as_str(), None);
            }
            Some(leaf) if leaf == format!("/{kind}Milliseconds") => {
                if let Some(p) = at {
                    out.insert(p, Some(e.text.as_str()));
                }
            }
            _ => {}
        }
    }
    out
}

/// What the script computes for one result file, by its column names; `Err` for the first
/// value that is not a number where DiskSpd writes one.
fn process(xml: &str) -> Result<BTreeMap<String, f64>, String> {
    if xml.lines().next() != Some("<Results>") {
        return Err("does not appear to be a DiskSpd XML result".into());
    }
    let x = read(xml);
    let mut o = BTreeMap::new();
    let t = number("TestTimeSeconds", one(&x, "TimeSpan/TestTimeSeconds"))?;
    let (ri, wi) = (sum(&x, "ReadCount")?, sum(&x, "WriteCount")?);
    let (rb, wb) = (sum(&x, "ReadBytes")?, sum(&x, "WriteBytes")?);
    let (riops, wiops) = (ri / t, wi / t);
    let profile = "Profile/TimeSpans/TimeSpan";
    let std_dev = one(&x, &format!("{profile}/CalculateIopsStdDev")) == Some("true");
    let latency = one(&x, &format!("{profile}/MeasureLatency")) == Some("true");
    if std_dev {
        let cov = [
            (riops, "ReadIopsStdDev", "ReadIOPSCoV"),
            (wiops, "WriteIopsStdDev", "WriteIOPSCoV"),
        ];
        for (iops, tag, column) in cov {
            if iops > 0.0 {
                let sd = number(tag, one(&x, &format!("TimeSpan/Iops/{tag}")))?;
                o.insert(column.into(), sd / iops);
            }
        }
    }
    let target = format!("{profile}/Targets/Target");
    for leaf in ["WriteRatio", "RequestCount", "BlockSize"] {
        o.insert(
            leaf.into(),
            number(leaf, one(&x, &format!("{target}/{leaf}")))?,
        );
    }
    let align = one(&x, &format!("{target}/Random")).or(one(&x, &format!("{target}/StrideSize")));
    o.insert("Align".into(), number("Align", align)?);
    o.insert(
        "Threads".into(),
        number("ThreadCount", one(&x, "TimeSpan/ThreadCount"))?,
    );
    let cpu = "TimeSpan/CpuUtilization";
    for leaf in ["UsagePercent", "KernelPercent"] {
        let v = number(leaf, one(&x, &format!("{cpu}/Average/{leaf}")))?;
        o.insert(format!("CPU{leaf}"), v);
        let per_cpu = text(&x, &format!("Results/{cpu}/CPU/{leaf}"));
        let hot = per_cpu
            .iter()
            .map(|v| number(leaf, Some(v)))
            .collect::<Result<Vec<f64>, _>>()?
            .into_iter()
            .reduce(f64::max);
        o.insert(
            format!("CPUHotCore{leaf}"),
            number(leaf, hot.map(|h| h.to_string()).as_deref())?,
        );
    }
    if latency {
        for (ios, kind) in [(ri, "Read"), (wi, "Write")] {
            if ios == 0.0 {
                continue;
            }
            let avg = format!("TimeSpan/Latency/Average{kind}Milliseconds");
            o.insert(format!("Lat{kind}AV"), number(&avg, one(&x, &avg))?);
            let buckets = buckets(&x, kind);
            for p in PERCENTILES {
                let v = buckets.get(p).copied().flatten();
                o.insert(format!("Lat{kind}{p}"), number(&format!("{kind} {p}"), v)?);
            }
        }
    }
    o.extend([
        ("ReadIOPS".to_string(), riops),
        ("WriteIOPS".to_string(), wiops),
        ("ReadBW".to_string(), rb / t),
        ("WriteBW".to_string(), wb / t),
        ("TotIOPS".to_string(), riops + wiops),
    ]);
    Ok(o)
}

#[test]
fn the_script_reads_a_number_wherever_diskspd_writes_one() {
    for (name, line, result) in support::runs() {
        let args: Vec<&str> = line.split_whitespace().collect();
        let xml = render_xml(&result, &parse(&args).unwrap());
        let o = process(&xml).unwrap_or_else(|e| panic!("{name}: {e}"));
        let t = &result.tests[0];
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
        assert!(
            close(o["ReadIOPS"], t.read.ios as f64 / t.duration_s),
            "{name}"
        );
        assert!(
            close(o["WriteIOPS"], t.write.ios as f64 / t.duration_s),
            "{name}"
        );
        assert!(
            o["CPUHotCoreUsagePercent"] >= o["CPUUsagePercent"],
            "{name}"
        );
        assert_eq!(o.contains_key("WriteIOPSCoV"), t.write.ios > 0, "{name}");
        assert!(o["ReadIOPSCoV"] > 0.0, "{name}: {o:?}");
        if t.write.ios > 0 {
            assert!(o["WriteIOPSCoV"] > 0.0, "{name}: {o:?}");
            assert!(o.contains_key("LatWrite99.9"), "{name}: {o:?}");
        }
    }
}

/// A result saved before the engine split its series: the script meets `N/A`, which it cannot
/// take for a number, rather than a missing element it would read as a deviation of 0.
#[test]
fn an_older_mixed_result_says_what_it_does_not_know() {
    let result = fixture(&FixtureRun {
        targets: vec!["t.dat".into()],
        rw: RwMode::RandRw,
        ..FixtureRun::default()
    });
    let run = parse(&["-r", "-w30", "-L", "-D", "-Rxml", "t.dat"]).unwrap();
    let err = process(&render_xml(&result, &run)).unwrap_err();
    assert_eq!(err, "ReadIopsStdDev: \"N/A\" is not a number");
}

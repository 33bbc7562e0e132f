//! The HTML report's structure on constructed results: self-contained, every user string
//! escaped, one chart of each kind with as many marks as it has data, and no panic or NaN on
//! empty or broken input. How it looks is checked in a real browser by `tests/browser.rs`.

use iocap_model::fixture::{self, FixtureRun};
use iocap_model::{IoFault, RunResult, RwMode, SecondSample};
use iocap_report::html::{escape, render};

const KINDS: [&str; 6] = [
    "iops-over-time",
    "mbps-over-time",
    "latency-over-time",
    "latency-percentiles",
    "target-iops",
    "target-p99",
];

/// One chart as found in the page.
#[derive(Debug)]
struct Chart {
    kind: String,
    claimed: usize,
    pts: usize,
    bars: usize,
    svg: String,
}

fn attr(tag: &str, name: &str) -> String {
    let key = format!(r#"{name}=""#);
    let start = tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + key.len();
    tag[start..].split('"').next().unwrap().to_string()
}

fn charts(html: &str) -> Vec<Chart> {
    html.split(r#"<svg class="chart""#)
        .skip(1)
        .map(|rest| {
            let svg = &rest[..rest.find("</svg>").expect("svg closes")];
            let tag = &svg[..svg.find('>').unwrap()];
            Chart {
                kind: attr(tag, "data-chart"),
                claimed: attr(tag, "data-points").parse().unwrap(),
                pts: svg.matches(r#"<circle class="pt""#).count(),
                bars: svg.matches(r#"<rect class="bar""#).count(),
                svg: svg.to_string(),
            }
        })
        .collect()
}

fn chart<'a>(cs: &'a [Chart], kind: &str) -> &'a Chart {
    let found: Vec<&Chart> = cs.iter().filter(|c| c.kind == kind).collect();
    assert_eq!(found.len(), 1, "one {kind} chart");
    found[0]
}

fn run(label: &str, salt: u64, targets: &[&str]) -> RunResult {
    fixture::run(&FixtureRun {
        label: Some(label.into()),
        salt,
        targets: targets.iter().map(|t| t.to_string()).collect(),
        ..FixtureRun::default()
    })
}

#[test]
fn escape_covers_markup_and_quotes() {
    assert_eq!(
        escape("<script>alert(1)</script>"),
        "&lt;script&gt;alert(1)&lt;/script&gt;"
    );
    assert_eq!(
        escape(r#"a "b" & 'c'"#),
        "a &quot;b&quot; &amp; &#39;c&#39;"
    );
    assert_eq!(escape("/data/ünïcode µs"), "/data/ünïcode µs");
}

#[test]
fn self_contained() {
    let html = render(&[run("a", 1, &["/a", "/b"]), run("b", 2, &["/a", "/b"])]);
    assert!(html.starts_with("<!DOCTYPE html>"));
    for bad in [
        "http://", "https://", "src=", "<link", "<script", "@import", "url(", "<iframe", "<img",
    ] {
        assert!(!html.contains(bad), "the report contains {bad}");
    }
    assert!(html.contains("<style>") && html.contains("@media print"));
}

#[test]
fn every_user_string_is_escaped() {
    let evil = "<script>alert(1)</script>";
    let quotes = r#"x" onmouseover="alert('&')"#;
    let mut r = run(
        &format!("{evil}{quotes}"),
        1,
        &[&format!("/data/{evil}{quotes}")],
    );
    r.note = Some(format!("note {evil} {quotes}"));
    r.tags = vec![evil.into(), quotes.into()];
    r.host.hostname = format!("db{evil}{quotes}");
    r.host.cpu_model = evil.into();
    r.host.kernel = quotes.into();
    let t = &mut r.tests[0];
    t.name = format!("test {evil}");
    t.warnings.push(format!("warning {evil} {quotes}"));
    t.error = Some(IoFault {
        op: iocap_model::FaultOp::Read,
        path: evil.into(),
        offset_bytes: 0,
        len_bytes: 8192,
        errno: 5,
        message: quotes.into(),
    });
    t.targets[0].device = Some(evil.into());
    t.targets[0].fs_type = Some(quotes.into());
    let html = render(&[r.clone(), r]);
    assert!(!html.contains("<script"), "unescaped script tag");
    assert!(!html.contains(r#"x" onmouseover"#), "unescaped quote");
    assert!(!html.contains("'&'"), "unescaped apostrophe or ampersand");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("x&quot; onmouseover=&quot;alert(&#39;&amp;&#39;)"));
    // every place a string appears, it appears escaped
    for place in ["note ", "warning ", "/data/", "db", "test "] {
        assert!(
            html.contains(&format!("{place}&lt;script&gt;")),
            "{place} not shown escaped"
        );
    }
}

#[test]
fn one_run_has_one_chart_of_each_kind_with_every_point() {
    let r = run("one", 1, &["/data/a", "/data/b"]);
    let t = &r.tests[0];
    let html = render(std::slice::from_ref(&r));
    let cs = charts(&html);
    assert_eq!(cs.len(), KINDS.len(), "{cs:?}");
    for c in &cs {
        assert_eq!(
            c.claimed,
            c.pts + c.bars,
            "{}: data-points matches marks",
            c.kind
        );
        assert!(c.claimed > 0, "{} has data", c.kind);
        assert!(!c.svg.contains("NaN") && !c.svg.contains("inf\""));
    }
    let n = t.per_second.len();
    assert_eq!(n, 10);
    assert_eq!(chart(&cs, "iops-over-time").pts, n);
    assert_eq!(chart(&cs, "mbps-over-time").pts, n);
    assert_eq!(chart(&cs, "latency-over-time").pts, 2 * n, "mean and p99");
    assert_eq!(chart(&cs, "target-iops").bars, 2);
    assert_eq!(chart(&cs, "target-p99").bars, 2);
    // 400,000 I/Os support five nines: every tenth of a nine from 0 to 5
    assert_eq!(chart(&cs, "latency-percentiles").pts, 51);
    // tooltips carry values and axes their units
    assert!(html.contains("<title>one: 1 s, IOPS "));
    assert!(html.contains("time (s)") && html.contains("IOPS (I/Os per second)"));
    assert!(html.contains("latency (µs)") || html.contains("latency (ms)"));
    assert!(html.contains(">99.999</text>"), "nines axis");
}

#[test]
fn several_runs_share_the_charts() {
    let mut runs = vec![
        run("before", 1, &["/a", "/b"]),
        run("after", 2, &["/a", "/b"]),
    ];
    runs[1].tests[0].per_second.truncate(7);
    let html = render(&runs);
    let cs = charts(&html);
    assert_eq!(cs.len(), KINDS.len());
    for c in &cs {
        assert_eq!(c.claimed, c.pts + c.bars, "{}", c.kind);
    }
    assert_eq!(chart(&cs, "iops-over-time").pts, 10 + 7);
    assert_eq!(chart(&cs, "latency-over-time").pts, 2 * (10 + 7));
    assert_eq!(chart(&cs, "target-iops").bars, 4);
    assert_eq!(chart(&cs, "latency-percentiles").pts, 2 * 51);
    for c in &cs {
        assert!(
            c.svg.contains(">before") && c.svg.contains(">after"),
            "legend of {}",
            c.kind
        );
        assert!(
            c.svg.contains("#0b62a4") && c.svg.contains("#d55e00"),
            "one colour per run"
        );
    }
    assert!(
        html.contains("Compared with before:"),
        "comparison in the summary"
    );
}

#[test]
fn summary_speaks_plainly() {
    let mut fast = fixture::run(&FixtureRun {
        iops: 80_000.0,
        p50_us: 90.0,
        label: Some("fast".into()),
        ..FixtureRun::default()
    });
    let base = run("base", 0, &["/data/iocap.testfile"]);
    fast.tests[0].warnings.push("cache was warm".into());
    let html = render(&[base, fast]);
    assert!(
        html.contains(
            "8K random reads on 1 target: 40,000 IOPS (328 MB/s); half the I/Os finished within"
        ),
        "{html}"
    );
    assert!(html.contains("No warnings."));
    assert!(html.contains("1 warning (see Warnings)."));
    assert!(html.contains("Compared with base: IOPS 100 % higher, p99 latency"));
    assert!(html.contains("lower (better)"));
    assert!(html.contains("cache was warm"));
}

#[test]
fn setup_names_host_and_targets() {
    let mut r = run("lbl", 1, &["/data/a.dat"]);
    r.tags = vec!["prod".into()];
    r.note = Some("after firmware 2.1".into());
    let html = render(&[r.clone()]);
    for s in [
        "db01",
        "6.1.0-27-amd64",
        "Intel(R) Xeon(R) Gold 6338",
        "128.0 GiB",
        "/data/a.dat",
        "nvme0n1p2",
        "xfs",
        "randread 8K, qd",
        "io_uring",
        "10.0 s measured",
        "prod",
        "after firmware 2.1",
        &r.run_id,
        &r.started_at,
    ] {
        assert!(html.contains(s), "missing {s}");
    }
}

#[test]
fn empty_and_broken_inputs_do_not_panic() {
    // no runs
    let html = render(&[]);
    assert!(html.contains("No results") && html.ends_with("</html>\n"));

    // a run with no tests
    let mut r = run("none", 1, &["/a"]);
    r.tests.clear();
    assert!(charts(&render(&[r])).is_empty());

    // no per-second samples, no I/O, no targets
    let mut r = run("idle", 1, &["/a"]);
    let t = &mut r.tests[0];
    t.per_second.clear();
    t.total = Default::default();
    t.read = Default::default();
    t.write = Default::default();
    t.targets[0].total = Default::default();
    let html = render(&[r.clone()]);
    let cs = charts(&html);
    assert_eq!(cs.len(), KINDS.len());
    for kind in [
        "iops-over-time",
        "mbps-over-time",
        "latency-over-time",
        "latency-percentiles",
    ] {
        assert_eq!(chart(&cs, kind).claimed, 0, "{kind}");
    }
    assert_eq!(
        chart(&cs, "target-iops").bars,
        1,
        "a zero bar is still a bar"
    );
    assert_eq!(chart(&cs, "target-p99").bars, 0, "no latency, no bar");
    assert!(html.contains("no per-second samples") && html.contains("no I/O completed"));
    r.tests[0].targets.clear();
    assert_eq!(chart(&charts(&render(&[r])), "target-iops").claimed, 0);

    // NaN, infinities, negative and missing values in the series; a corrupt histogram
    let mut r = run("odd", 1, &["/a"]);
    let t = &mut r.tests[0];
    t.per_second = vec![
        SecondSample {
            t_s: 1.0,
            iops: f64::NAN,
            mb_s: f64::INFINITY,
            lat_us_mean: None,
            lat_us_p99: Some(f64::NAN),
            submit_each_pct: None,
            read: None,
            write: None,
        },
        SecondSample {
            t_s: f64::NAN,
            iops: 5.0,
            mb_s: 1.0,
            lat_us_mean: Some(1.0),
            lat_us_p99: Some(2.0),
            submit_each_pct: None,
            read: None,
            write: None,
        },
        SecondSample {
            t_s: 3.0,
            iops: 5.0,
            mb_s: -1.0,
            lat_us_mean: Some(f64::NEG_INFINITY),
            lat_us_p99: Some(3.0),
            submit_each_pct: None,
            read: None,
            write: None,
        },
    ];
    t.total.lat_hist_ns = Some("garbage".into());
    t.total.iops = f64::NAN;
    t.targets[0].total.iops = f64::INFINITY;
    let html = render(&[r]);
    let cs = charts(&html);
    assert_eq!(chart(&cs, "iops-over-time").claimed, 1);
    assert_eq!(chart(&cs, "latency-over-time").claimed, 1);
    // a corrupt histogram falls back to the stored percentiles: min, p50 ... p99.999
    assert_eq!(chart(&cs, "latency-percentiles").claimed, 8);
    for c in &cs {
        assert_eq!(c.claimed, c.pts + c.bars, "{}", c.kind);
        for bad in ["NaN", "=\"inf", "-inf\"", "\"inf\""] {
            assert!(!c.svg.contains(bad), "{} contains {bad}", c.kind);
        }
    }
}

#[test]
fn stored_percentiles_are_used_without_histogram() {
    let mut r = fixture::run(&FixtureRun {
        rw: RwMode::RandWrite,
        ..FixtureRun::default()
    });
    r.tests[0].total.lat_hist_ns = None;
    let cs = charts(&render(&[r]));
    assert_eq!(chart(&cs, "latency-percentiles").pts, 8);
}

#[test]
fn several_tests_get_one_chart_set_each() {
    let mut r = run("two tests", 1, &["/a"]);
    let mut second = r.tests[0].clone();
    second.name = "second test".into();
    r.tests.push(second);
    let html = render(&[r]);
    assert_eq!(charts(&html).len(), 2 * KINDS.len());
    assert!(html.contains(r#"data-test="1""#));
    assert!(html.contains("second test: 8K random reads"));
}

mod common;

const ASSESS_KINDS: [&str; 4] = [
    "load-latency",
    "qd-iops",
    "scaleup-alone",
    "scaleup-together",
];

#[test]
fn assessment_sections_and_charts() {
    let r = common::assessed_run();
    let html = render(std::slice::from_ref(&r));
    let cs = charts(&html);
    // one chart set per test, plus the four assessment charts
    assert_eq!(cs.len(), r.tests.len() * KINDS.len() + ASSESS_KINDS.len());
    for c in &cs {
        assert_eq!(
            c.claimed,
            c.pts + c.bars,
            "{}: data-points matches marks",
            c.kind
        );
        assert!(
            !c.svg.contains("NaN") && !c.svg.contains("inf\""),
            "{}",
            c.kind
        );
    }
    let s = r.saturation.as_ref().unwrap();
    let ll = chart(&cs, "load-latency");
    assert_eq!(ll.pts, s.steps.len() + s.throttled.len());
    assert_eq!(ll.svg.matches(r#"<polyline class="line""#).count(), 2);
    assert!(ll
        .svg
        .contains("<title>qd 16: 39,500 IOPS, p99 3.10 ms</title>"));
    assert!(ll
        .svg
        .contains("<title>70 % load: 29,820 IOPS, p99 2.07 ms</title>"));
    assert_eq!(
        ll.svg.matches(r#"<circle class="highlight""#).count(),
        1,
        "the knee"
    );
    assert!(ll.svg.contains(">knee: qd 16</text>"));
    assert_eq!(
        ll.svg.matches(r#"<line class="ref""#).count(),
        1,
        "the target"
    );
    assert!(ll.svg.contains(">p99 target 10 ms</text>"));
    assert!(ll.svg.contains("p99 latency (ms)") && ll.svg.contains("IOPS (I/Os per second)"));
    let qd = chart(&cs, "qd-iops");
    assert_eq!(qd.pts, s.steps.len());
    for tick in [">1</text>", ">2</text>", ">16</text>", ">64</text>"] {
        assert!(qd.svg.contains(tick), "qd axis tick {tick}");
    }
    assert!(qd
        .svg
        .contains("<title>qd 32: 42,000 IOPS (+6.3 %)</title>"));
    assert_eq!(qd.svg.matches(r#"<circle class="highlight""#).count(), 1);
    let alone = chart(&cs, "scaleup-alone");
    assert_eq!(alone.bars, 4);
    assert_eq!(
        alone.svg.matches(r##"fill="#b91c1c"><title>"##).count(),
        1,
        "one slow bar"
    );
    assert!(
        alone.svg.contains(">41,200 slow</text>"),
        "slow said, not only coloured"
    );
    let together = chart(&cs, "scaleup-together");
    assert_eq!(
        together.pts,
        2 * 3,
        "measured and linear at 1, 2, 4 volumes"
    );
    assert!(together
        .svg
        .contains("4 volumes: 196,400 IOPS, 88.5 % of linear"));

    // sections, in order: preflight first, then the summary
    let at = |id: &str| {
        html.find(&format!(r#"<section id="{id}">"#))
            .unwrap_or_else(|| panic!("no section {id}"))
    };
    assert!(at("preflight") < at("summary"));
    assert!(at("summary") < at("setup") && at("setup") < at("saturation"));
    assert!(at("saturation") < at("scaleup") && at("scaleup") < at("charts"));
    // the capacity table: a badge with the word on every row, its sentence under it
    assert_eq!(
        html.matches(r#"<span class="badge pass">PASS</span></td>"#)
            .count(),
        3
    );
    assert_eq!(
        html.matches(r#"<span class="badge fail">FAIL</span></td>"#)
            .count(),
        1
    );
    assert_eq!(
        html.matches(r#"<span class="badge warn">WARN</span></td>"#)
            .count(),
        1
    );
    assert_eq!(
        html.matches(r#"<span class="badge info">INFO</span></td>"#)
            .count(),
        1
    );
    assert_eq!(html.matches(r#"<tr class="sentence">"#).count(), 6);
    assert!(
        html.contains("2,210.0 MB/s") && html.contains("2.45 ms") && html.contains("42,000 IOPS")
    );
    assert!(html.contains("commits will wait on the log"));
    assert!(html.contains("the log test ran on the same device as the data file"));
    // the summary says what was concluded
    for s in [
        "Preflight (sqlserver profile, device class flash): 1 FAIL, 1 WARN, 3 PASS, 1 INFO",
        "Saturation: at most 42,600 IOPS; the knee is at queue depth 16; capacity 42,000 IOPS with p99 &lt;= 10 ms, at qd 32.",
        "Scale-up: 4 volumes together: 196,400 IOPS, 88.5 % of linear; 1 volume slow (/mnt/vol3/t).",
        "Together (data and log at the same time): 33,400 IOPS (411 MB/s); the slowest p99 of them 3.84 ms.",
    ] {
        assert!(html.contains(s), "summary lacks {s}");
    }
    // the group in the full figures, with its together line
    assert!(html.contains("group 1: 2 workloads at the same time</h3>"));
    assert!(html
        .contains(r#"<td>together</td><td class="word">sum of 2 workloads</td><td>33,400</td>"#));
    assert!(html.contains("3.84 ms (max)"));
    // the saturation and scale-up tables
    assert!(html.contains(r#"<td class="word">◀ knee</td>"#));
    assert!(html.contains(r#"<td class="word">◀ slow</td>"#));
    assert!(html.contains("Capacity: 42,000 IOPS with p99 &lt;= 10 ms, at qd 32."));
}

#[test]
fn assessment_sections_are_absent_without_results() {
    let html = render(&[run("plain", 1, &["/a"])]);
    for absent in [
        r#"id="preflight""#,
        r#"id="saturation""#,
        r#"id="scaleup""#,
        "Preflight (",
        "Saturation:",
        "Scale-up:",
        "Together (",
        "at the same time",
        "class=\"badge",
        "class=\"highlight\"",
        "class=\"ref\"",
    ] {
        assert!(!html.contains(absent), "{absent} without an assessment");
    }
    // a run with groups of one is not a group
    let mut r = run("alone", 1, &["/a"]);
    r.tests[0].group = Some(4);
    assert!(!render(&[r]).contains("Together ("));
}

#[test]
fn several_saturation_runs_overlay() {
    let runs = [
        common::saturation_run("before", 1, 1.0, 1.0),
        common::saturation_run("after", 2, 1.6, 0.7),
    ];
    let html = render(&runs);
    let cs = charts(&html);
    let ll = chart(&cs, "load-latency");
    assert_eq!(ll.pts, 2 * (7 + 4));
    assert_eq!(ll.claimed, ll.pts);
    for name in [
        ">before steps<",
        ">before throttled<",
        ">after steps<",
        ">after throttled<",
    ] {
        assert!(ll.svg.contains(name), "legend {name}");
    }
    assert!(ll.svg.contains("#0b62a4") && ll.svg.contains("#d55e00"));
    assert_eq!(ll.svg.matches(r#"<circle class="highlight""#).count(), 2);
    assert_eq!(
        ll.svg.matches(r#"<line class="ref""#).count(),
        1,
        "one shared target"
    );
    assert!(ll.svg.contains("<title>after: qd 16: "));
    let qd = chart(&cs, "qd-iops");
    assert_eq!(qd.pts, 14);
    assert!(!html.contains(r#"id="scaleup""#) && !html.contains(r#"id="preflight""#));
}

#[test]
fn saturation_without_latencies_or_steps_does_not_panic() {
    let mut r = common::saturation_run("odd", 1, 1.0, 1.0);
    let s = r.saturation.as_mut().unwrap();
    s.steps[0].lat_us_p99 = None;
    s.steps[1].lat_us_p99 = Some(f64::NAN);
    s.steps[2].iops = f64::INFINITY;
    s.throttled.clear();
    s.knee_qd = Some(999);
    s.latency_target_us = Some(f64::NAN);
    let cs = charts(&render(std::slice::from_ref(&r)));
    let ll = chart(&cs, "load-latency");
    assert_eq!(ll.claimed, 4, "steps with no p99 or no IOPS are left out");
    assert_eq!(ll.claimed, ll.pts);
    assert!(!ll.svg.contains("NaN") && !ll.svg.contains("class=\"ref\""));
    let s = r.saturation.as_mut().unwrap();
    s.steps.clear();
    let mut sc = common::scaleup();
    sc.together.clear();
    sc.alone[0].iops = f64::NAN;
    r.scaleup = Some(sc);
    let html = render(&[r]);
    let cs = charts(&html);
    assert_eq!(chart(&cs, "load-latency").claimed, 0);
    assert_eq!(chart(&cs, "qd-iops").claimed, 0);
    assert_eq!(chart(&cs, "scaleup-alone").bars, 3);
    assert_eq!(chart(&cs, "scaleup-together").claimed, 0);
    assert!(html.contains("no steps") && html.contains("no volumes measured together"));
}

#[test]
fn assessment_strings_are_escaped() {
    let evil = "<script>alert(1)</script>";
    let quotes = r#"x" onmouseover="alert('&')"#;
    let mut r = common::assessed_run();
    let p = r.preflight.as_mut().unwrap();
    p.profile = format!("profile {evil}");
    p.device_class = quotes.into();
    p.warnings.push(format!("pwarn {evil} {quotes}"));
    for row in &mut p.rows {
        row.metric = format!("metric {evil} {quotes}");
        row.sentence = format!("sentence {evil} {quotes}");
        row.against = Some(format!("against {evil}"));
        row.unit = format!("unit{evil}");
    }
    let s = r.saturation.as_mut().unwrap();
    s.stop_reason = format!("stop {evil} {quotes}");
    let sc = r.scaleup.as_mut().unwrap();
    sc.alone[0].path = format!("/vol/{evil}{quotes}");
    sc.together[0].paths[0] = format!("/vol/{evil}{quotes}");
    let html = render(&[r]);
    assert!(!html.contains("<script"), "unescaped script tag");
    assert!(!html.contains(r#"x" onmouseover"#), "unescaped quote");
    assert!(!html.contains("'&'"), "unescaped apostrophe or ampersand");
    for place in [
        "profile ",
        "pwarn ",
        "metric ",
        "sentence ",
        "against ",
        "stop ",
        "/vol/",
        "unit",
    ] {
        assert!(
            html.contains(&format!("{place}&lt;script&gt;")),
            "{place} not shown escaped"
        );
    }
    for c in charts(&html) {
        assert_eq!(c.claimed, c.pts + c.bars, "{}", c.kind);
    }
}

/// A run of `iocap cost`: one chart per cache mode and queue depth, one measured line per
/// engine and direction (process accounting) plus its model dashed where it was fitted, and the
/// terminal view's tables below.
#[test]
fn a_cost_run_has_its_cpu_per_io_chart_with_every_point() {
    use iocap_model::{CostModel, CostReport, ModelPoint};
    let model = |engine: &str, accounting: iocap_model::Accounting, fixed: Option<f64>, qd: u32| {
        CostModel {
            engine: iocap_model::EngineChoice::parse(engine).unwrap(),
            rw: iocap_model::IoDirection::Read,
            cache: iocap_model::CacheMode::Direct,
            qd,
            accounting,
            fixed_us: fixed,
            per_kb_us: fixed.map(|_| 0.05),
            r2: fixed.map(|_| 0.99),
            points: [4.0, 8.0, 64.0]
                .iter()
                .map(|&kb| ModelPoint {
                    size_kb: kb,
                    us_per_io: 10.0 + 0.05 * kb,
                })
                .collect(),
        }
    };
    let mut r = run("cost", 3, &["/data/a"]);
    r.cost = Some(CostReport {
        matrix: iocap_model::CostMatrix::Quick,
        cpus: 2,
        clock_ticks_per_s: 100,
        models: vec![
            model("psync", iocap_model::Accounting::Process, Some(10.0), 16),
            // not fitted: drawn without a model line, and no NaN
            model("io_uring", iocap_model::Accounting::Process, None, 16),
            // system-wide models are not drawn
            model("psync", iocap_model::Accounting::System, Some(20.0), 16),
            model("psync", iocap_model::Accounting::Process, Some(50.0), 1),
        ],
        ..CostReport::default()
    });
    let html = render(std::slice::from_ref(&r));
    let cs = charts(&html);
    let cost: Vec<&Chart> = cs.iter().filter(|c| c.kind.starts_with("cost")).collect();
    assert_eq!(cost.len(), 2, "one chart for qd 16, one for qd 1: {cs:?}");
    for c in &cost {
        assert_eq!(
            c.claimed,
            c.pts + c.bars,
            "{}: data-points matches marks",
            c.kind
        );
        assert!(
            !c.svg.contains("NaN") && !c.svg.contains("inf\""),
            "{}",
            c.svg
        );
    }
    // qd 16: psync measured + model (3 + 3) and io_uring measured (3)
    assert_eq!(cost[0].pts, 9, "{}", cost[0].svg);
    assert_eq!(cost[1].pts, 6, "{}", cost[1].svg);
    assert!(html.contains("CPU per I/O against block size: direct, qd 16"));
    assert!(html.contains("psync read model: 10.00 + 0.0500 × 64 KiB"));
    assert!(html.contains(r#"<section id="cost">"#));
}

#[test]
fn the_summary_says_how_sure_each_figure_is() {
    let mut r = run("base", 0, &["/data/iocap.testfile"]);
    use iocap_model::{Spread, Stability, Uncertainty};
    let spread = |mean: f64| Spread {
        mean,
        ci95_low: mean * 0.98,
        ci95_high: mean * 1.02,
        ci95_half_pct: 2.0,
        cv_pct: 3.5,
        trend_pct: Some(-1.0),
        samples: 10,
        batches: 3,
    };
    r.tests[0].uncertainty = Some(Uncertainty {
        iops: Some(spread(40_000.0)),
        mb_s: Some(spread(327.7)),
        steal_pct: Some(12.5),
        verdict: Stability::Unstable,
        reasons: vec!["the hypervisor stole 12.5 % of the CPU time <b>".into()],
    });
    let html = render(&[r]);
    assert!(
        html.contains("The IOPS are known to ±2.0 % (95 % confidence, CV 3.5 %), 12.5 % of the CPU stolen by the hypervisor; unstable."),
        "{html}"
    );
    assert!(html.contains("The hypervisor stole 12.5 % of the CPU time &lt;b&gt;."));
}

/// A scan with one cache: the section, one chart point per working set with its level marked,
/// the steps table and the sentences (escaped); the terminal view fits 80 columns.
#[test]
fn a_cachescan_run_has_its_latency_chart_and_levels() {
    use iocap_model::{CacheLevel, CacheScan, CacheStep};
    let mib = 1u64 << 20;
    let lat = |ws: u64| if ws <= 32 * mib { 40.0 } else { 900.0 };
    let steps: Vec<CacheStep> = (4..=9)
        .map(|k| {
            let ws = mib << k;
            CacheStep {
                working_set_bytes: ws,
                warm_s: 0.1,
                qd32_test_idx: 0,
                qd1_test_idx: 0,
                lat_us_trim_mean: lat(ws),
                lat_us_p50: lat(ws),
                lat_us_p99: 2.0 * lat(ws),
                iops_qd32: 1e6 / lat(ws),
            }
        })
        .collect();
    let mut r = run("scan", 1, &["/data/t"]);
    r.cachescan = Some(CacheScan {
        target: "/data/<t>".into(),
        block_bytes: 8192,
        levels: vec![CacheLevel {
            fits_bytes: 32 * mib,
            exceeds_bytes: 64 * mib,
            estimated_bytes: 45 * mib,
            hit_lat_us: 40.0,
            miss_lat_us: 900.0,
            hit_iops_qd32: 25_000.0,
            miss_iops_qd32: 1_111.0,
        }],
        tried_up_to_bytes: 512 * mib,
        steps,
        stop_reason: "reached the largest working set, 512M".into(),
        read_after_write: None,
        rechecks: Vec::new(),
        notes: vec!["a <note>".into()],
    });
    let html = render(std::slice::from_ref(&r));
    assert!(html.contains(r#"<section id="cachescan">"#));
    let cs = charts(&html);
    let c = chart(&cs, "cachescan");
    assert_eq!((c.claimed, c.pts), (6, 6));
    assert!(c.svg.contains("cache 1: up to 64"), "{}", c.svg);
    assert!(html.contains("cache 1: holds between 32M and 64M"));
    assert!(html.contains("a &lt;note&gt;") && !html.contains("a <note>"));
    let text = iocap_report::assess::render_cachescan(r.cachescan.as_ref().unwrap());
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    assert!(text.contains("◀ past cache 1"), "{text}");
}

#[test]
fn runs_of_different_workloads_are_charted_and_summed_up_apart() {
    let reads = run("reads", 1, &["/a"]);
    let writes = fixture::run(&FixtureRun {
        label: Some("writes".into()),
        rw: RwMode::Write,
        bs_bytes: 1 << 20,
        iops: 2_000.0,
        p50_us: 900.0,
        salt: 2,
        ..FixtureRun::default()
    });
    let also_reads = run("reads again", 3, &["/a"]);
    let html = render(&[reads.clone(), writes.clone(), also_reads]);
    let cs = charts(&html);
    // two chart sets: the reads overlaid, the writes alone
    assert_eq!(cs.len(), 2 * KINDS.len());
    let iops: Vec<&Chart> = cs.iter().filter(|c| c.kind == "iops-over-time").collect();
    assert!(iops[0].svg.contains(">reads again") && !iops[0].svg.contains(">writes"));
    assert!(iops[1].svg.contains(">writes") && !iops[1].svg.contains(">reads"));
    let heads: Vec<&str> = html
        .split("<h3>")
        .skip(1)
        .map(|h| &h[..h.find("</h3>").unwrap()])
        .collect();
    let (r, w) = (&reads.tests[0].name, &writes.tests[0].name);
    assert!(
        heads.contains(&format!("{r}: reads, reads again").as_str()),
        "{heads:?}"
    );
    assert!(
        heads.contains(&format!("{w}: writes").as_str()),
        "{heads:?}"
    );
    // the summary compares like with like only
    assert!(
        html.contains("Not compared with reads, which ran no 1M sequential writes."),
        "{html}"
    );
    assert_eq!(html.matches("Compared with reads:").count(), 1, "{html}");
}

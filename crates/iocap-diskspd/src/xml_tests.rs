//! The XML writer's details; tests/xml_paths.rs compares the whole document with DiskSpd's.

use super::*;
use crate::parse;
use iocap_model::fixture::{run as fixture, FixtureRun};
use iocap_model::RwMode;

fn xml(line: &str, f: FixtureRun) -> String {
    let args: Vec<&str> = line.split_whitespace().collect();
    render_xml(&fixture(&f), &parse(&args).unwrap())
}

/// The lines of `doc` from the one equal to `first` (trimmed) to the one equal to `last`.
fn lines_between<'a>(doc: &'a str, first: &str, last: &'a str) -> Vec<&'a str> {
    let mut lines = doc.lines().map(str::trim).skip_while(|l| *l != first);
    let mut out: Vec<&str> = lines.by_ref().take_while(|l| *l != last).collect();
    assert!(!out.is_empty(), "no {first} in\n{doc}");
    out.push(last);
    out
}

#[test]
fn escapes_markup_and_control_characters() {
    assert_eq!(escape(r#"a<b>&"c'"#), "a&lt;b&gt;&amp;&quot;c&apos;");
    assert_eq!(escape("tab\tok\u{1}bad"), "tab\tok\u{FFFD}bad");
    assert_eq!(escape(r"E:\t.dat"), r"E:\t.dat");
}

#[test]
fn comments_cannot_end_early() {
    let mut x = Xml {
        out: String::new(),
        depth: 1,
    };
    x.comment("a --- b <c> & d\u{7}");
    assert_eq!(x.out, "  <!-- a - - - b <c> & d\u{FFFD} -->\n");
}

#[test]
fn document_starts_and_ends_like_diskspd() {
    let doc = xml("-r -Rxml t.dat", FixtureRun::default());
    let lines: Vec<&str> = doc.lines().collect();
    assert_eq!(lines[0], "<Results>");
    assert!(
        lines[1].starts_with("  <!-- written by iocap 0.1.0"),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2..4],
        ["  <System>", "    <ComputerName>db01</ComputerName>"]
    );
    assert_eq!(*lines.last().unwrap(), "</Results>");
    assert!(!doc.contains("<Latency>"), "no -L");
    assert!(!doc.contains("<Iops>"), "no -D");
    assert!(doc.contains("<RunTime>2026/11/22 02:00:00 UTC</RunTime>"));
}

#[test]
fn profile_of_other_options() {
    let line = "-F4 -O8 -s -a1,3 -g20i -Z64K -w100 -z9 -D500 -L t.dat";
    let doc = xml(line, FixtureRun::default());
    let profile = lines_between(&doc, "<TimeSpan>", "</Targets>");
    for expected in [
        "<ThreadCount>4</ThreadCount>",
        "<RequestCount>8</RequestCount>",
        // -D500 asked; the width iocap's buckets have (see the test below)
        "<IoBucketDuration>1000</IoBucketDuration>",
        "<RandSeed>9</RandSeed>",
        "<CalculateIopsStdDev>true</CalculateIopsStdDev>",
        "<AffinityGroupAssignment Group=\"0\" Processor=\"1\"/>",
        "<AffinityGroupAssignment Group=\"0\" Processor=\"3\"/>",
        "<Pattern>random</Pattern>",
        "<SizeInBytes>65536</SizeInBytes>",
        "<StrideSize>65536</StrideSize>",
        "<InterlockedSequential>false</InterlockedSequential>",
        "<WriteRatio>100</WriteRatio>",
        "<Throughput unit=\"IOPS\">20</Throughput>",
    ] {
        assert!(
            profile.contains(&expected),
            "{expected} missing from {profile:#?}"
        );
    }
    assert!(
        !profile.iter().any(|l| l.starts_with("<DisableOSCache>")),
        "cached by default"
    );
    assert!(
        !profile.iter().any(|l| l.starts_with("<FileSize>")),
        "no -c"
    );
}

#[test]
fn iops_series_of_a_read_test() {
    let doc = xml("-r -D -L t.dat", FixtureRun::default());
    let iops = lines_between(&doc, "<Iops>", "</Iops>");
    assert!(iops[1].starts_with("<ReadIopsStdDev>1184.292<"), "{iops:?}");
    assert!(iops[2].starts_with("<IopsStdDev>1184.292<"), "{iops:?}");
    assert!(iops[0] == "<Iops>" && iops[1..].iter().all(|l| !l.starts_with("<Write")));
    let first = iops.iter().find(|l| l.starts_with("<Bucket ")).unwrap();
    let expect = r#"<Bucket SampleMillisecond="1000" Read="41587" Write="0" Total="41587" ReadAvgLatencyMilliseconds=""#;
    assert!(first.starts_with(expect), "{first}");
    assert_eq!(
        doc.matches("<Iops>").count(),
        2,
        "the test's and the one target's"
    );
    assert_eq!(doc.matches("<ReadIopsStdDev>").count(), 2);
}

#[test]
fn iops_series_of_a_mixed_test_has_totals_only() {
    let f = FixtureRun {
        rw: RwMode::RandRw,
        targets: vec!["a".into(), "b".into()],
        ..FixtureRun::default()
    };
    let doc = xml("-r -w30 -D a b", f);
    assert_eq!(
        doc.matches("<Iops>").count(),
        1,
        "no per-target series for two targets"
    );
    assert!(doc.contains("<IopsStdDev>"));
    assert!(!doc.contains("<ReadIopsStdDev>") && !doc.contains("<WriteIopsStdDev>"));
    assert!(
        doc.contains(r#"<Bucket SampleMillisecond="1000" Total="41587"/>"#),
        "{doc}"
    );
    assert!(
        !doc.contains("<ReadBytes>"),
        "the fixture has no per-target split"
    );
}

#[test]
fn latency_of_a_mixed_test() {
    let f = FixtureRun {
        rw: RwMode::RandRw,
        ..FixtureRun::default()
    };
    let doc = xml("-r -w30 -L t.dat", f);
    let latency = lines_between(&doc, "<Latency>", "<Bucket>");
    let tags: Vec<&str> = latency[1..7]
        .iter()
        .map(|l| &l[1..l.find('>').unwrap()])
        .collect();
    let expected = [
        "AverageReadMilliseconds",
        "ReadLatencyStdev",
        "AverageWriteMilliseconds",
        "WriteLatencyStdev",
        "AverageTotalMilliseconds",
        "LatencyStdev",
    ];
    assert_eq!(tags, expected);
    let bucket = lines_between(&doc, "<Percentile>50</Percentile>", "</Bucket>");
    assert!(bucket[1].starts_with("<ReadMilliseconds>"), "{bucket:?}");
    assert!(bucket[2].starts_with("<WriteMilliseconds>"), "{bucket:?}");
    assert!(bucket[3].starts_with("<TotalMilliseconds>"), "{bucket:?}");
}

#[test]
fn interrupted_before_measuring() {
    let args = ["-r", "t.dat"];
    let run = parse(&args).unwrap();
    let mut r = fixture(&FixtureRun::default());
    r.tests[0].duration_s = 0.0;
    let doc = render_xml(&r, &run);
    let ts = lines_between(&doc, "</Profile>", "</TimeSpan>");
    assert_eq!(
        ts[2],
        "<Error>The test was interrupted before the measurements began. No results are displayed.</Error>"
    );
    assert_eq!(ts.len(), 4);
}

#[test]
fn notes_and_faults_are_comments() {
    let args = ["-w30", "-t2", "-a0", "t.dat"];
    let run = parse(&args).unwrap();
    let mut r = fixture(&FixtureRun::default());
    r.tests[0].warnings.push("slow start".into());
    let doc = render_xml(&r, &run);
    let tail: Vec<&str> = doc.lines().rev().take(5).collect();
    assert_eq!(tail[0], "</Results>");
    assert_eq!(tail[1], "  <!-- iocap warning: slow start -->");
    assert!(
        tail[2].starts_with("  <!-- iocap note: writes carry"),
        "{tail:?}"
    );
    assert!(
        tail[3].starts_with("  <!-- iocap note: -a: every thread"),
        "{tail:?}"
    );
}

/// `-D500` asks for half-second buckets; iocap's are a second long. The XML states the width
/// its buckets have, so a script dividing each bucket's count by `IoBucketDuration` gets the
/// rate (it stated 500 beside buckets 1000 ms apart, and such a script doubled every IOPS).
#[test]
fn the_bucket_duration_is_the_width_the_buckets_have() {
    let doc = xml("-r -D500 t.dat", FixtureRun::default());
    assert!(
        doc.contains("<IoBucketDuration>1000</IoBucketDuration>"),
        "{doc}"
    );
    let at: Vec<u64> = lines_between(&doc, "<Iops>", "</Iops>")
        .into_iter()
        .filter_map(|l| l.split("SampleMillisecond=\"").nth(1))
        .map(|v| v.split('"').next().unwrap().parse().unwrap())
        .collect();
    assert!(at.len() >= 2, "{doc}");
    assert!(at.windows(2).all(|w| w[1] - w[0] == 1000), "{at:?}");
}

//! The XML writer's details; tests/xml_paths.rs compares the whole document with DiskSpd's.

use super::*;
use crate::parse;
use iocap_model::fixture::{run as fixture, FixtureRun};
use iocap_model::RwMode;

fn xml(line: &str, f: FixtureRun) -> String {
    let args: Vec<&str> = line.split_whitespace().collect();
    render_xml(&fixture(&f), &parse(&args).unwrap())
}

/// The lines of `doc` from the one equal to `first` (trimmed; or `first` and attributes) to the
/// one equal to `last`.
fn lines_between<'a>(doc: &'a str, first: &str, last: &'a str) -> Vec<&'a str> {
    let opens = |l: &str| l == first || (l.starts_with(first) && l[first.len()..].starts_with(' '));
    let mut lines = doc.lines().map(str::trim).skip_while(|l| !opens(l));
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
fn iops_series_of_a_mixed_result_without_the_split_says_what_is_unknown() {
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
    // a result without the read/write split: unknown, and a script can tell
    assert!(
        doc.contains("<ReadIopsStdDev>N/A</ReadIopsStdDev>"),
        "{doc}"
    );
    assert!(
        doc.contains("<WriteIopsStdDev>N/A</WriteIopsStdDev>"),
        "{doc}"
    );
    assert!(
        doc.contains(r#"<Bucket SampleMillisecond="1000" Read="N/A" Write="N/A" Total="41587"/>"#),
        "{doc}"
    );
    assert_eq!(
        doc.matches("<ReadBytes>N/A</ReadBytes>").count(),
        2,
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
    let latency = lines_between(&doc, "<Latency", "<Bucket>");
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

/// The XML states the width the buckets have, so a script dividing each bucket's count by
/// `IoBucketDuration` gets the rate: a result sampled once a second (no `interval_ms`, as the
/// engine kept them before `-D`'s interval) says 1000 whatever `-D` asked (it once stated 500
/// beside buckets 1000 ms apart, and such a script doubled every IOPS); tests/threads.rs has
/// `-D500`'s half-second buckets.
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

/// Windows' scheme has a name and a GUID, written as they are, with no comment.
#[test]
fn a_power_scheme_with_its_guid() {
    let run = parse(&["-r", "t.dat"]).unwrap();
    let mut r = fixture(&FixtureRun::default());
    r.host.power_policy = Some(iocap_model::detail::PowerPolicy {
        name: "High performance".into(),
        guid: Some("8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c".into()),
    });
    let doc = render_xml(&r, &run);
    let system = lines_between(&doc, "<System>", "</System>");
    let at = system
        .iter()
        .position(|l| l.starts_with("<PowerScheme"))
        .unwrap();
    assert_eq!(
        system[at],
        r#"<PowerScheme Name="High performance" Guid="8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c"/>"#
    );
    assert!(
        system[at - 1].starts_with("<RunTime>"),
        "no comment before it"
    );
    r.host.power_policy = None;
    let doc = render_xml(&r, &run);
    assert!(
        doc.contains(r#"<PowerScheme Name="&lt;unknown&gt;" Guid="&lt;unknown&gt;"/>"#),
        "{doc}"
    );
}

/// `HistoBuckets`: the buckets of the histogram that hold an I/O; `unknown` without one.
#[test]
fn histo_buckets_count_the_histogram_s_buckets() {
    let mut r = fixture(&FixtureRun::default());
    let run = parse(&["-r", "-L", "t.dat"]).unwrap();
    let hist = r.tests[0].read.lat_hist_ns.clone().unwrap();
    let n = iocap_model::hist::decode_hist(&hist)
        .unwrap()
        .iter_recorded()
        .count();
    assert!(n > 100, "{n}");
    let expect = format!(
        r#"<Latency ReadHistoBuckets="{n}" WriteHistoBuckets="0" TotalHistoBuckets="{n}">"#
    );
    assert!(render_xml(&r, &run).contains(&expect));
    r.tests[0].read.lat_hist_ns = None;
    let doc = render_xml(&r, &run);
    assert!(doc.contains(r#"<Latency ReadHistoBuckets="unknown" WriteHistoBuckets="0""#));
}

/// Two sockets, two NUMA nodes, four cores of two threads (siblings 4 apart, as Linux numbers
/// them): each node and socket with its CPUs' mask, each core with its two.
#[test]
fn the_topology_of_a_two_socket_host() {
    use iocap_model::detail::{CpuPlace, CpuTopology};
    let mut r = fixture(&FixtureRun::default());
    let cpus = (0..8)
        .map(|id| CpuPlace {
            id,
            socket: id % 4 / 2,
            node: id % 4 / 2,
            core: id % 2,
        })
        .collect();
    r.host.topology = Some(CpuTopology { cpus });
    let doc = render_xml(&r, &parse(&["-r", "t.dat"]).unwrap());
    let topology = lines_between(&doc, "<ProcessorTopology", "</ProcessorTopology>");
    let expected = [
        r#"<ProcessorTopology Heterogeneous="false">"#,
        r#"<Group Group="0" MaximumProcessors="8" ActiveProcessors="8" ActiveProcessorMask="0xff"/>"#,
        r#"<Node Node="0">"#,
        r#"<Group Group="0" Mask="0x33"/>"#,
        "</Node>",
        r#"<Node Node="1">"#,
        r#"<Group Group="0" Mask="0xcc"/>"#,
        "</Node>",
        r#"<Socket Socket="0">"#,
        r#"<Group Group="0" Mask="0x33"/>"#,
        "</Socket>",
        r#"<Socket Socket="1">"#,
        r#"<Group Group="0" Mask="0xcc"/>"#,
        "</Socket>",
        r#"<Core Group="0" Core="0" Mask="0x11" EfficiencyClass="0"/>"#,
        r#"<Core Group="0" Core="1" Mask="0x22" EfficiencyClass="0"/>"#,
        r#"<Core Group="0" Core="2" Mask="0x44" EfficiencyClass="0"/>"#,
        r#"<Core Group="0" Core="3" Mask="0x88" EfficiencyClass="0"/>"#,
        "</ProcessorTopology>",
    ];
    assert_eq!(topology, expected);
}

/// A result whose series splits reads from writes but whose one worker kept none of its own:
/// the thread's target has the test's series, as DiskSpd gives every target its own.
#[test]
fn a_lone_target_has_the_test_s_split_series() {
    let mut r = fixture(&FixtureRun::default());
    for s in &mut r.tests[0].per_second {
        s.read = Some(iocap_model::detail::IntervalOps {
            ios: s.iops.round() as u64,
            lat_us: None,
        });
    }
    let doc = render_xml(&r, &parse(&["-r", "-D", "t.dat"]).unwrap());
    assert_eq!(doc.matches("<ReadIopsStdDev>").count(), 2, "{doc}");
    assert!(!doc.contains("N/A"), "{doc}");
    let bucket = r#"<Bucket SampleMillisecond="1000" Read="41587" Write="0" Total="41587" ReadMinLatencyMilliseconds="0.000""#;
    assert_eq!(doc.matches(bucket).count(), 2, "{doc}");
}

/// The patterns issue 27 made run are echoed as DiskSpd echoes them, in its order: the base
/// (BaseFileOffset), bursts with think time after ParallelAsyncIO, the random share after
/// `<Random>`; in the text, DiskSpd's lines for each.
#[test]
fn the_profile_echoes_base_bursts_mix_and_parallel_io() {
    let doc = xml(
        "-c8M -B1M -rs30 -r8K -i8 -j100 t.dat",
        FixtureRun::default(),
    );
    let target = lines_between(&doc, "<Target>", "</Target>");
    let at = |tag: &str| {
        target
            .iter()
            .position(|l| l.starts_with(tag))
            .unwrap_or_else(|| panic!("no {tag} in {target:?}"))
    };
    assert_eq!(
        target[at("<BaseFileOffset>")],
        "<BaseFileOffset>1048576</BaseFileOffset>"
    );
    assert_eq!(target[at("<BurstSize>")], "<BurstSize>8</BurstSize>");
    assert_eq!(target[at("<ThinkTime>")], "<ThinkTime>100</ThinkTime>");
    assert_eq!(target[at("<RandomRatio>")], "<RandomRatio>30</RandomRatio>");
    assert!(at("<ParallelAsyncIO>") < at("<BurstSize>"));
    assert!(at("<BurstSize>") < at("<ThinkTime>") && at("<ThinkTime>") < at("<FileSize>"));
    assert_eq!(at("<Random>") + 1, at("<RandomRatio>"));
    let doc = xml("-c8M -p -o4 t.dat", FixtureRun::default());
    assert!(
        doc.contains("<ParallelAsyncIO>true</ParallelAsyncIO>"),
        "{doc}"
    );
    assert!(!doc.contains("<BurstSize>") && !doc.contains("<RandomRatio>"));
    let args = ["-c8M", "-B1M", "-rs30", "-r8K", "-i8", "-j100", "t.dat"];
    let text = crate::render_text(&fixture(&FixtureRun::default()), &parse(&args).unwrap());
    for line in [
        "\t\tthink time: 100ms\n",
        "\t\tburst size: 8\n",
        "\t\tusing mixed random/sequential I/O (30% random) (alignment/stride: 8KiB)\n",
        "\t\tbase file offset: 1MiB\n",
    ] {
        assert!(text.contains(line), "{line:?} not in\n{text}");
    }
    let text = crate::render_text(
        &fixture(&FixtureRun::default()),
        &parse(&["-c8M", "-p", "-o4", "t.dat"]).unwrap(),
    );
    assert!(text.contains("\t\tusing parallel async I/O\n"), "{text}");
}

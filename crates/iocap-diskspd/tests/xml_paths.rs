//! iocap's `-Rxml` output against DiskSpd's own (tests/fixtures/diskspd-2.2.0-read.xml, see
//! its README), read by one tiny reader: the elements scripts read are in both, at the same
//! paths and in the same order, and the only differences are the ones docs/diskspd.md lists.

use iocap_diskspd::{parse, render_xml, DiskspdRun};
use iocap_model::fixture::{run as fixture_run, FixtureRun};
use iocap_model::{RunResult, RwMode};
use std::collections::BTreeSet;

mod support;
use support::reader::{first_seen, paths, read, text, Element};

const DISKSPD_XML: &str = include_str!("fixtures/diskspd-2.2.0-read.xml");
const TARGET: &str = r"D:\diskspd\fixture.dat";

const ARGS: [&str; 8] = ["-b4K", "-r", "-Sh", "-L", "-c128M", "-d5", "-Rxml", TARGET];

/// iocap's XML for the fixture's command line, from a constructed read test like it, on a
/// host like the fixture's (two CPUs, one core).
fn iocap_xml() -> (DiskspdRun, RunResult, String) {
    let run = parse(&ARGS).unwrap();
    let result = support::build(&support::Detail {
        targets: vec![TARGET.into()],
        bs_bytes: 4096,
        rw: RwMode::RandRead,
        duration_s: 5,
        iops: 18_000.0,
        cores: 1,
        smt: 2,
        ..support::Detail::default()
    });
    let xml = render_xml(&result, &run);
    (run, result, xml)
}

/// The elements DiskSpd users' scripts read.
const READ_BY_SCRIPTS: [&str; 24] = [
    "Results/System/ComputerName",
    "Results/Profile/TimeSpans/TimeSpan/Duration",
    "Results/Profile/TimeSpans/TimeSpan/Targets/Target/Path",
    "Results/Profile/TimeSpans/TimeSpan/Targets/Target/BlockSize",
    "Results/Profile/TimeSpans/TimeSpan/Targets/Target/WriteRatio",
    "Results/TimeSpan/TestTimeSeconds",
    "Results/TimeSpan/ThreadCount",
    "Results/TimeSpan/ProcCount",
    "Results/TimeSpan/CpuUtilization/Average/UsagePercent",
    "Results/TimeSpan/Latency/AverageReadMilliseconds",
    "Results/TimeSpan/Latency/AverageTotalMilliseconds",
    "Results/TimeSpan/Latency/Bucket/Percentile",
    "Results/TimeSpan/Latency/Bucket/ReadMilliseconds",
    "Results/TimeSpan/Latency/Bucket/TotalMilliseconds",
    "Results/TimeSpan/Thread/Id",
    "Results/TimeSpan/Thread/Target/Path",
    "Results/TimeSpan/Thread/Target/BytesCount",
    "Results/TimeSpan/Thread/Target/IOCount",
    "Results/TimeSpan/Thread/Target/ReadBytes",
    "Results/TimeSpan/Thread/Target/ReadCount",
    "Results/TimeSpan/Thread/Target/WriteBytes",
    "Results/TimeSpan/Thread/Target/WriteCount",
    "Results/TimeSpan/Thread/Target/AverageReadLatencyMilliseconds",
    "Results/TimeSpan/Thread/Target/ReadLatencyStdev",
];

/// DiskSpd's elements iocap leaves out of a result saved before the engine kept every CPU's
/// time and the topology: it says so instead (`ProcessorTopology Heterogeneous="unknown"`).
const LEFT_OUT_OF_AN_OLDER_RESULT: [&str; 17] = [
    "Results/System/ProcessorTopology/Group",
    "Results/System/ProcessorTopology/Node",
    "Results/System/ProcessorTopology/Node/Group",
    "Results/System/ProcessorTopology/Socket",
    "Results/System/ProcessorTopology/Socket/Group",
    "Results/System/ProcessorTopology/Core",
    "Results/TimeSpan/CpuUtilization/CPU",
    "Results/TimeSpan/CpuUtilization/CPU/Socket",
    "Results/TimeSpan/CpuUtilization/CPU/Node",
    "Results/TimeSpan/CpuUtilization/CPU/Group",
    "Results/TimeSpan/CpuUtilization/CPU/Core",
    "Results/TimeSpan/CpuUtilization/CPU/EfficiencyClass",
    "Results/TimeSpan/CpuUtilization/CPU/Id",
    "Results/TimeSpan/CpuUtilization/CPU/UsagePercent",
    "Results/TimeSpan/CpuUtilization/CPU/UserPercent",
    "Results/TimeSpan/CpuUtilization/CPU/KernelPercent",
    "Results/TimeSpan/CpuUtilization/CPU/IdlePercent",
];

/// Elements iocap writes that this DiskSpd 2.2.0 output lacks: DiskSpd 2.2.0 leaves the total
/// latency out of a read test's `Thread/Target`; its current source writes it, as iocap does.
const ADDED: [&str; 2] = [
    "Results/TimeSpan/Thread/Target/AverageLatencyMilliseconds",
    "Results/TimeSpan/Thread/Target/LatencyStdev",
];

#[test]
fn diskspd_fixture_has_what_scripts_read() {
    let d = read(DISKSPD_XML);
    let have = paths(&d);
    for p in READ_BY_SCRIPTS {
        assert!(have.contains(p), "{p} not in the fixture");
    }
    assert_eq!(
        text(&d, "Results/TimeSpan/Latency/Bucket/Percentile").len(),
        108
    );
}

#[test]
fn iocap_writes_diskspd_paths_and_no_others() {
    let d = read(DISKSPD_XML);
    let (_, _, xml) = iocap_xml();
    let i = read(&xml);
    let (dp, ip) = (paths(&d), paths(&i));
    for p in READ_BY_SCRIPTS {
        assert!(ip.contains(p), "{p} missing from iocap's XML");
    }
    let added: BTreeSet<&str> = ip.difference(&dp).copied().collect();
    assert_eq!(
        added,
        ADDED.into_iter().collect(),
        "iocap adds other elements than documented"
    );
    let missing: BTreeSet<&str> = dp.difference(&ip).copied().collect();
    assert_eq!(
        missing,
        BTreeSet::new(),
        "iocap leaves out DiskSpd's elements"
    );
}

#[test]
fn an_older_result_leaves_out_only_what_it_lacks() {
    let d = read(DISKSPD_XML);
    let result = fixture_run(&FixtureRun {
        targets: vec![TARGET.into()],
        bs_bytes: 4096,
        duration_s: 5,
        ..FixtureRun::default()
    });
    let i = read(&render_xml(&result, &parse(&ARGS).unwrap()));
    let (dp, ip) = (paths(&d), paths(&i));
    let missing: BTreeSet<&str> = dp.difference(&ip).copied().collect();
    let left_out: BTreeSet<&str> = LEFT_OUT_OF_AN_OLDER_RESULT.into_iter().collect();
    assert_eq!(missing, left_out);
    let topology = i
        .iter()
        .find(|e| e.path == "Results/System/ProcessorTopology");
    assert_eq!(
        topology.unwrap().attrs,
        [("Heterogeneous".to_string(), "unknown".to_string())]
    );
}

#[test]
fn elements_come_in_diskspd_order() {
    let d = read(DISKSPD_XML);
    let (_, _, xml) = iocap_xml();
    let i = read(&xml);
    let (dp, ip) = (paths(&d), paths(&i));
    let d_order: Vec<&str> = first_seen(&d)
        .into_iter()
        .filter(|p| ip.contains(p))
        .collect();
    let i_order: Vec<&str> = first_seen(&i)
        .into_iter()
        .filter(|p| dp.contains(p))
        .collect();
    assert_eq!(d_order, i_order);
}

#[test]
fn profile_says_what_diskspd_says_for_the_same_command_line() {
    let d = read(DISKSPD_XML);
    let (_, _, xml) = iocap_xml();
    let i = read(&xml);
    let profile = |els: &[Element]| -> Vec<(String, String)> {
        els.iter()
            .filter(|e| e.path.starts_with("Results/Profile"))
            .map(|e| (e.path.clone(), e.text.clone()))
            .collect()
    };
    assert_eq!(profile(&i), profile(&d));
}

#[test]
fn latency_buckets_match_and_rise() {
    let d = read(DISKSPD_XML);
    let (_, result, xml) = iocap_xml();
    let i = read(&xml);
    let pct = "Results/TimeSpan/Latency/Bucket/Percentile";
    assert_eq!(text(&i, pct), text(&d, pct));
    let ms = |path| -> Vec<f64> { text(&i, path).iter().map(|v| v.parse().unwrap()).collect() };
    let (read_ms, total_ms) = (
        ms("Results/TimeSpan/Latency/Bucket/ReadMilliseconds"),
        ms("Results/TimeSpan/Latency/Bucket/TotalMilliseconds"),
    );
    assert_eq!(read_ms.len(), 108);
    assert_eq!(read_ms, total_ms, "a read test");
    assert!(read_ms.windows(2).all(|w| w[0] <= w[1]), "{read_ms:?}");
    let lat = result.tests[0].total.lat_us.clone().unwrap();
    assert_eq!(read_ms[0], (lat.min / 1000.0 * 1000.0).round() / 1000.0);
    assert_eq!(read_ms[107], (lat.max / 1000.0 * 1000.0).round() / 1000.0);
    assert!(text(&i, "Results/TimeSpan/Latency/Bucket/WriteMilliseconds").is_empty());
}

#[test]
fn a_script_adds_up_the_threads() {
    let args = [
        "-b8K", "-t4", "-r", "-w30", "-L", "-D", "-Rxml", "/a.dat", "/b.dat",
    ];
    let run = parse(&args).unwrap();
    let mut result = fixture_run(&FixtureRun {
        targets: vec!["/a.dat".into(), "/b.dat".into()],
        rw: RwMode::RandRw,
        ..FixtureRun::default()
    });
    let test = &mut result.tests[0];
    for (t, share) in test.targets.iter_mut().zip([0.6, 0.4]) {
        t.threads = 4;
        t.read.ios = (test.read.ios as f64 * share).round() as u64;
        t.write.ios = t.total.ios - t.read.ios;
        t.read.bytes = t.read.ios * 8192;
        t.write.bytes = t.write.ios * 8192;
    }
    let i = read(&render_xml(&result, &run));
    let sum = |leaf: &str| -> u64 {
        let path = format!("Results/TimeSpan/Thread/Target/{leaf}");
        text(&i, &path)
            .iter()
            .map(|v| v.parse::<u64>().unwrap())
            .sum()
    };
    let t = &result.tests[0];
    assert_eq!(sum("BytesCount"), t.total.bytes);
    assert_eq!(sum("ReadBytes") + sum("WriteBytes"), t.total.bytes);
    assert_eq!(sum("IOCount"), sum("ReadCount") + sum("WriteCount"));
    assert_eq!(text(&i, "Results/TimeSpan/ThreadCount"), ["8"]);
    assert_eq!(text(&i, "Results/TimeSpan/Thread/Id"), ["0", "4"]);
    assert_eq!(text(&i, "Results/TimeSpan/TestTimeSeconds"), ["10.00"]);
    let buckets: Vec<&Element> = i
        .iter()
        .filter(|e| e.path == "Results/TimeSpan/Iops/Bucket")
        .collect();
    assert_eq!(buckets.len(), 10, "one a second");
    assert_eq!(
        buckets[0].attrs[0],
        ("SampleMillisecond".into(), "1000".into())
    );
    assert_eq!(text(&i, "Results/TimeSpan/Iops/IopsStdDev").len(), 1);
}

#[test]
fn paths_and_notes_survive_escaping() {
    let path = r#"/tmp/a<b>&"c'd--e.dat"#;
    let run = parse(&["-w10", "-Rxml", path]).unwrap();
    assert!(!run.notes.is_empty(), "a write test has a note on its data");
    let mut result = fixture_run(&FixtureRun {
        targets: vec![path.into()],
        ..FixtureRun::default()
    });
    result.host.hostname = "db<1>".into();
    result.tests[0].warnings.push("a -- b".into());
    let i = read(&render_xml(&result, &run));
    assert_eq!(text(&i, "Results/TimeSpan/Thread/Target/Path"), [path]);
    assert_eq!(
        text(&i, "Results/Profile/TimeSpans/TimeSpan/Targets/Target/Path"),
        [path]
    );
    assert_eq!(text(&i, "Results/System/ComputerName"), ["db<1>"]);
}

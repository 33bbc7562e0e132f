//! The Markdown, multi-run CSV and comparison views of constructed runs, snapshot-tested: a
//! change in what users paste into tickets or read in a terminal shows up as a reviewed diff.

use iocap_model::fixture::{self, FixtureRun};
use iocap_model::*;
use iocap_report::{compare, csv, markdown};

fn first() -> RunResult {
    let mut r = fixture::run(&FixtureRun {
        label: Some("san-a raid10 | before\nfirmware".into()),
        tags: vec!["san-a".into(), "raid10".into()],
        note: Some("LUN 7 | 2 paths\nmultipath on".into()),
        ..FixtureRun::default()
    });
    r.tests[0]
        .warnings
        .push("target /data/iocap.testfile is on a | weird * path".into());
    r
}

fn second() -> RunResult {
    fixture::run(&FixtureRun {
        hostname: "db02".into(),
        kernel: "6.8.0-45-generic".into(),
        targets: vec!["/data/a.dat".into(), "/log/b|1.dat".into()],
        started_unix_s: FixtureRun::default().started_unix_s + 3600,
        p50_us: 260.0,
        iops: 15_000.0,
        rw: RwMode::RandRw,
        label: Some("after".into()),
        salt: 7,
        ..FixtureRun::default()
    })
}

#[test]
fn markdown_of_two_runs() {
    let md = markdown::render(&[first(), second()]);
    // A hostile label cannot break the heading or a table.
    for line in md.lines().filter(|l| l.starts_with('|')) {
        assert!(line.ends_with('|'), "{line}");
    }
    assert!(md.contains("san-a raid10 \\| before firmware"));
    assert!(md.contains("| /log/b\\|1.dat |"));
    insta::assert_snapshot!(md);
}

#[test]
fn csv_of_two_runs() {
    let s = csv::render_many(&[first(), second()]);
    assert_eq!(s.lines().filter(|l| l.starts_with("run_id,")).count(), 1);
    insta::assert_snapshot!(s);
}

#[test]
fn csv_of_one_run_is_unchanged() {
    for r in [first(), second()] {
        assert_eq!(csv::render_many(std::slice::from_ref(&r)), csv::render(&r));
    }
    assert_eq!(csv::render_many(&[]).lines().count(), 1);
}

#[test]
fn comparison_text() {
    // At most 20,000 IOPS, where the fixture's IOPS are exact.
    let base = fixture::run(&FixtureRun {
        label: Some("before firmware".into()),
        iops: 20_000.0,
        ..FixtureRun::default()
    });
    let mut slower = fixture::run(&FixtureRun {
        kernel: "6.8.0-45-generic".into(),
        started_unix_s: FixtureRun::default().started_unix_s + 86_400,
        p50_us: 250.0,
        iops: 15_500.0,
        label: Some("after firmware".into()),
        salt: 3,
        ..FixtureRun::default()
    });
    slower.tests[0].spec.qd = 32;
    let same = fixture::run(&FixtureRun {
        salt: 4,
        iops: 19_700.0,
        ..FixtureRun::default()
    });
    let c = compare::compare(
        &base,
        &[slower, same],
        &iocap_assess::compare::Thresholds::default(),
    );
    insta::assert_snapshot!(compare::render_text(&c));
}

#[test]
fn markdown_of_odd_runs_stays_well_formed() {
    let mut zero = fixture::run(&FixtureRun {
        iops: 0.0,
        targets: vec!["/a".into(), "/b".into()],
        ..FixtureRun::default()
    });
    zero.tests[0].interrupted = true;
    let md = markdown::render(&[zero]);
    assert!(!md.contains("NaN"), "{md}");
    assert!(
        !md.contains("Latency:"),
        "no latency table without latencies: {md}"
    );
    assert!(
        md.contains("| /a | nvme0n1p2 (xfs) | 0 | 0.0 | – | – | – |"),
        "{md}"
    );
    assert!(markdown::render(&[]).contains("No runs."));
}

/// Splits CSV text into records and fields as RFC 4180 reads them (quoted fields may hold
/// commas, doubled quotes and line breaks).
fn parse_csv(s: &str) -> Vec<Vec<String>> {
    let (mut recs, mut rec, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = s.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => rec.push(std::mem::take(&mut field)),
            (false, '\n') => {
                rec.push(std::mem::take(&mut field));
                recs.push(std::mem::take(&mut rec));
            }
            (false, c) => field.push(c),
        }
    }
    recs
}

#[test]
fn csv_has_the_run_and_workload_columns_and_quotes_a_hostile_label() {
    let label = "raid10, \"tuned\"\nafter";
    let r = fixture::run(&FixtureRun {
        label: Some(label.into()),
        targets: vec!["/data/a,1.dat".into(), "/log/b.dat".into()],
        rw: RwMode::RandWrite,
        bs_bytes: 16384,
        ..FixtureRun::default()
    });
    let recs = parse_csv(&csv::render(&r));
    let head = &recs[0];
    // the first columns as before, so scripts reading by position keep working
    assert_eq!(&head[..4], ["run_id", "test", "scope", "target"]);
    assert_eq!(head[19], "lat_us_max");
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let total = &recs[1];
    assert_eq!(total.len(), head.len(), "{total:?}");
    assert_eq!(total[col("scope")], "total");
    assert_eq!(total[col("label")], label, "the label comes back whole");
    assert_eq!(total[col("started_at")], r.started_at);
    assert_eq!(total[col("rw")], "randwrite");
    assert_eq!(total[col("bs_bytes")], "16384");
    assert_eq!(total[col("qd")], r.tests[0].spec.qd.to_string());
    assert_eq!(total[col("threads")], r.tests[0].spec.threads.to_string());
    assert_eq!(total[col("targets")], "/data/a,1.dat;/log/b.dat");
    assert!(recs.iter().all(|rec| rec.len() == head.len()));
}

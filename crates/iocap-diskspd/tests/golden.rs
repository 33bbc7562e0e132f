//! The whole `-Rtext` and `-Rxml` output for constructed results, pinned as insta snapshots
//! (tests/snapshots/): scripts read DiskSpd's output by position and by path, so any change to
//! a space, a column or an element shows up here as a diff to review, not in a user's parser.
//! The results are iocap_model::fixture's: fixed host name, start time, version and figures, so
//! the output does not depend on the machine or the clock.

use iocap_diskspd::{parse, render_text, render_xml, DiskspdRun};
use iocap_model::fixture::{run as fixture, FixtureRun};
use iocap_model::{RunResult, RwMode};

fn diskspd(line: &str) -> DiskspdRun {
    let args: Vec<&str> = line.split_whitespace().collect();
    parse(&args).unwrap()
}

/// A random 8 KiB test, 30% writes, on two targets, with its per-second series.
fn mixed() -> RunResult {
    fixture(&FixtureRun {
        targets: vec!["/data/t1.dat".into(), "/data/t2.dat".into()],
        rw: RwMode::RandRw,
        duration_s: 5,
        ..FixtureRun::default()
    })
}

/// A sequential 64 KiB read of one target.
fn sequential_read() -> RunResult {
    fixture(&FixtureRun {
        targets: vec!["/data/seq.dat".into()],
        rw: RwMode::Read,
        bs_bytes: 64 << 10,
        iops: 5_000.0,
        duration_s: 3,
        ..FixtureRun::default()
    })
}

const MIXED: &str = "-b8K -d5 -W0 -o8 -t1 -r -w30 -Sh -L -D -z7 -c1G";
const TWO_TARGETS: &str = "/data/t1.dat /data/t2.dat";

#[test]
fn text_of_a_mixed_random_test_with_latency_and_iops_deviation() {
    let line = format!("{MIXED} {TWO_TARGETS}");
    insta::assert_snapshot!(render_text(&mixed(), &diskspd(&line)));
}

#[test]
fn xml_of_a_mixed_random_test_with_latency_and_iops_deviation() {
    let line = format!("{MIXED} -Rxml {TWO_TARGETS}");
    insta::assert_snapshot!(render_xml(&mixed(), &diskspd(&line)));
}

#[test]
fn text_of_a_sequential_read_without_latency() {
    let run = diskspd("-b64K -d3 -o2 -t1 -s -Su /data/seq.dat");
    insta::assert_snapshot!(render_text(&sequential_read(), &run));
}

#[test]
fn xml_of_a_sequential_read_with_iops_per_interval() {
    let run = diskspd("-b64K -d3 -o2 -t1 -s -Su -D -Rxml /data/seq.dat");
    insta::assert_snapshot!(render_xml(&sequential_read(), &run));
}

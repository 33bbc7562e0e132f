use crate::tests::{pt, test};
use crate::*;
use iocap_model::{
    CapacityRow, IoFault, RwMode, ScaleUp, SecondSample, TestResult, Verdict, VolumeAlone,
};

const GIB: u64 = 1 << 30;

/// One test per row kind, all healthy flash figures: every row passes or is INFO.
struct Tests {
    read: TestResult,
    write: TestResult,
    temp: TestResult,
    log: TestResult,
    scan: TestResult,
    backup: TestResult,
}

fn healthy() -> Tests {
    Tests {
        read: test(RwMode::RandRead, 40_000.0, 8192, 300.0, 1500.0),
        write: test(RwMode::RandWrite, 20_000.0, 8192, 300.0, 1500.0),
        temp: test(RwMode::RandRw, 10_000.0, 65536, 300.0, 1500.0),
        log: test(RwMode::Write, 3_000.0, 4096, 100.0, 400.0),
        scan: test(RwMode::Read, 2_000.0, 1 << 20, 2000.0, 8000.0),
        backup: test(RwMode::Read, 1_000.0, 1 << 20, 2000.0, 8000.0),
    }
}

fn input<'a>(t: &'a Tests, g: &'a Guidelines) -> PreflightInput<'a> {
    let m = |test: &'a TestResult, test_idx| Some(Measured { test, test_idx });
    PreflightInput {
        data_read: m(&t.read, 0),
        data_write: m(&t.write, 1),
        temp: m(&t.temp, 2),
        log_write_qd1: m(&t.log, 3),
        scan: m(&t.scan, 4),
        backup: m(&t.backup, 5),
        ram_bytes: 128 * GIB,
        cpus: 32,
        ..PreflightInput::new("postgres", g)
    }
}

fn row(p: &iocap_model::Preflight, kind: RowKind) -> CapacityRow {
    let i = RowKind::ALL.iter().position(|k| *k == kind).unwrap();
    p.rows[i].clone()
}

fn verdicts(p: &iocap_model::Preflight) -> Vec<Verdict> {
    p.rows.iter().map(|r| r.verdict).collect()
}

#[test]
fn healthy_flash_passes_and_informs() {
    let t = healthy();
    let g = Guidelines::default();
    let p = capacity_table(&input(&t, &g));
    use Verdict::*;
    assert_eq!(
        verdicts(&p),
        [Pass, Pass, Pass, Pass, Pass, Info, Info, Info]
    );
    assert_eq!(p.device_class, "flash");
    assert_eq!(p.warnings, Vec::<String>::new());
    let r = row(&p, RowKind::RandomRead);
    assert_eq!(r.metric, "8K random read IOPS at p99 <= 2 ms");
    assert_eq!(r.value, Some(40_000.0));
    assert_eq!(r.unit, "IOPS");
    let r = row(&p, RowKind::LogP99);
    assert_eq!(r.value, Some(400.0));
    assert_eq!(
        r.sentence,
        "Log writes take 0.4 ms at p99: commits will not wait on the log."
    );
    assert_eq!(r.test_idx, [3]);
    assert!(row(&p, RowKind::Scan)
        .sentence
        .starts_with("Scans read 2,097 MB/s, a terabyte in about 8 minutes"));
}

/// For each row kind, a change to the healthy tests that gives each verdict.
#[test]
fn every_verdict_is_reachable_for_every_row_kind() {
    use Verdict::*;
    let g = Guidelines::default();
    let exp_high = Expectations::from_toml(
        "random_read_8k_iops = 1e6\nrandom_write_8k_iops = 1e6\nsequential_mb_s = 1e5\nlog_mb_s = 1e5",
    )
    .unwrap();
    let exp_low = Expectations::from_toml(
        "random_read_8k_iops = 1000\nrandom_write_8k_iops = 1000\nsequential_mb_s = 10\nlog_mb_s = 1",
    )
    .unwrap();
    let set_lat = |t: &mut TestResult, p50: f64, p99: f64| {
        for ops in [&mut t.total, &mut t.read, &mut t.write] {
            if let Some(l) = ops.lat_us.as_mut() {
                l.p50 = p50;
                l.p99 = p99;
            }
        }
    };
    type Case = (RowKind, Verdict, fn(&mut Tests), Option<bool>);
    // (kind, verdict, change, expectations: None none, Some(true) high, Some(false) low)
    let cases: Vec<Case> = vec![
        (RowKind::RandomRead, Pass, |_| {}, Some(false)),
        (RowKind::RandomRead, Warn, |_| {}, Some(true)),
        (
            RowKind::RandomRead,
            Fail,
            |t| t.read.error = Some(fault()),
            None,
        ),
        (
            RowKind::RandomRead,
            Info,
            |t| big_buffered(&mut t.read),
            None,
        ),
        (RowKind::RandomWrite, Pass, |_| {}, Some(false)),
        (RowKind::RandomWrite, Warn, |_| {}, Some(true)),
        (RowKind::RandomWrite, Fail, |t| t.write.total.ios = 0, None),
        (
            RowKind::RandomWrite,
            Info,
            |t| big_buffered(&mut t.write),
            None,
        ),
        (RowKind::Temp, Pass, |_| {}, None),
        (RowKind::Temp, Info, |t| big_buffered(&mut t.temp), None),
        (RowKind::LogP50, Pass, |_| {}, None),
        (
            RowKind::LogP50,
            Info,
            |t| t.log.spec.write_through = false,
            None,
        ),
        (RowKind::LogP99, Pass, |_| {}, None),
        (RowKind::LogP99, Fail, |t| t.log.error = Some(fault()), None),
        (
            RowKind::LogP99,
            Info,
            |t| t.log.spec.write_through = false,
            None,
        ),
        (RowKind::LogMbS, Pass, |_| {}, Some(false)),
        (RowKind::LogMbS, Warn, |_| {}, Some(true)),
        (RowKind::LogMbS, Fail, |t| t.log.total.iops = 0.0, None),
        (RowKind::LogMbS, Info, |_| {}, None),
        (RowKind::Scan, Pass, |_| {}, Some(false)),
        (RowKind::Scan, Warn, |_| {}, Some(true)),
        (RowKind::Scan, Fail, |t| t.scan.error = Some(fault()), None),
        (RowKind::Scan, Info, |_| {}, None),
        (RowKind::Backup, Pass, |_| {}, Some(false)),
        (RowKind::Backup, Warn, |_| {}, Some(true)),
        (RowKind::Backup, Fail, |t| t.backup.total.ios = 0, None),
        (RowKind::Backup, Info, |_| {}, None),
    ];
    // latency-driven cases
    let lat_cases: Vec<(RowKind, Verdict, f64, f64)> = vec![
        (RowKind::RandomRead, Warn, 1000.0, 5000.0),
        (RowKind::RandomRead, Fail, 3000.0, 20_000.0),
        (RowKind::RandomWrite, Warn, 1000.0, 5000.0),
        (RowKind::RandomWrite, Fail, 3000.0, 20_000.0),
        (RowKind::Temp, Warn, 1000.0, 5000.0),
        (RowKind::Temp, Fail, 3000.0, 20_000.0),
        (RowKind::LogP50, Warn, 1000.0, 1500.0),
        (RowKind::LogP50, Fail, 3000.0, 4000.0),
        (RowKind::LogP99, Warn, 300.0, 3000.0),
        (RowKind::LogP99, Fail, 300.0, 8000.0),
    ];
    for (kind, want, change, exp) in cases {
        let mut t = healthy();
        change(&mut t);
        let mut i = input(&t, &g);
        i.expectations = exp.map(|h| if h { &exp_high } else { &exp_low });
        let r = row(&capacity_table(&i), kind);
        assert_eq!(r.verdict, want, "{kind:?}: {}", r.sentence);
        assert!(r.sentence.ends_with('.') && !r.sentence.is_empty());
    }
    for (kind, want, p50, p99) in lat_cases {
        let mut t = healthy();
        let test = match kind {
            RowKind::RandomRead => &mut t.read,
            RowKind::RandomWrite => &mut t.write,
            RowKind::Temp => &mut t.temp,
            _ => &mut t.log,
        };
        set_lat(test, p50, p99);
        let i = input(&t, &g);
        let r = row(&capacity_table(&i), kind);
        assert_eq!(r.verdict, want, "{kind:?} {p50}/{p99}: {}", r.sentence);
    }
    // temp and log latency have no expectation: their WARN and FAIL come from latency; the
    // temp FAIL also comes from a broken test
    let mut t = healthy();
    t.temp.error = Some(fault());
    assert_eq!(
        row(&capacity_table(&input(&t, &g)), RowKind::Temp).verdict,
        Fail
    );
}

#[test]
fn sentences_say_what_it_means() {
    let g = Guidelines::default();
    let mut t = healthy();
    for ops in [&mut t.log.total, &mut t.log.write] {
        ops.lat_us.as_mut().unwrap().p99 = 12_000.0;
    }
    let p = capacity_table(&input(&t, &g));
    assert_eq!(
        row(&p, RowKind::LogP99).sentence,
        "Log writes take 12 ms at p99, above the 5 ms limit for flash: some commits wait this long; check the write cache mode and whether the log shares a volume with data."
    );
    // the same on rotational storage is only a WARN
    let mut i = input(&t, &g);
    i.classes.log = DeviceClass::Rotational;
    let p = capacity_table(&i);
    assert_eq!(row(&p, RowKind::LogP99).verdict, Verdict::Warn);
    assert_eq!(
        p.device_class,
        "data flash, log rotational, temp flash, backup flash"
    );
}

#[test]
fn read_capacity_comes_from_the_curve() {
    let g = Guidelines::default();
    let t = healthy();
    let steps = [
        pt(1, 10_000.0, 300.0),
        pt(4, 36_000.0, 900.0),
        pt(16, 60_000.0, 1900.0),
        pt(64, 61_000.0, 6000.0),
    ];
    let sat = summarize(&steps, &[], &SaturateConfig::default());
    let mut i = input(&t, &g);
    i.data_read_curve = Some(&sat);
    let r = row(&capacity_table(&i), RowKind::RandomRead);
    assert_eq!(
        (r.verdict, r.value, r.test_idx.clone()),
        (Verdict::Pass, Some(60_000.0), vec![16])
    );
    // nothing under 2 ms: WARN with the best under the 10 ms limit in words, no value
    let slow = [
        pt(1, 5_000.0, 3000.0),
        pt(2, 9_000.0, 6000.0),
        pt(4, 9_500.0, 12_000.0),
    ];
    let sat = summarize(&slow, &[], &SaturateConfig::default());
    i.data_read_curve = Some(&sat);
    let r = row(&capacity_table(&i), RowKind::RandomRead);
    assert_eq!((r.verdict, r.value), (Verdict::Warn, None));
    assert!(
        r.sentence.contains("the most was 9,000 IOPS at 6 ms"),
        "{}",
        r.sentence
    );
    // an empty curve fails, it does not panic
    let empty = summarize(&[], &[], &SaturateConfig::default());
    i.data_read_curve = Some(&empty);
    assert_eq!(
        row(&capacity_table(&i), RowKind::RandomRead).verdict,
        Verdict::Fail
    );
}

/// Buffered, with a file larger than the RAM: no cache evidence, but not the device's latency.
fn big_buffered(t: &mut TestResult) {
    t.direct = false;
    t.targets[0].size_bytes = 300 * GIB;
}

fn fault() -> IoFault {
    IoFault {
        op: iocap_model::FaultOp::Read,
        path: "/data/iocap.testfile".into(),
        offset_bytes: 8192,
        len_bytes: 8192,
        errno: 5,
        message: "Input/output error".into(),
    }
}

fn causes(p: &iocap_model::Preflight, metric_start: &str) -> Vec<String> {
    p.warnings
        .iter()
        .filter(|w| w.starts_with(metric_start))
        .cloned()
        .collect()
}

#[test]
fn every_likely_cause_is_reachable() {
    let g = Guidelines::default();
    let high = Expectations::from_toml("random_read_8k_iops = 1e6\nsequential_mb_s = 1e5").unwrap();
    let has = |p: &iocap_model::Preflight, what: &str| {
        assert!(
            p.warnings.iter().any(|w| w.contains(what)),
            "{what:?} not in {:#?}",
            p.warnings
        )
    };

    // page cache: the file fits in RAM and the test ran buffered
    let t = healthy();
    let mut i = input(&t, &g);
    i.buffered = true;
    i.ram_bytes = 2 * GIB;
    let p = capacity_table(&i);
    assert_eq!(row(&p, RowKind::RandomRead).verdict, Verdict::Warn);
    has(
        &p,
        "8K random read IOPS at p99 <= 2 ms: The test files (1 GiB) fit in the 2 GiB of RAM",
    );

    // the --cache-size cache
    let mut i = input(&t, &g);
    i.cache_size_bytes = Some(4 * GIB);
    let p = capacity_table(&i);
    has(&p, "fit in the 4 GiB cache given with --cache-size");
    assert_eq!(row(&p, RowKind::Scan).verdict, Verdict::Warn);

    // implausibly fast for the device class, buffered
    let mut t2 = healthy();
    t2.read = test(RwMode::RandRead, 2_000_000.0, 8192, 30.0, 100.0);
    t2.read.direct = false;
    let mut i = input(&t2, &g);
    i.ram_bytes = 0;
    has(
        &capacity_table(&i),
        "2,000,000 IOPS is more than a flash device delivers",
    );

    // more than the links carry
    let links = Expectations::from_toml("links = \"1 x 2Gb FC\"").unwrap();
    let mut i = input(&t, &g);
    i.expectations = Some(&links);
    let p = capacity_table(&i);
    has(
        &p,
        "scan read MB/s: 2,097 MB/s is more than the 1 x 2Gb FC links carry (200 MB/s)",
    );

    // CPU-bound
    let mut t3 = healthy();
    t3.read.cpu.us_per_io = 100.0; // 100 us x 40,000 IOPS = 4 CPUs
    let mut i = input(&t3, &g);
    i.cpus = 4;
    i.expectations = Some(&high);
    has(&capacity_table(&i), "The process kept 4.0 of 4 CPUs busy");

    // queue depth too low: achieved qd and a curve still rising
    let mut t4 = healthy();
    t4.read.qd_mean = 2.0;
    let mut i = input(&t4, &g);
    i.expectations = Some(&high);
    has(
        &capacity_table(&i),
        "Only 2.0 I/Os were in flight on average, and flash storage usually needs 32",
    );
    let rising = [
        pt(1, 10_000.0, 100.0),
        pt(2, 20_000.0, 110.0),
        pt(4, 40_000.0, 120.0),
    ];
    let sat = summarize(
        &rising,
        &[],
        &SaturateConfig {
            max_qd: 4,
            ..SaturateConfig::default()
        },
    );
    i.data_read_curve = Some(&sat);
    has(
        &capacity_table(&i),
        "Throughput still rose 100 % at the last step (qd 4)",
    );

    // one slow volume
    let s = ScaleUp {
        alone: vec![VolumeAlone {
            path: "/data2".into(),
            test_idx: 9,
            iops: 21_000.0,
            mb_s: 172.0,
            lat_us_p99: None,
            slow: true,
        }],
        together: vec![],
    };
    let mut t5 = healthy();
    t5.read.qd_mean = 64.0;
    let mut i = input(&t5, &g);
    i.expectations = Some(&high);
    i.scaleup = Some(&s);
    has(
        &capacity_table(&i),
        "Volume /data2 does 21,000 IOPS (172 MB/s) alone, more than 20 % below its peers",
    );

    // no evidence at all
    i.scaleup = None;
    let p = capacity_table(&i);
    assert_eq!(
        causes(&p, "8K random read"),
        ["8K random read IOPS at p99 <= 2 ms: Nothing in this run explains the shortfall: compare the array's own counters, the multipath policy and the link speeds with the vendor's configuration."]
    );
    // likely_causes reports the same evidence directly
    assert!(likely_causes(&i, RowKind::RandomRead).is_empty());
}

#[test]
fn every_warning_is_reachable() {
    let g = Guidelines::default();
    let has = |w: &[String], what: &str| {
        assert!(w.iter().any(|x| x.contains(what)), "{what:?} not in {w:#?}")
    };
    let mut t = healthy();
    // buffered with a file under twice the RAM
    let mut i = input(&t, &g);
    i.buffered = true;
    has(&warnings(&i), "The test file /data/iocap.testfile (1 GiB) is smaller than twice the 128 GiB of RAM and the tests ran buffered");
    // a file under twice the cache
    let mut i = input(&t, &g);
    i.cache_size_bytes = Some(GIB);
    has(&warnings(&i), "is smaller than twice the 1 GiB cache");
    // too short, except in quick mode
    t.scan.duration_s = 10.0;
    let mut i = input(&t, &g);
    has(
        &warnings(&i),
        "The scan test ran 10 s, less than the 30 s a steady state needs",
    );
    i.quick = true;
    assert!(warnings(&i).is_empty());
    // still trending
    t.scan.per_second = (1..=9)
        .map(|s| SecondSample {
            t_s: f64::from(s),
            iops: 1000.0 * f64::from(s),
            mb_s: 0.0,
            lat_us_mean: None,
            lat_us_p99: None,
            submit_each_pct: None,
            read: None,
            write: None,
        })
        .collect();
    let i = PreflightInput {
        quick: true,
        ..input(&t, &g)
    };
    assert_eq!(
        warnings(&i),
        ["The scan test's IOPS were still rising (the last third up 60 % from the middle third): the storage had not settled; run it longer."]
    );
    // each warning once, and the healthy run has none
    let h = healthy();
    let i = PreflightInput {
        buffered: true,
        ..input(&h, &g)
    };
    assert_eq!(warnings(&i).len(), 1);
}

#[test]
fn odd_input_gives_answers_not_panics() {
    let g = Guidelines::default();
    let mut t = healthy();
    for x in [
        &mut t.read,
        &mut t.write,
        &mut t.temp,
        &mut t.log,
        &mut t.scan,
        &mut t.backup,
    ] {
        x.total.iops = f64::NAN;
        x.total.mb_s = f64::NAN;
        x.total.lat_us = None;
        x.read.lat_us = None;
        x.write.lat_us = None;
        x.duration_s = 0.0;
        x.per_second.clear();
        x.targets.clear();
        x.cpu.us_per_io = f64::NAN;
    }
    let p = capacity_table(&input(&t, &g));
    assert!(
        p.rows.iter().all(|r| r.verdict == Verdict::Fail),
        "{:#?}",
        p.rows
    );
    // no tests at all: no rows
    let p = capacity_table(&PreflightInput::new("mysql", &g));
    assert!(p.rows.is_empty() && p.warnings.is_empty());
    // lat missing but I/O done: INFO for the log rows
    let mut t = healthy();
    t.log.total.lat_us = None;
    t.log.write.lat_us = None;
    let p = capacity_table(&input(&t, &g));
    assert_eq!(row(&p, RowKind::LogP99).verdict, Verdict::Info);
}

/// Issue 18: a rotational data volume whose O_DIRECT page reads and scan run far beyond what
/// spinning disks deliver is warned about, and the class disagreement the CLI found is shown.
#[test]
fn figures_beyond_the_class_are_warned_about_with_o_direct_too() {
    let g = Guidelines::default();
    let t = healthy();
    let mut i = input(&t, &g);
    i.classes = RoleClasses::all(DeviceClass::Rotational);
    i.class_notes = vec!["Device class: the kernel says vda is rotational; ...".into()];
    let p = capacity_table(&i);
    assert!(t.read.direct && t.scan.direct);
    assert!(p.warnings.contains(&i.class_notes[0]), "{:?}", p.warnings);
    let beyond: Vec<&String> = p
        .warnings
        .iter()
        .filter(|w| w.contains("spinning disk"))
        .collect();
    assert_eq!(beyond.len(), 2, "page reads and scan: {:?}", p.warnings);
    assert!(beyond[0].starts_with("40,000 random IOPS is more than a spinning disk delivers"));
    assert!(beyond[1].contains("sequential MB/s"));
    // on flash the same figures are plausible
    let i = input(&t, &g);
    let p = capacity_table(&i);
    assert!(!p.warnings.iter().any(|w| w.contains("spinning disk")));
}

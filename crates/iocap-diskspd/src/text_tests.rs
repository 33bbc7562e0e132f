//! DiskSpd's text layout from constructed results (iocap_model::fixture).

use super::*;
use crate::parse;
use iocap_model::fixture::{run as fixture, FixtureRun};
use iocap_model::{OpStats, RwMode, SecondSample};

fn diskspd(line: &str) -> DiskspdRun {
    let args: Vec<&str> = line.split_whitespace().collect();
    parse(&args).unwrap()
}

fn read_test(targets: &[&str]) -> RunResult {
    fixture(&FixtureRun {
        targets: targets.iter().map(|t| t.to_string()).collect(),
        ..FixtureRun::default()
    })
}

/// The lines after the line `title` (and the blank lines after it), up to the next blank line.
fn block<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    let lines = text.lines().skip_while(|l| *l != title).skip(1);
    let block: Vec<&str> = lines
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(!block.is_empty(), "no {title:?} in\n{text}");
    block
}

/// The cells of a table row between `|`, trimmed; `total:` counts as the thread column.
fn cells(row: &str) -> Vec<String> {
    let row = row.replacen("total:", "total |", 1);
    row.split('|').map(|c| c.trim().to_string()).collect()
}

#[test]
fn header_and_input_parameters() {
    let run = diskspd(r"-b8K -d60 -o8 -t4 -h -r -w30 -L -Z1M -c10G -W5 -C5 E:\t.dat");
    let text = render_text(&read_test(&[r"E:\t.dat"]), &run);
    let head: Vec<&str> = text.lines().take(5).collect();
    assert_eq!(
        head,
        [
            "",
            r"Command Line: diskspd -b8K -d60 -o8 -t4 -h -r -w30 -L -Z1M -c10G -W5 -C5 E:\t.dat",
            "",
            "Input parameters:",
            "",
        ]
    );
    let params = block(&text, "Input parameters:");
    let expected = [
        "\ttimespan:   1",
        "\t-------------",
        "\tduration: 60s",
        "\twarm up time: 5s",
        "\tcool down time: 5s",
        "\tmeasuring latency",
        "\trandom seed: 0",
        "\tpath: 'E:\\t.dat'",
        "\t\tthink time: 0ms",
        "\t\tburst size: 0",
        "\t\tsoftware cache disabled",
        "\t\thardware write cache disabled, writethrough on",
        "\t\twrite buffer size: 1MiB",
        "\t\twrite buffer source: random fill",
        "\t\tperforming mix test (read/write ratio: 70/30)",
        "\t\tblock size: 8KiB",
        "\t\tusing random I/O (alignment: 8KiB)",
        "\t\tnumber of outstanding I/O operations per thread: 8",
        "\t\tthreads per file: 4",
        "\t\tusing I/O Completion Ports",
        "\t\tIO priority: normal",
    ];
    assert_eq!(params, expected);
    let system = block(&text, "System information:");
    assert_eq!(
        system,
        [
            "\tcomputer name: db01",
            "\tstart time: 2026/11/22 02:00:00 UTC"
        ]
    );
    assert!(text.contains("\n\tcpu count:\t\t32\n"), "{text}");
}

#[test]
fn input_parameters_of_other_options() {
    let run = diskspd("-F8 -O16 -s -Sw -Z -w100 -g500i -T1M -f4G -D250 -z7 -fst -a0,1 t.dat");
    let text = render_text(&read_test(&["t.dat"]), &run);
    let n = render_text(&read_test(&["t.dat"]), &diskspd("-n t.dat"));
    assert!(n.contains("\taffinity disabled\n"), "{n}");
    for line in [
        // -D250 asked; the buckets iocap has are a second long, and the text says so
        "\tgathering IOPS at intervals of 1000ms\n",
        "\trandom seed: 7\n",
        "\tthread pool with 8 threads\n",
        "\tnumber of outstanding I/O operations per thread: 16\n",
        "\tadvanced affinity round robin (group/core): 0/0, 0/1\n",
        "\t\tusing software cache\n",
        "\t\thardware and software write caches disabled, writethrough on\n",
        "\t\tzeroing write buffers\n",
        "\t\tperforming write test\n",
        "\t\tusing sequential I/O (stride: 64KiB)\n",
        "\t\trelative IO weight in thread pool: 1\n",
        "\t\tmax file size: 4GiB\n",
        "\t\tthread stride size: 1MiB\n",
        "\t\tusing FILE_FLAG_SEQUENTIAL_SCAN hint\n",
        "\t\tusing FILE_ATTRIBUTE_TEMPORARY hint\n",
        "\t\tthroughput rate-limited to 500 IOPS\n",
        "request count:\t\t16\n",
    ] {
        assert!(text.contains(line), "{line:?} missing from\n{text}");
    }
    assert!(
        !text.contains("threads per file"),
        "-F has no threads per file"
    );
    let si = render_text(&read_test(&["t.dat"]), &diskspd("-t2 -si -g100 t.dat"));
    assert!(
        si.contains("\t\tusing interlocked sequential I/O (stride: 64KiB)\n"),
        "{si}"
    );
    assert!(
        si.contains("\t\tthroughput rate-limited to 100 B/ms\n"),
        "{si}"
    );
}

#[test]
fn results_with_latency() {
    let run = diskspd("-b8K -r -L /data/iocap.testfile");
    let r = read_test(&["/data/iocap.testfile"]);
    let text = render_text(&r, &run);
    assert!(text.contains("\nResults for timespan 1:\n"));
    assert!(
        text.contains("\nactual test time:\t10.00s\nthread count:\t\t1\n"),
        "{text}"
    );
    // user 0.4 s + kernel 2.1 s over 10 s on 32 CPUs
    let cpu = block(&text, "CPU |  Usage |  User  | Kernel |  Idle");
    assert_eq!(
        cpu,
        [
            "-".repeat(40).as_str(),
            "avg.|   0.78%|   0.12%|   0.66%|  99.22%"
        ]
    );

    let total = block(&text, "Total IO");
    assert_eq!(
        total[0],
        "thread |       bytes     |     I/Os     |    MiB/s   |  I/O per s |  AvgLat  | LatStdDev |  file"
    );
    assert_eq!(total[1], "-".repeat(66 + 11 + 12 + 12));
    let row = cells(total[2]);
    let t = &r.tests[0].total;
    let lat = t.lat_us.as_ref().unwrap();
    assert_eq!(
        row[..5],
        ["0", &t.bytes.to_string(), "400000", "312.50", "40000.00"]
    );
    assert_eq!(cells(total[4])[0], "total");
    assert_eq!(row[5], format!("{:.3}", lat.mean / 1000.0));
    assert_eq!(row[6], format!("{:.3}", lat.stddev / 1000.0));
    assert_eq!(row[7], "/data/iocap.testfile (1GiB)");
    assert!(total[4].starts_with("total:   "), "{}", total[4]);
    assert_eq!(cells(total[4])[1..7], row[1..7]);
    assert_eq!(block(&text, "Read IO")[2], total[2], "a read test");
    let write = block(&text, "Write IO");
    assert_eq!(
        cells(write[2])[1..7],
        ["0", "0", "0.00", "0.00", "0.000", "N/A"]
    );
}

#[test]
fn percentile_table() {
    let run = diskspd("-r -L t.dat");
    let r = read_test(&["t.dat"]);
    let text = render_text(&r, &run);
    let chart = block(&text, "Total latency distribution:");
    assert_eq!(chart[0], "  %-ile |  Read (ms) | Write (ms) | Total (ms)");
    assert_eq!(chart[1], "-".repeat(46));
    let names: Vec<String> = chart[2..].iter().map(|l| cells(l)[0].clone()).collect();
    let expected = [
        "min", "25th", "50th", "75th", "90th", "95th", "99th", "3-nines", "4-nines", "5-nines",
        "6-nines", "7-nines", "8-nines", "9-nines", "max",
    ];
    assert_eq!(names, expected);
    let lat = r.tests[0].total.lat_us.clone().unwrap();
    let mut last = 0.0;
    for line in &chart[2..] {
        assert_eq!(line.len(), 46, "{line:?}");
        let c = cells(line);
        assert_eq!((&c[1], c[2].as_str()), (&c[3], "N/A"), "reads only: {line}");
        let ms: f64 = c[3].parse().unwrap();
        assert!(ms >= last, "{line}");
        last = ms;
    }
    assert_eq!(cells(chart[2])[3], format!("{:.3}", lat.min / 1000.0));
    assert_eq!(cells(chart[4])[3], format!("{:.3}", lat.p50 / 1000.0));
    assert_eq!(cells(chart[8])[3], format!("{:.3}", lat.p99 / 1000.0));
    assert_eq!(cells(chart[16])[3], format!("{:.3}", lat.max / 1000.0));
    assert!(
        !text.contains("Latency distribution: "),
        "one target: no per-target table"
    );
}

#[test]
fn no_percentile_row_prints_above_max() {
    // the engine states the exact max; the histogram's top bucket reaches past it, and its
    // middle (what a percentile reads) may too
    let run = diskspd("-r -L t.dat");
    let mut r = read_test(&["t.dat"]);
    let t = &mut r.tests[0];
    let h = iocap_model::hist::decode_hist(t.total.lat_hist_ns.as_deref().unwrap()).unwrap();
    let exact_max_us = h.lowest_equivalent(h.max()) as f64 / 1000.0;
    assert!(h.median_equivalent(h.max()) as f64 / 1000.0 - exact_max_us >= 1.0);
    for stats in [&mut t.total, &mut t.read] {
        let lat = stats.lat_us.as_mut().unwrap();
        lat.max = exact_max_us;
        lat.p99_999 = lat.p99_999.min(exact_max_us);
    }
    let lat = t.total.lat_us.clone().unwrap();
    let text = render_text(&r, &run);
    let chart = block(&text, "Total latency distribution:");
    let total = |row: &str| -> f64 { cells(row)[3].parse().unwrap() };
    let max_row = chart.last().unwrap();
    assert_eq!(cells(max_row)[3], format!("{:.3}", exact_max_us / 1000.0));
    for row in &chart[2..] {
        assert!(total(row) <= total(max_row), "{row} above {max_row}");
    }
    // the 5-nines row is the p99.999 the JSON states
    let five = chart.iter().find(|l| cells(l)[0] == "5-nines").unwrap();
    assert_eq!(cells(five)[3], format!("{:.3}", lat.p99_999 / 1000.0));
}

#[test]
fn columns_line_up_with_the_header() {
    let bars = |l: &str| -> Vec<usize> { l.match_indices('|').map(|(i, _)| i).collect() };
    for line in [
        "-r -L -D a.dat b.dat",
        "-r a.dat b.dat",
        "-D -r a.dat b.dat",
    ] {
        for rw in [RwMode::RandRead, RwMode::RandRw] {
            let run = diskspd(line);
            let targets = vec!["a.dat".into(), "b.dat".into()];
            let r = fixture(&FixtureRun {
                targets,
                rw,
                ..FixtureRun::default()
            });
            let text = render_text(&r, &run);
            for title in ["Total IO", "Read IO", "Write IO"] {
                let table = block(&text, title);
                let header = bars(table[0]);
                for row in [table[2], table[3]] {
                    assert_eq!(bars(row), header, "{line} {title}:\n{}\n{row}", table[0]);
                }
                let total = bars(table[5]);
                assert_eq!(
                    total,
                    header[1..header.len() - 1],
                    "{line} {title}: {}",
                    table[5]
                );
            }
        }
    }
}

#[test]
fn targets_with_several_threads_and_unknown_splits() {
    let run = diskspd("-t4 -r -w30 -L -D a.dat b.dat");
    let mut r = fixture(&FixtureRun {
        targets: vec!["a.dat".into(), "b.dat".into()],
        rw: RwMode::RandRw,
        ..FixtureRun::default()
    });
    for t in &mut r.tests[0].targets {
        t.threads = 4;
    }
    let text = render_text(&r, &run);
    let total = block(&text, "Total IO");
    assert!(text.contains("thread count:\t\t8\n"), "{text}");
    assert_eq!([&cells(total[2])[0], &cells(total[3])[0]], ["0-3", "4-7"]);
    assert_eq!(cells(total[2])[6], "N/A", "no per-target IOPS series");
    assert_ne!(cells(total[5])[6], "N/A", "the test's series");
    let read = block(&text, "Read IO");
    assert_eq!(
        cells(read[2])[1..8],
        ["N/A"; 7],
        "the fixture has no per-target split"
    );
    assert_eq!(
        cells(read[5])[6],
        "N/A",
        "a mixed test's series is not the reads'"
    );
    assert!(text.contains("\nLatency distribution: a.dat\n"));
    assert!(text.contains("\nLatency distribution: b.dat\n"));
    let per_target = block(&text, "Latency distribution: a.dat");
    assert_eq!(cells(per_target[2])[1..3], ["N/A", "N/A"]);
}

#[test]
fn iops_std_dev_is_the_population_deviation_of_the_seconds() {
    let run = diskspd("-r -D t.dat");
    let mut r = read_test(&["t.dat"]);
    r.tests[0].per_second = [100.0, 200.0, 300.0, 400.0]
        .iter()
        .enumerate()
        .map(|(i, &iops)| SecondSample {
            t_s: i as f64 + 1.0,
            iops,
            mb_s: 0.0,
            lat_us_mean: None,
            lat_us_p99: None,
            submit_each_pct: None,
            read: None,
            write: None,
        })
        .collect();
    let text = render_text(&r, &run);
    let total = block(&text, "Total IO");
    assert_eq!(total[0].matches("IopsStdDev").count(), 1);
    assert!(!total[0].contains("AvgLat"), "no -L");
    assert_eq!(cells(total[2])[5], "111.80", "sqrt(12500)");
    assert_eq!(cells(total[4])[5], "111.80");
    assert_eq!(cells(block(&text, "Read IO")[4])[5], "111.80", "reads only");
    // no writes: DiskSpd's deviation of a series of zeros
    assert_eq!(cells(block(&text, "Write IO")[4])[5], "0.00");
    assert!(!text.contains("%-ile"), "no -L, no percentiles");
}

#[test]
fn notes_interruptions_and_faults_come_last() {
    let run = diskspd("-w30 -t2 -a0 t.dat");
    let mut r = read_test(&["t.dat"]);
    r.tests[0].interrupted = true;
    r.tests[0].duration_s = 4.2;
    r.tests[0]
        .warnings
        .push("the file was smaller than asked".into());
    let text = render_text(&r, &run);
    let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(notes.len(), 4, "{notes:?}");
    assert!(notes[0].contains("-a: every thread"), "{notes:?}");
    assert!(notes[1].contains("writes carry"), "{notes:?}");
    assert_eq!(notes[2], "note: the file was smaller than asked");
    assert_eq!(
        notes[3],
        "note: interrupted; the figures cover the 4.2 s measured"
    );
    assert!(text.ends_with(&format!("{}\n", notes[3])));
    assert!(text.contains("actual test time:\t4.20s"));

    r.tests[0].duration_s = 0.0;
    let text = render_text(&r, &run);
    assert!(text.contains(
        "*\nThe test was interrupted before the measurements began. No results are displayed.\n"
    ));
    assert!(!text.contains("Total IO"));
}

#[test]
fn no_nan_for_a_test_without_io() {
    let run = diskspd("-r -L -D t.dat");
    let mut r = read_test(&["t.dat"]);
    let t = &mut r.tests[0];
    t.total = OpStats::default();
    t.read = OpStats::default();
    t.targets[0].total = OpStats::default();
    t.per_second.clear();
    t.cpu.user_s = f64::NAN;
    let text = render_text(&r, &run);
    let words: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).collect();
    assert!(!words.iter().any(|w| *w == "NaN" || *w == "inf"), "{text}");
    let chart = block(&text, "Total latency distribution:");
    assert!(
        chart[2..].iter().all(|l| cells(l)[1..] == ["N/A"; 3]),
        "{chart:?}"
    );
}

#[test]
fn one_target_has_the_test_s_reads_and_writes() {
    let run = diskspd("-r -w30 -L t.dat");
    let r = fixture(&FixtureRun {
        targets: vec!["t.dat".into()],
        rw: RwMode::RandRw,
        ..FixtureRun::default()
    });
    let text = render_text(&r, &run);
    let t = &r.tests[0];
    for (title, stats) in [("Read IO", &t.read), ("Write IO", &t.write)] {
        let table = block(&text, title);
        assert_eq!(cells(table[2])[2], stats.ios.to_string(), "{title}");
        assert_eq!(cells(table[2])[1..7], cells(table[4])[1..7], "{title}");
    }
}

/// iocap's notes under DiskSpd's tables fit 80 columns, each starting with `note: `.
#[test]
fn notes_fit_80_columns() {
    let run = diskspd("-w30 -t2 -a0 -xk t.dat");
    let text = render_text(&read_test(&["t.dat"]), &run);
    let tail = &text[text.find("\nnote: ").expect("notes")..];
    assert!(tail.lines().all(|l| l.chars().count() <= 80), "{tail}");
    assert!(
        tail.contains("note: -xk: DiskSpd for Linux's libaio engine"),
        "{tail}"
    );
}

/// A host of two sockets (two NUMA nodes) of two cores with two threads each, Linux-numbered.
fn two_sockets(r: &mut RunResult) {
    use iocap_model::detail::{CpuPlace, CpuShare, CpuTopology, PowerPolicy};
    let cpus: Vec<CpuPlace> = (0..8)
        .map(|id| CpuPlace {
            id,
            socket: id % 4 / 2,
            node: id % 4 / 2,
            core: id % 2,
        })
        .collect();
    r.host.cpus = 8;
    r.tests[0].cpu.system = cpus
        .iter()
        .map(|c| CpuShare {
            id: c.id,
            usage_pct: 10.0 * f64::from(c.id),
            user_pct: 2.0 * f64::from(c.id),
            kernel_pct: 8.0 * f64::from(c.id),
            idle_pct: 100.0 - 10.0 * f64::from(c.id),
        })
        .collect();
    r.host.topology = Some(CpuTopology { cpus });
    r.host.power_policy = Some(PowerPolicy {
        name: "performance".into(),
        guid: None,
    });
}

/// DiskSpd's per-CPU table: Socket, Node and Core columns for a host with several of each,
/// the CPU's number, its shares, and their mean; iocap's own process (2.5 s of 10 s on 8
/// CPUs) is a note. The host's counts and power scheme are in `System information`.
#[test]
fn every_cpu_with_diskspd_s_place_columns() {
    let run = diskspd("-r t.dat");
    let mut r = read_test(&["t.dat"]);
    two_sockets(&mut r);
    let text = render_text(&r, &run);
    let header = "Socket | Node | Core | CPU |  Usage |  User  | Kernel |  Idle";
    let table = block(&text, header);
    assert_eq!(table[0], "-".repeat(63));
    assert_eq!(table.len(), 11, "{table:?}");
    assert_eq!(
        table[7],
        "      1|     1|     2|    6|  60.00%|  12.00%|  48.00%|  40.00%"
    );
    assert_eq!(
        table[10],
        format!("{}avg.|  35.00%|   7.00%|  28.00%|  65.00%", " ".repeat(23))
    );
    let bars = |l: &str| -> Vec<usize> { l.match_indices('|').map(|(i, _)| i).collect() };
    for row in &table[1..9] {
        assert_eq!(bars(row)[..4], bars(header)[..4], "{row}");
    }
    assert_eq!(bars(table[10])[0], bars(header)[3], "avg. under CPU");
    let system = "\tcpu count:\t\t8\n\tcore count:\t\t4\n\tgroup count:\t\t1\n\
                  \tnode count:\t\t2\n\tsocket count:\t\t2\n\theterogeneous cores:\tn\n\n\
                  \tactive power scheme:\tperformance\n";
    assert!(text.contains(system), "{text}");
    let notes: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("note: "))
        .collect();
    assert!(
        notes[0].starts_with("note: iocap's own process used 3.12% of the CPUs' time"),
        "{notes:?}"
    );
    assert!(notes.iter().all(|l| l.chars().count() <= 80), "{notes:?}");
}

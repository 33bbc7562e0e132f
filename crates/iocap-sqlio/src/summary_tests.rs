use super::*;
use crate::parse_args;
use iocap_model::{IoFault, LatencyUs, OpStats};

fn call(args: &[&str]) -> SqlioCall {
    let read = |_: &str| Ok("c:\\sqlio_test.dat 4 0x0 100\nd:\\sqlio_test.dat 2 0xf0\n".into());
    parse_args(args, &read).unwrap()
}

fn result(call: &SqlioCall, total: OpStats) -> TestResult {
    TestResult {
        name: call.spec.name.clone(),
        role: None,
        group: None,
        spec: call.spec.clone(),
        engine: iocap_model::Engine::Psync,
        engine_features: vec![],
        direct: true,
        duration_s: 10.0,
        read: total.clone(),
        total,
        qd_mean: 1.0,
        ..TestResult::default()
    }
}

fn measured() -> OpStats {
    OpStats {
        ios: 100_000,
        bytes: 100_000 * 8192,
        iops: 9_876.543,
        mib_s: 77.1605,
        mb_s: 80.91,
        lat_us: Some(LatencyUs {
            min: 180.0,
            mean: 3_956.7,
            stddev: 1_000.0,
            p50: 2_345.6,
            p90: 5_000.0,
            p95: 8_000.0,
            p99: 12_345.4,
            p99_9: 20_100.0,
            p99_99: 24_999.0,
            p99_999: 25_500.0,
            max: 25_900.0,
        }),
        lat_hist_ns: None,
    }
}

/// The value after `label` on the line that starts with it.
fn field<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label} in\n{text}"))
        .trim()
}

#[test]
fn summary_has_sqlio_figures() {
    let c = call(&["-kR", "-frandom", "-b8", "-o8", "a.dat"]);
    let mut buckets = [0u64; 25];
    buckets[..12].copy_from_slice(&[60, 70, 120, 160, 300, 190, 60, 20, 10, 5, 4, 0]);
    buckets[24] = 1;
    let text = render_summary(&c, &result(&c, measured()), &buckets);

    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "CUMULATIVE DATA:",
            "throughput metrics:",
            "IOs/sec:  9876.54"
        ]
    );
    assert_eq!(lines[3], "MBs/sec:    77.16", "2^20-byte MB, two decimals");
    assert_eq!(lines[4], "latency metrics:");
    assert_eq!(field(&text, "Min_Latency(ms):"), "0");
    assert_eq!(field(&text, "Avg_Latency(ms):"), "3");
    assert_eq!(field(&text, "Max_Latency(ms):"), "25");
    assert_eq!(lines[8], "histogram:");

    let ms: Vec<&str> = field(&text, "ms:").split_whitespace().collect();
    let pct: Vec<u64> = field(&text, "%:")
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(ms.len(), 25);
    assert_eq!((ms[0], ms[23], ms[24]), ("0", "23", "24+"));
    let mut expected = vec![6, 7, 12, 16, 30, 19, 6, 2, 1, 1, 0];
    expected.resize(25, 0);
    assert_eq!(pct, expected, "0.5 % rounds up, 0.4 % and 0.1 % down");

    assert_eq!(
        field(&text, "iocap percentiles (ms):"),
        "p50 2.346 p90 5.000 p99 12.345 p99.9 20.100 p99.99 24.999 max 25.900"
    );
}

#[test]
fn histogram_columns_line_up() {
    let c = call(&["a.dat"]);
    let mut buckets = [0u64; 25];
    buckets[24] = 7;
    let text = render_summary(&c, &result(&c, measured()), &buckets);
    let ms_row = text.lines().find(|l| l.starts_with("ms:")).unwrap();
    let pct_row = text.lines().find(|l| l.starts_with("%:")).unwrap();
    assert_eq!(ms_row.len(), pct_row.len());
    assert!(pct_row.ends_with(" 100") && ms_row.ends_with(" 24+"));
    // Both rows are a 3-character label and 25 right-aligned cells of 4 characters.
    for row in [ms_row, pct_row] {
        let cells: Vec<&str> = (0..25).map(|k| &row[3 + 4 * k..7 + 4 * k]).collect();
        assert_eq!(row.len(), 3 + 4 * 25, "{row}");
        assert!(
            cells
                .iter()
                .all(|c| c.starts_with(' ') && !c.ends_with(' ')),
            "{row}"
        );
    }
}

#[test]
fn zero_ios_print_zeros_and_dashes() {
    let c = call(&["a.dat"]);
    let mut r = result(&c, OpStats::default());
    r.total.iops = f64::NAN;
    let text = render_summary(&c, &r, &[0; 25]);
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    assert_eq!(field(&text, "IOs/sec:"), "0.00");
    assert_eq!(field(&text, "MBs/sec:"), "0.00");
    assert_eq!(field(&text, "Avg_Latency(ms):"), "0");
    assert!(field(&text, "%:").split_whitespace().all(|p| p == "0"));
    assert_eq!(
        field(&text, "iocap percentiles (ms):"),
        "p50 - p90 - p99 - p99.9 - p99.99 - max -"
    );
}

#[test]
fn interruptions_and_faults_are_reported() {
    let c = call(&["a.dat"]);
    let mut r = result(&c, measured());
    r.interrupted = true;
    r.duration_s = 4.2;
    r.error = Some(IoFault {
        op: iocap_model::FaultOp::Read,
        path: "a.dat".into(),
        offset_bytes: 8192,
        len_bytes: 8192,
        errno: 5,
        message: "Input/output error".into(),
    });
    let text = render_summary(&c, &r, &[0; 25]);
    assert!(text.contains("note: interrupted; the figures cover the 4.2 s measured"));
    assert!(text.contains("stopped by an I/O error after 4.2 s: read of 8192 bytes"));
}

#[test]
fn header_for_a_param_file() {
    let c = call(&[
        "-kW",
        "-s600",
        "-frandom",
        "-o32",
        "-b8",
        "-LS",
        "-Fparam.txt",
    ]);
    let h = render_header(&c);
    for expected in [
        "iocap sqlio (SQLIO-compatible front end)\n",
        "-LS",
        "parameter file used: param.txt\n",
        "\tfile c:\\sqlio_test.dat with 4 threads using mask 0x0, size 100 MB\n",
        "\tfile d:\\sqlio_test.dat with 2 threads using mask 0xf0\n",
        "4 threads writing for 600 secs to file c:\\sqlio_test.dat\n",
        "2 threads writing for 600 secs to file d:\\sqlio_test.dat\n",
        "using 8KB random IOs\n",
        "enabling multiple I/Os per thread with 32 outstanding\n",
        "buffering: none",
    ] {
        assert!(h.contains(expected), "{expected:?} missing from\n{h}");
    }
    assert!(!h.contains("note:"), "{h}");
}

#[test]
fn header_for_defaults() {
    let h = render_header(&call(&[]));
    for expected in [
        "1 threads reading for 30 secs from file testfile.dat\n",
        "using 2KB random IOs\n",
        "one I/O outstanding per thread",
        "created at 100 MB",
        "note: no -f given",
    ] {
        assert!(h.contains(expected), "{expected:?} missing from\n{h}");
    }
    assert!(!h.contains("parameter file"));
    assert!(render_header(&call(&["-BY", "-fsequential"])).contains("-BY"));
}

/// Issue 23: the `-BN` line was 93 columns (and `-LP`'s 103). Every line iocap writes before
/// the test fits 80 (SQLIO's histogram rows after it keep SQLIO's own width, docs/sqlio.md).
#[test]
fn header_lines_fit_80_columns() {
    for (b, l) in [
        ("-BN", "-LS"),
        ("-BY", "-LP"),
        ("-BH", "-LS"),
        ("-BS", "-LP"),
    ] {
        let args = ["-kW", "-s10", "-frandom", "-o8", "-b8", b, l, "t.dat"];
        for line in render_header(&call(&args)).lines() {
            assert!(line.chars().count() <= 80, "{b} {l}: {line}");
        }
    }
}

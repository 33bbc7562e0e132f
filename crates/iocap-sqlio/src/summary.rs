//! SQLIO-shaped text. The summary keeps SQLIO's labels, order and number formats exactly
//! (`IOs/sec:`, `Avg_Latency(ms):`, the 25-bucket histogram), because users parse it with
//! scripts and spreadsheet imports written for SQLIO; everything iocap adds comes after it, on
//! lines of its own. The header is SQLIO-like in spirit only: it restates how the call was
//! understood, which is what people check before trusting a run.

use crate::SqlioCall;
use iocap_model::{TargetSpec, TestResult};
use std::fmt::Write;

/// The preamble printed before the test starts.
pub fn render_header(call: &SqlioCall) -> String {
    let spec = &call.spec;
    let mut s = String::from("iocap sqlio (SQLIO-compatible front end)\n");
    let timer = match call.latency_timer {
        Some('P') => {
            "latency: measured for every I/O (-LP: the monotonic clock, not the CPU's timer)"
        }
        Some(_) => "latency: measured for every I/O (-LS: system timer, the monotonic clock)",
        None => "latency: measured for every I/O (iocap always does, -L or not)",
    };
    let _ = writeln!(s, "{timer}");
    if let Some(file) = &call.param_file {
        let _ = writeln!(s, "parameter file used: {file}");
        for (t, p) in spec.targets.iter().zip(&call.targets) {
            let size = match p.size_mb {
                0 => String::new(),
                mb => format!(", size {mb} MB"),
            };
            let _ = writeln!(
                s,
                "\tfile {} with {} threads using mask {:#x}{size}",
                t.path,
                threads_of(t, spec.threads),
                p.mask
            );
        }
    }
    let verb = if spec.writes() { "writing" } else { "reading" };
    for t in &spec.targets {
        let _ = writeln!(
            s,
            "{} threads {verb} for {} secs {} file {}",
            threads_of(t, spec.threads),
            spec.duration_s,
            if spec.writes() { "to" } else { "from" },
            t.path
        );
    }
    let pattern = if spec.rw.is_random() {
        "random"
    } else {
        "sequential"
    };
    let _ = writeln!(s, "using {}KB {pattern} IOs", spec.bs_bytes >> 10);
    if spec.qd > 1 {
        let _ = writeln!(
            s,
            "enabling multiple I/Os per thread with {} outstanding",
            spec.qd
        );
    } else {
        let _ = writeln!(
            s,
            "one I/O outstanding per thread (each waits for the last)"
        );
    }
    let buffering = match call.buffering {
        'Y' => "buffering: page cache and device cache both in use (-BY)",
        'H' => "buffering: device cache only, the page cache is bypassed (-BH: O_DIRECT)",
        'S' => "buffering: page cache in use, writes go through to the device (-BS: O_DSYNC)",
        _ => "buffering: none, no page cache and durable writes (-BN: O_DIRECT + O_DSYNC)",
    };
    let _ = writeln!(s, "{buffering}");
    if call.targets.iter().all(|p| p.size_mb == 0) {
        let _ = writeln!(
            s,
            "files that do not exist are created at {} MB",
            spec.size_bytes >> 20
        );
    }
    for note in &call.notes {
        let _ = writeln!(s, "note: {note}");
    }
    s
}

fn threads_of(t: &TargetSpec, default: u32) -> u32 {
    t.threads.unwrap_or(default)
}

/// What `iocap sqlio` prints after a test: SQLIO's summary ([`render_summary`], from the
/// result's own millisecond buckets), then a `warning:` line for each of the result's warnings.
pub fn render_result(call: &SqlioCall, result: &TestResult) -> String {
    let mut s = render_summary(call, result, &crate::ms_buckets(result));
    if !s.ends_with('\n') {
        s.push('\n');
    }
    for w in &result.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}

/// SQLIO's end-of-run summary. `ms_buckets[k]` counts I/Os whose latency was in
/// `[k ms, k+1 ms)`; `ms_buckets[24]` those of 24 ms or more.
///
/// Latencies are whole milliseconds, cut down as SQLIO's are, so that `Min_Latency(ms)` falls in
/// the bucket of the fastest I/O. Histogram percentages are rounded to the nearest whole number
/// and, as in SQLIO, need not add up to 100. A test without I/O prints zeros in SQLIO's lines
/// (scripts still find numbers there) and `-` in iocap's percentile line.
pub fn render_summary(_call: &SqlioCall, result: &TestResult, ms_buckets: &[u64; 25]) -> String {
    let total = &result.total;
    let mut s = String::from("CUMULATIVE DATA:\nthroughput metrics:\n");
    let _ = writeln!(s, "IOs/sec: {:8.2}", finite(total.iops));
    let _ = writeln!(s, "MBs/sec: {:8.2}", finite(total.mib_s));
    let lat = total.lat_us.as_ref();
    let whole_ms = |us: f64| (finite(us) / 1000.0).floor().max(0.0) as u64;
    let _ = writeln!(s, "latency metrics:");
    let _ = writeln!(s, "Min_Latency(ms): {}", lat.map_or(0, |l| whole_ms(l.min)));
    let _ = writeln!(
        s,
        "Avg_Latency(ms): {}",
        lat.map_or(0, |l| whole_ms(l.mean))
    );
    let _ = writeln!(s, "Max_Latency(ms): {}", lat.map_or(0, |l| whole_ms(l.max)));

    let _ = writeln!(s, "histogram:");
    let mut ms_row = String::from("ms:");
    let mut pct_row = String::from("%: ");
    let sum: u128 = ms_buckets.iter().map(|&n| u128::from(n)).sum();
    for (k, &n) in ms_buckets.iter().enumerate() {
        let label = if k == 24 {
            "24+".to_string()
        } else {
            k.to_string()
        };
        let pct = if sum == 0 {
            0
        } else {
            (200 * u128::from(n) + sum) / (2 * sum)
        };
        let _ = write!(ms_row, " {label:>3}");
        let _ = write!(pct_row, " {pct:>3}");
    }
    let _ = writeln!(s, "{ms_row}\n{pct_row}");

    let ms = |us: f64| format!("{:.3}", finite(us) / 1000.0);
    let cells: [(&str, Option<String>); 6] = [
        ("p50", lat.map(|l| ms(l.p50))),
        ("p90", lat.map(|l| ms(l.p90))),
        ("p99", lat.map(|l| ms(l.p99))),
        ("p99.9", lat.map(|l| ms(l.p99_9))),
        ("p99.99", lat.map(|l| ms(l.p99_99))),
        ("max", lat.map(|l| ms(l.max))),
    ];
    s.push_str("iocap percentiles (ms):");
    for (name, value) in cells {
        let _ = write!(s, " {name} {}", value.as_deref().unwrap_or("-"));
    }
    s.push('\n');
    if result.interrupted {
        let _ = writeln!(
            s,
            "note: interrupted; the figures cover the {:.1} s measured",
            result.duration_s
        );
    }
    if let Some(fault) = &result.error {
        let _ = writeln!(
            s,
            "note: stopped by an I/O error after {:.1} s: {fault}",
            result.duration_s
        );
    }
    s
}

/// NaN and infinities print as 0: a summary never shows `NaN`.
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

#[cfg(test)]
#[path = "summary_tests.rs"]
mod tests;

/// SQLIO's 1 ms latency buckets of a test: [k, k+1) ms for k = 0..23, then 24 ms and more,
/// counted from the latency histogram the result carries (all zero without one).
pub fn ms_buckets(t: &iocap_model::TestResult) -> [u64; 25] {
    let mut b = [0u64; 25];
    let Some(h) = t
        .total
        .lat_hist_ns
        .as_deref()
        .and_then(|h| iocap_model::hist::decode_hist(h).ok())
    else {
        return b;
    };
    for v in h.iter_recorded() {
        let k = (v.value_iterated_to() / 1_000_000).min(24) as usize;
        b[k] += v.count_at_value();
    }
    b
}

#[cfg(test)]
mod bucket_tests {
    #[test]
    fn buckets_add_up_to_the_ios_and_follow_the_latency() {
        use iocap_model::fixture::{run, FixtureRun};
        // a 1.5 ms median: most I/Os in the 1 ms bucket, the tail up to 40x (60 ms) in the last
        let r = run(&FixtureRun {
            p50_us: 1500.0,
            ..FixtureRun::default()
        });
        let t = &r.tests[0];
        let b = super::ms_buckets(t);
        assert_eq!(b.iter().sum::<u64>(), t.total.ios);
        assert!(b[1] > b[0] && b[1] > b[3], "{b:?}");
        assert!(b[24] > 0, "{b:?}");
    }
}

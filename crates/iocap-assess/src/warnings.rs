//! Warnings about the run itself, whatever its figures: a test file the page cache or an array
//! cache can hold (the test then measures the cache), and a test too short or still drifting
//! (the figures are not the steady state a database lives in).
//!
//! Rules:
//! - Buffered I/O with a test file smaller than twice the RAM.
//! - A test file smaller than twice the `--cache-size` (the practitioners' rule: files 2 to 4
//!   times larger than every cache in the path).
//! - Outside quick mode, a test shorter than `min_duration_s` (30 s by default).
//! - Per-second IOPS still trending: with at least 6 samples, the mean of the last third differs
//!   more than 10 % from the mean of the middle third (the first third holds the ramp-up).
//! - Where the kernel's device class and the measured qd-1 latency disagree, the disagreement
//!   ([`crate::evidence`]); and the page reads and the scan when their figure is beyond what a
//!   device of the data volume's class delivers, O_DIRECT or not.

use crate::fmt;
use crate::preflight_input::PreflightInput;

/// Change between the middle and last third of the per-second IOPS that counts as a trend.
pub const TREND_PCT: f64 = 10.0;

fn mean(v: &[f64]) -> Option<f64> {
    let v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        None
    } else {
        Some(v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// The warnings of a preflight run, in a stable order without repeats.
pub fn warnings(i: &PreflightInput) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |w: String| {
        if !out.contains(&w) {
            out.push(w);
        }
    };
    for n in &i.class_notes {
        push(n.clone());
    }
    for m in [i.data_read, i.scan].into_iter().flatten() {
        let devices = m.test.targets.len();
        if let Some(w) = crate::evidence::implausible(m.test, i.classes.data, devices) {
            push(format!("{w}."));
        }
    }
    for (name, m) in i.named_tests() {
        let t = m.test;
        for target in &t.targets {
            let size = target.size_bytes;
            if (i.buffered || !t.direct) && i.ram_bytes > 0 && size < i.ram_bytes.saturating_mul(2)
            {
                push(format!(
                    "The test file {} ({}) is smaller than twice the {} of RAM and the tests \
                        ran buffered: reads may come from the page cache; use a file of \
                        at least {} or O_DIRECT.",
                    target.path,
                    fmt::bytes(size),
                    fmt::bytes(i.ram_bytes),
                    fmt::bytes(i.ram_bytes.saturating_mul(2))
                ));
            }
            if let Some(cache) = i.cache_size_bytes.filter(|c| *c > 0) {
                if size < cache.saturating_mul(2) {
                    push(format!(
                        "The test file {} ({}) is smaller than twice the {} cache: the tests \
                            may measure the cache; use a file of at least {}.",
                        target.path,
                        fmt::bytes(size),
                        fmt::bytes(cache),
                        fmt::bytes(cache.saturating_mul(2))
                    ));
                }
            }
        }
        let d = t.duration_s;
        if !i.quick && d.is_finite() && d < i.min_duration_s {
            push(format!(
                "The {name} test ran {} s, less than the {} s a steady state needs: run it \
                    longer or treat its figures as a first look.",
                fmt::count(d),
                fmt::count(i.min_duration_s)
            ));
        }
        let iops: Vec<f64> = t.per_second.iter().map(|s| s.iops).collect();
        let n = iops.len();
        if n >= 6 {
            let (mid, last) = (mean(&iops[n / 3..2 * n / 3]), mean(&iops[2 * n / 3..]));
            if let (Some(mid), Some(last)) = (mid, last) {
                let change = (last / mid - 1.0) * 100.0;
                if mid > 0.0 && change.abs() > TREND_PCT {
                    push(format!(
                        "The {name} test's IOPS were still {} (the last third {} {} from the \
                            middle third): the storage had not settled; run it longer.",
                        if change > 0.0 { "rising" } else { "falling" },
                        if change > 0.0 { "up" } else { "down" },
                        fmt::pct(change.abs())
                    ));
                }
            }
        }
    }
    out
}

//! How every figure iocap prints is written, in one place low in the stack, so a count, a
//! latency or a percentage reads the same in a table, a verdict's sentence, a progress line and
//! a schedule: the views (`iocap-report`'s `fmt` re-exports these), the assessments' sentences
//! (`iocap-assess`), the sessions' progress lines and the suites' summaries all call them. Each
//! caller picks what a missing figure reads (`-`, `–`, `?`).

/// A latency in whole microseconds, or in milliseconds with one decimal from 10 ms: `850 µs`,
/// `12.5 ms` (the log-flush tables and recommendations of `iocap fsync`).
pub fn format_us(us: f64) -> String {
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

/// A whole number with thousands separators: `1234567` reads `1,234,567`. The one place digits
/// are grouped: the report's views and the assessments' sentences both call it, each choosing
/// what a missing or negative figure reads.
pub fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count with thousands separators, rounded: `123,457`. Below zero and NaN read `0`.
pub fn count(v: f64) -> String {
    format_count(v.round() as u64)
}

/// [`count`] of a finite figure (below zero as `0`), else `missing`.
pub fn count_or(v: f64, missing: &str) -> String {
    if v.is_finite() {
        count(v.max(0.0))
    } else {
        missing.into()
    }
}

/// A rate with one decimal and thousands separators, e.g. MB/s: `1,480.2`; a non-finite one
/// reads `missing`.
pub fn decimal_or(v: f64, missing: &str) -> String {
    if !v.is_finite() {
        return missing.into();
    }
    let s = format!("{:.1}", v.abs());
    let (int, dec) = s.split_once('.').unwrap_or((&s, "0"));
    let sign = if v < 0.0 && s != "0.0" { "-" } else { "" };
    format!("{sign}{}.{dec}", count(int.parse::<f64>().unwrap_or(0.0)))
}

/// A latency in microseconds with a unit that keeps 3-4 significant digits: `5.12 µs`,
/// `85.3 µs`, `413 µs`, `1.25 ms`, `25.0 ms`.
pub fn lat_us(us: f64) -> String {
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else if us >= 100.0 {
        format!("{us:.0} µs")
    } else if us >= 10.0 {
        format!("{us:.1} µs")
    } else {
        format!("{us:.2} µs")
    }
}

/// [`lat_us`] of a latency that is there and finite, else `missing`.
pub fn lat_us_or(us: Option<f64>, missing: &str) -> String {
    match us {
        Some(v) if v.is_finite() => lat_us(v),
        _ => missing.into(),
    }
}

/// A percentage with one decimal: `87.5 %`; a non-finite one reads `missing`.
pub fn pct_or(v: f64, missing: &str) -> String {
    if v.is_finite() {
        format!("{v:.1} %")
    } else {
        missing.into()
    }
}

/// A duration in seconds with one decimal: `30.0 s`.
pub fn secs(s: f64) -> String {
    format!("{s:.1} s")
}

/// A whole number with thousands separators ([`format_count`]): `123,456`,
/// `-1,500`; `?` when it is not finite.
pub fn signed_count(v: f64) -> String {
    if !v.is_finite() {
        return "?".into();
    }
    let digits = format_count(v.round().abs() as u64);
    if v.round() < 0.0 {
        format!("-{digits}")
    } else {
        digits
    }
}

/// Microseconds as milliseconds with sensible precision: `0.42 ms`, `4.2 ms`, `12 ms`.
pub fn ms(us: f64) -> String {
    if !us.is_finite() {
        return "? ms".into();
    }
    let m = us / 1000.0;
    if m < 1.0 {
        format!("{} ms", trim(format!("{m:.2}")))
    } else if m < 10.0 {
        format!("{} ms", trim(format!("{m:.1}")))
    } else {
        format!("{} ms", signed_count(m))
    }
}

/// A limit in milliseconds as written in the guidelines: `1 ms`, `0.5 ms`.
pub fn limit_ms(m: f64) -> String {
    ms(m * 1000.0)
}

/// Bytes in binary units: `4 GiB`, `512 MiB`.
pub fn binary_bytes(b: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, size) in UNITS {
        if b >= size {
            let v = b as f64 / size as f64;
            return format!("{} {name}", trim(format!("{v:.1}")));
        }
    }
    format!("{b} B")
}

/// A percentage without decimals: `62 %`.
pub fn whole_pct(v: f64) -> String {
    if v > 0.0 && v < 0.5 {
        return "under 1 %".into();
    }
    format!("{} %", signed_count(v))
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `0.5s`, `45s`, `3m20s`, `1h05m`: tenths below ten seconds, whole seconds above, as a
/// schedule needs no more.
pub fn format_secs(secs: f64) -> String {
    let secs = if secs.is_finite() { secs.max(0.0) } else { 0.0 };
    if secs < 10.0 && secs.fract() != 0.0 {
        return format!("{:.1}s", secs);
    }
    let s = secs.round() as u64;
    match s {
        0..120 => format!("{s}s"),
        120..7200 if s % 60 == 0 => format!("{}m", s / 60),
        120..7200 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// A length of time as a window is said: `1.2 s`, `300 ms`, `4 µs` (a cost point measured
/// again over a longer window).
pub fn window_s(s: f64) -> String {
    match s {
        s if s >= 1.0 => format!("{s:.1} s"),
        s if s >= 1e-3 => format!("{:.0} ms", s * 1e3),
        s => format!("{:.0} µs", s * 1e6),
    }
}

/// A CPU time per operation in microseconds, without its unit: two decimals below 10, one
/// above (`3.42`, `33.7`).
pub fn micros(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_reads_in_its_own_unit() {
        assert_eq!(window_s(2.4), "2.4 s");
        assert_eq!(window_s(0.6), "600 ms");
        assert_eq!(window_s(4e-6), "4 µs");
    }

    #[test]
    fn figures_read_well() {
        assert_eq!(signed_count(1234567.4), "1,234,567");
        assert_eq!(signed_count(999.0), "999");
        assert_eq!(signed_count(-1500.0), "-1,500");
        assert_eq!(signed_count(f64::NAN), "?");
        assert_eq!(count(-1500.0), "0");
        assert_eq!(count(123_456.6), "123,457");
        assert_eq!(ms(420.0), "0.42 ms");
        assert_eq!(ms(4200.0), "4.2 ms");
        assert_eq!(ms(12_345.0), "12 ms");
        assert_eq!(ms(1000.0), "1 ms");
        assert_eq!(limit_ms(0.5), "0.5 ms");
        assert_eq!(binary_bytes(4 << 30), "4 GiB");
        assert_eq!(binary_bytes(1536 << 20), "1.5 GiB");
        assert_eq!(binary_bytes(100), "100 B");
        assert_eq!(whole_pct(0.1), "under 1 %");
        assert_eq!(whole_pct(62.4), "62 %");
        assert_eq!(lat_us(5.123), "5.12 µs");
        assert_eq!(lat_us(413.0), "413 µs");
        assert_eq!(lat_us(1250.0), "1.25 ms");
        assert_eq!(decimal_or(1480.24, "-"), "1,480.2");
        assert_eq!(decimal_or(f64::NAN, "-"), "-");
        assert_eq!(micros(3.421), "3.42");
        assert_eq!(micros(33.74), "33.7");
        assert_eq!(format_secs(200.0), "3m20s");
    }
}

//! Number formatting for the plain-language sentences: the same figure must read the same in
//! every verdict, and odd values (NaN, infinity) must still print something sensible.

/// A whole number with thousands separators ([`iocap_model::format_count`]): `123,456`,
/// `-1,500`; `?` when it is not finite.
pub(crate) fn count(v: f64) -> String {
    if !v.is_finite() {
        return "?".into();
    }
    let digits = iocap_model::format_count(v.round().abs() as u64);
    if v.round() < 0.0 {
        format!("-{digits}")
    } else {
        digits
    }
}

/// Microseconds as milliseconds with sensible precision: `0.42 ms`, `4.2 ms`, `12 ms`.
pub(crate) fn ms(us: f64) -> String {
    if !us.is_finite() {
        return "? ms".into();
    }
    let m = us / 1000.0;
    if m < 1.0 {
        format!("{} ms", trim(format!("{m:.2}")))
    } else if m < 10.0 {
        format!("{} ms", trim(format!("{m:.1}")))
    } else {
        format!("{} ms", count(m))
    }
}

/// A limit in milliseconds as written in the guidelines: `1 ms`, `0.5 ms`.
pub(crate) fn limit_ms(m: f64) -> String {
    ms(m * 1000.0)
}

/// Bytes in binary units: `4 GiB`, `512 MiB`.
pub(crate) fn bytes(b: u64) -> String {
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
pub(crate) fn pct(v: f64) -> String {
    if v > 0.0 && v < 0.5 {
        return "under 1 %".into();
    }
    format!("{} %", count(v))
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_well() {
        assert_eq!(count(1234567.4), "1,234,567");
        assert_eq!(count(999.0), "999");
        assert_eq!(count(-1500.0), "-1,500");
        assert_eq!(count(f64::NAN), "?");
        assert_eq!(ms(420.0), "0.42 ms");
        assert_eq!(ms(4200.0), "4.2 ms");
        assert_eq!(ms(12_345.0), "12 ms");
        assert_eq!(ms(1000.0), "1 ms");
        assert_eq!(limit_ms(0.5), "0.5 ms");
        assert_eq!(bytes(4 << 30), "4 GiB");
        assert_eq!(bytes(1536 << 20), "1.5 GiB");
        assert_eq!(bytes(100), "100 B");
        assert_eq!(pct(0.1), "under 1 %");
        assert_eq!(pct(62.4), "62 %");
    }
}

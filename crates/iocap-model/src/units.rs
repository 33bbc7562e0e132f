//! Parsers for the sizes, durations and rates users type, and the formatter that prints sizes
//! back. Sizes follow fio: `K`, `M`, `G`, `T` are powers of 1024 (`KiB` and `KB` are accepted as
//! the same), a bare number is bytes. They never panic: every bad input is an [`UnitError`]
//! that names what was wrong.

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    #[error("invalid {what} '{input}': {why}")]
    Invalid {
        what: &'static str,
        input: String,
        why: &'static str,
    },
}

fn invalid(what: &'static str, input: &str, why: &'static str) -> UnitError {
    UnitError::Invalid {
        what,
        input: input.to_string(),
        why,
    }
}

/// Splits "12.5ms" into ("12.5", "ms").
fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// `input` trimmed and split into its number and unit; an empty input, or one that does not
/// start with a number (`no_number` says how it should), is refused.
fn number_and_unit<'a>(
    what: &'static str,
    input: &'a str,
    no_number: &'static str,
) -> Result<(&'a str, &'a str), UnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(invalid(what, input, "it is empty"));
    }
    let (num, unit) = split_number(s);
    if num.is_empty() {
        return Err(invalid(what, input, no_number));
    }
    Ok((num, unit))
}

/// Parses a size such as `8K`, `1.5G`, `512`, `64MiB` into bytes.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    const WHAT: &str = "size";
    let (num, unit) = number_and_unit(WHAT, input, "it must start with a number, e.g. 8K or 1G")?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(invalid(WHAT, input, "unknown unit (use K, M, G or T)")),
    };
    exact_bytes(num, mult).map_err(|why| invalid(WHAT, input, why))
}

/// `num` (digits with at most one decimal point) times `mult`, computed exactly: a float would
/// silently round byte counts above 2^53 and refuse some that fit in a u64.
fn exact_bytes(num: &str, mult: u64) -> Result<u64, &'static str> {
    const TOO_LARGE: &str = "too large";
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
        return Err("not a number");
    }
    // digits only (split_number), so parsing fails only by overflow
    let frac = frac.trim_end_matches('0');
    let int: u128 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| TOO_LARGE)?
    };
    if frac.len() > 30 {
        return Err("not a whole number of bytes");
    }
    let scale = 10u128.pow(frac.len() as u32);
    let f: u128 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| TOO_LARGE)?
    };
    let scaled = int
        .checked_mul(scale)
        .and_then(|v| v.checked_add(f))
        .and_then(|v| v.checked_mul(u128::from(mult)))
        .ok_or(TOO_LARGE)?;
    if scaled % scale != 0 {
        return Err("not a whole number of bytes");
    }
    u64::try_from(scaled / scale).map_err(|_| TOO_LARGE)
}

/// Parses a duration such as `10s`, `500ms`, `2m`, `1h`, `250us` or a bare number of seconds,
/// returning seconds.
pub fn parse_duration(input: &str) -> Result<f64, UnitError> {
    const WHAT: &str = "duration";
    let (num, unit) = number_and_unit(WHAT, input, "it must start with a number, e.g. 10s or 2m")?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "m" | "min" | "mins" => 60.0,
        "h" | "hr" | "hours" => 3600.0,
        "d" | "days" => 86400.0,
        _ => return Err(invalid(WHAT, input, "unknown unit (use ms, s, m, h or d)")),
    };
    let value: f64 = num
        .parse()
        .map_err(|_| invalid(WHAT, input, "not a number"))?;
    let secs = value * mult;
    if !secs.is_finite() || secs > 366.0 * 86400.0 {
        return Err(invalid(WHAT, input, "longer than a year"));
    }
    Ok(secs)
}

/// Parses a positive rate (IOPS or MB/s) such as `2000`, `1.5k`, `2M`; suffixes are decimal.
pub fn parse_rate(input: &str) -> Result<f64, UnitError> {
    const WHAT: &str = "rate";
    let s = input.trim();
    let (num, unit) = split_number(s);
    if num.is_empty() {
        return Err(invalid(WHAT, input, "it must be a number"));
    }
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        _ => return Err(invalid(WHAT, input, "unknown suffix (use k or M)")),
    };
    let value: f64 = num
        .parse()
        .map_err(|_| invalid(WHAT, input, "not a number"))?;
    let rate = value * mult;
    if !rate.is_finite() || rate <= 0.0 {
        return Err(invalid(WHAT, input, "it must be greater than zero"));
    }
    Ok(rate)
}

/// Binary units, largest first.
const UNITS: [(&str, u64); 4] = [
    ("T", 1 << 40),
    ("G", 1 << 30),
    ("M", 1 << 20),
    ("K", 1 << 10),
];

/// Formats a byte count the way the parsers read it back: `8K`, `1M`, `1.5G`, `4100`.
pub fn format_bytes(bytes: u64) -> String {
    for (name, size) in UNITS {
        if bytes >= size {
            let (whole, rest) = (bytes / size, bytes % size);
            if rest == 0 {
                return format!("{whole}{name}");
            }
            // two decimals at most, and only when exact (integers: a float rounds large counts)
            let hundredths = u128::from(rest) * 100;
            if hundredths % u128::from(size) == 0 {
                let h = format!("{:02}", hundredths / u128::from(size));
                return format!("{whole}.{}{name}", h.trim_end_matches('0'));
            }
        }
    }
    bytes.to_string()
}

/// Formats a byte count for people: one decimal in the largest unit that fits (`77.5G`).
pub fn human_bytes(bytes: u64) -> String {
    for (name, size) in UNITS {
        if bytes >= size {
            return if bytes % size == 0 {
                format!("{}{name}", bytes / size)
            } else {
                format!("{:.1}{name}", bytes as f64 / size as f64)
            };
        }
    }
    format!("{bytes} B")
}

pub use crate::figures::{format_count, format_us};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(1000), "1,000");
        assert_eq!(format_count(123_456_789), "123,456,789");
        assert_eq!(format_count(u64::MAX), "18,446,744,073,709,551,615");
        assert_eq!(format_us(85.34), "85 µs");
        assert_eq!(format_us(2500.0), "2500 µs");
        assert_eq!(format_us(12_500.0), "12.5 ms");
    }

    #[test]
    fn sizes_use_binary_suffixes() {
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("8K").unwrap(), 8192);
        assert_eq!(parse_size("8k").unwrap(), 8192);
        assert_eq!(parse_size("8KiB").unwrap(), 8192);
        assert_eq!(parse_size("64M").unwrap(), 64 << 20);
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size("2T").unwrap(), 2 << 40);
        assert_eq!(parse_size(" 4096B ").unwrap(), 4096);
    }

    #[test]
    fn bad_sizes_name_the_problem() {
        for bad in [
            "",
            "K",
            "8X",
            "-8K",
            "1.2.3M",
            "0.3",
            "99999999999T",
            "8 K K",
        ] {
            let err = parse_size(bad).unwrap_err().to_string();
            assert!(err.contains("invalid size"), "{bad}: {err}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10").unwrap(), 10.0);
        assert_eq!(parse_duration("10s").unwrap(), 10.0);
        assert_eq!(parse_duration("500ms").unwrap(), 0.5);
        assert_eq!(parse_duration("2m").unwrap(), 120.0);
        assert_eq!(parse_duration("1h").unwrap(), 3600.0);
        assert!((parse_duration("250us").unwrap() - 0.00025).abs() < 1e-12);
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("1000d").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("2000").unwrap(), 2000.0);
        assert_eq!(parse_rate("1.5k").unwrap(), 1500.0);
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(81_219_568 * 1024), "77.5G");
        assert_eq!(human_bytes(1 << 30), "1G");
        assert_eq!(human_bytes(100), "100 B");
    }

    #[test]
    fn format_round_trips() {
        for v in [512u64, 8192, 65536, 1 << 20, 3 << 29, 4100, 1 << 40] {
            assert_eq!(
                parse_size(&format_bytes(v)).unwrap(),
                v,
                "{}",
                format_bytes(v)
            );
        }
        assert_eq!(format_bytes(8192), "8K");
    }
}

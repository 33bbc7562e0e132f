//! DiskSpd's numbers. Sizes are whole numbers with at most one unit letter, `K`, `M`, `G` or `T`
//! (binary: KiB to TiB) or `b` for blocks of the `-b` size, in either case, and nothing after it
//! (`-c10G`, `-T1b`, `-r4K`, `-B100b`). Counts and times are plain whole numbers. DiskSpd reads
//! counts with `atoi`, so `-o8x` passes there as 8; iocap refuses anything but digits, because a
//! typo that silently runs another test is worse than an error.
//!
//! Errors are the problem alone; the caller adds the flag.

/// The whole string as a `u64` of ASCII digits; a problem sentence otherwise.
pub(crate) fn number(value: &str, what: &str) -> Result<u64, String> {
    if value.is_empty() {
        return Err(format!("needs the {what} attached"));
    }
    if !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("the {what} must be a whole number, not '{value}'"));
    }
    value
        .parse()
        .map_err(|_| format!("the {what} {value} is too large"))
}

/// A whole number in `min..=max`.
pub(crate) fn bounded(value: &str, what: &str, min: u64, max: u64) -> Result<u64, String> {
    let n = number(value, what)?;
    if n < min {
        return Err(format!("the {what} must be at least {min}"));
    }
    if n > max {
        return Err(format!("the {what} must be at most {max}"));
    }
    Ok(n)
}

/// A size in bytes: digits and an optional unit. `block_bytes` is what `b` stands for; `None`
/// where a size in blocks makes no sense (`-b` itself).
pub(crate) fn size(value: &str, what: &str, block_bytes: Option<u64>) -> Result<u64, String> {
    let digits_end = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (digits, unit) = value.split_at(digits_end);
    if digits.is_empty() {
        return Err(if value.is_empty() {
            format!("needs the {what} attached")
        } else {
            format!("the {what} must start with a whole number, not '{value}'")
        });
    }
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("the {what} {value} is too large"))?;
    let multiplier = match unit {
        "" => 1,
        "K" | "k" => 1 << 10,
        "M" | "m" => 1 << 20,
        "G" | "g" => 1 << 30,
        "T" | "t" => 1 << 40,
        "b" | "B" => match block_bytes {
            Some(b) => b,
            None => return Err(format!("the {what} cannot be given in blocks ('b')")),
        },
        _ => {
            return Err(format!(
            "the {what} '{value}' has an unknown unit: use K, M, G, T (KiB to TiB) or b (blocks)"
        ))
        }
    };
    n.checked_mul(multiplier)
        .ok_or_else(|| format!("the {what} {value} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_units_and_blocks() {
        let b = Some(8192);
        for (input, bytes) in [
            ("4096", 4096),
            ("8K", 8 << 10),
            ("8k", 8 << 10),
            ("1M", 1 << 20),
            ("10G", 10 << 30),
            ("2T", 2 << 40),
            ("1b", 8192),
            ("100B", 819_200),
            ("0", 0),
        ] {
            assert_eq!(size(input, "size", b), Ok(bytes), "{input}");
        }
    }

    #[test]
    fn bad_sizes_say_why() {
        for (input, problem) in [
            ("", "needs the size attached"),
            ("K", "must start with a whole number, not 'K'"),
            ("8KB", "unknown unit"),
            ("8X", "unknown unit"),
            ("1.5G", "unknown unit"),
            ("-1", "must start with a whole number"),
            ("99999999999999999999", "too large"),
            ("20000000T", "too large"),
        ] {
            let e = size(input, "size", Some(4096)).unwrap_err();
            assert!(e.contains(problem), "{input}: {e}");
        }
        assert!(size("2b", "block size", None)
            .unwrap_err()
            .contains("cannot be given in blocks"));
    }

    #[test]
    fn numbers_are_digits_only() {
        assert_eq!(number("42", "count"), Ok(42));
        assert!(number("8x", "count").unwrap_err().contains("not '8x'"));
        assert!(number("+8", "count").is_err());
        assert!(number("", "count").unwrap_err().contains("needs the count"));
        assert_eq!(
            bounded("0", "count", 1, 9),
            Err("the count must be at least 1".into())
        );
        assert_eq!(
            bounded("10", "count", 1, 9),
            Err("the count must be at most 9".into())
        );
    }
}

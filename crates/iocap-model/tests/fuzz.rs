//! No size, duration, rate or block-size mix a user types may panic iocap, and every value the
//! formatter prints must parse back to itself. Run longer with `PROPTEST_CASES=200000` (see
//! `bench/fuzz.sh`).

use iocap_model::{format_bytes, parse_bs_split, parse_duration, parse_rate, parse_size};
use proptest::prelude::*;

/// The case count: `PROPTEST_CASES` when set, else `default` (kept small for CI).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Strings that look like numbers with units often enough to reach every branch.
fn unitish() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[ ]?[0-9]{0,25}(\\.[0-9]{0,25})?[ ]?(|[kKmMgGtTbBsShHdD]|[kKmMgGtT][iI]?[bB]|ms|us|µs|min|sec|days|hr|x|\\.)[ ]?",
        "[0-9.]{0,45}[a-zµ ]{0,3}",
    ]
}

/// Strings shaped like the values of iocap's flags: durations, bursts, block-size mixes.
fn flagish() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[0-9.]{0,25}(|ms|us|s|m|h|d|k|K|M|G|T|x)(:[0-9.]{0,25}(|ms|s|m|x))?(:.{0,3})?",
        "([0-9]{0,12}[KkMm]?:[0-9]{0,11},?){0,4}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(3000)))]

    #[test]
    fn unit_parsers_never_panic(s in unitish()) {
        if let Ok(b) = parse_size(&s) {
            // whatever parses is a real byte count and formats back to itself
            prop_assert_eq!(parse_size(&format_bytes(b)), Ok(b));
        }
        if let Ok(d) = parse_duration(&s) {
            prop_assert!(d.is_finite() && (0.0..=366.0 * 86400.0).contains(&d), "{}", d);
        }
        if let Ok(r) = parse_rate(&s) {
            prop_assert!(r.is_finite() && r > 0.0, "{}", r);
        }
    }

    #[test]
    fn every_byte_count_round_trips(b in any::<u64>(), shift in 0u32..64) {
        for v in [b, b >> shift, (b >> shift) << shift.min(40)] {
            prop_assert_eq!(parse_size(&format_bytes(v)), Ok(v), "{}", format_bytes(v));
            prop_assert_eq!(parse_size(&v.to_string()), Ok(v));
        }
    }

    #[test]
    fn whole_units_parse_exactly_or_are_too_large(n in any::<u64>(), unit in 0usize..5) {
        let (suffix, mult) = [("", 1u128), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40)][unit];
        let want = u128::from(n) * mult;
        match parse_size(&format!("{n}{suffix}")) {
            Ok(v) => prop_assert_eq!(u128::from(v), want),
            Err(e) => {
                prop_assert!(want > u128::from(u64::MAX), "{}{}: {}", n, suffix, e);
                prop_assert!(e.to_string().contains("too large"));
            }
        }
    }

    #[test]
    fn huge_numbers_are_errors_not_overflows(digits in "[1-9][0-9]{20,60}", frac in "(\\.[0-9]{1,40})?", unit in "(|K|M|G|T|s|ms|h|d|k)") {
        let s = format!("{digits}{frac}{unit}");
        prop_assert!(parse_size(&s).is_err());
        prop_assert!(parse_duration(&s).is_err());
        let _ = parse_rate(&s); // 10^60 IOPS is a (silly) finite rate
    }

    /// The flag parsers that do more than call a unit parser (`parse_latency_us` scales,
    /// `parse_burst` splits) never panic either.
    #[test]
    fn value_parsers_never_panic(s in flagish()) {
        if let Ok(us) = iocap_model::parse_latency_us(&s) {
            prop_assert!(us.is_finite() && us >= 0.0);
        }
        if let Ok(b) = iocap_model::parse_burst(&s) {
            prop_assert!(b.on_s.is_finite() && b.off_s.is_finite());
        }
        let _ = parse_size(&s);
        let _ = parse_duration(&s);
        let _ = parse_rate(&s);
        let _ = iocap_model::parse_rw(&s);
        let _ = parse_bs_split(&s);
        let _ = iocap_model::parse_engine(&s);
    }

    #[test]
    fn bs_split_never_panics(s in prop_oneof![
        any::<String>(),
        "([ ]?[0-9]{0,12}[KMkm]?:[ ]?[0-9]{0,11}[ ]?,?){0,5}",
    ]) {
        if let Ok(mix) = parse_bs_split(&s) {
            prop_assert!(!mix.is_empty());
            prop_assert!(mix.iter().all(|b| b.weight > 0));
            prop_assert!(iocap_model::total_weight(&mix) <= u64::from(u32::MAX));
        }
    }
}

#[test]
fn large_byte_counts_are_exact() {
    // a float rounded these before: 2^53 + 1 bytes parsed as 2^53, and u64::MAX was refused
    assert_eq!(parse_size("9007199254740993"), Ok(9_007_199_254_740_993));
    assert_eq!(parse_size(&u64::MAX.to_string()), Ok(u64::MAX));
    assert!(parse_size("18446744073709551616").is_err());
    // and format_bytes printed 2^60 + 1 as "1048576T" (2^60)
    assert_eq!(format_bytes((1 << 60) + 1), "1152921504606846977");
    assert_eq!(format_bytes((1 << 40) + (1 << 38)), "1.25T");
    assert_eq!(parse_size("1.25T"), Ok((1 << 40) + (1 << 38)));
    assert_eq!(
        parse_size("1.500000000000000000000000000000000000K"),
        Ok(1536)
    );
    assert_eq!(parse_size(".5K"), Ok(512));
    assert_eq!(parse_size("5."), Ok(5));
    assert!(parse_size(".").is_err());
}

#[test]
fn bs_split_shares_cannot_overflow() {
    assert!(parse_bs_split("512:4294967295,4K:1").is_err());
    assert!(parse_bs_split("4K:4294967294,8K:1").is_ok());
    assert!(parse_bs_split("4K:4294967296").is_err());
}

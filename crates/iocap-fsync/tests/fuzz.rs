//! `iocap fsync --sizes` and `--methods` never panic on what a user types, and what they accept
//! is sorted, in range and without repeats. Run longer with `PROPTEST_CASES=200000`
//! (`bench/fuzz.sh`).

use proptest::prelude::*;

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(2000)))]

    /// `iocap fsync --sizes` and `--methods`: lists of sizes and method names.
    #[test]
    fn fsync_list_parsers_never_panic(
        s in prop_oneof![
            any::<String>(),
            "([0-9.]{0,8}[KkMm]?,?){0,5}",
            "((fsync|fdatasync|o_dsync|o_direct_o_dsync|o_sync|o_direct_o_sync|rwf_dsync|[a-z_]{0,8}) ?,?){0,8}",
        ]
    ) {
        if let Ok(sizes) = iocap_fsync::parse_sizes(&s) {
            prop_assert!(!sizes.is_empty());
            prop_assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{:?}", sizes);
            prop_assert!(sizes.iter().all(|v| (512..=65536).contains(v) && v % 512 == 0));
        }
        if let Ok(methods) = iocap_fsync::parse_methods(&s) {
            prop_assert!(!methods.is_empty() && methods.len() <= iocap_fsync::Method::ALL.len());
            for (i, m) in methods.iter().enumerate() {
                prop_assert!(!methods[..i].contains(m), "{:?} repeats", methods);
            }
        }
    }
}

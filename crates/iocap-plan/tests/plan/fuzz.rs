//! No input may panic: suite and profile files are hand-edited and come from other machines.

use iocap_plan::{parse_profile, parse_suite};
use proptest::prelude::*;

/// The case count: `PROPTEST_CASES` when set (a longer run: `bench/fuzz.sh`), else `default`,
/// kept small for CI.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const KEYS: &[&str] = &[
    "name",
    "description",
    "family",
    "page",
    "pause",
    "key",
    "title",
    "role",
    "rw",
    "write_pct",
    "bs",
    "bs_split",
    "qd",
    "threads",
    "size",
    "duration",
    "warmup",
    "cooldown",
    "align",
    "direct",
    "write_through",
    "fsync_every",
    "rate_iops",
    "rate_mbps",
    "burst",
    "seed",
    "concurrent_with",
    "matrix",
    "qdd",
];

const VALUES: &[&str] = &[
    "\"t\"",
    "\"\"",
    "0",
    "-1",
    "1",
    "7",
    "4096",
    "4097",
    "1e308",
    "-0.0",
    "nan",
    "inf",
    "9223372036854775807",
    "18446744073709551615",
    "\"8K\"",
    "\"64M\"",
    "\"128M\"",
    "\"1e30K\"",
    "\"512:10,60K:1\"",
    "\"8K:0\"",
    "\"randrw\"",
    "\"read\"",
    "\"log\"",
    "\"30s\"",
    "\"999d\"",
    "true",
    "[1, 2, 4]",
    "[]",
    "[\"8K\", 0]",
    "{ on = 1, off = 0 }",
    "{ on = -1, off = 1 }",
    "{}",
    "\"\u{2013}\"",
    "1979-05-27",
];

const HEADERS: &[&str] = &[
    "[[test]]",
    "[[workload]]",
    "[defaults]",
    "[test.matrix]",
    "[[test.workload]]",
    "[test]",
    "[[test.matrix]]",
];

/// A line of a TOML-ish document: a header, a known key with a tricky value, or noise.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(HEADERS).prop_map(str::to_string),
        8 => (prop::sample::select(KEYS), prop::sample::select(VALUES)).prop_map(|(k, v)| format!("{k} = {v}")),
        1 => "[a-z_.\\[\\]=\"0-9 ]{0,20}",
    ]
}

fn document() -> impl Strategy<Value = String> {
    prop::collection::vec(line(), 0..24).prop_map(|lines| lines.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(1500)))]

    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        let _ = parse_suite(&text);
        let _ = parse_profile(&text);
    }

    #[test]
    fn arbitrary_toml_documents_never_panic(doc in document()) {
        let _ = parse_suite(&format!("name = \"s\"\n{doc}"));
        let _ = parse_profile(&format!("name = \"p\"\nfamily = \"f\"\npage = \"8K\"\n{doc}"));
        let _ = parse_suite(&doc);
    }

    #[test]
    fn whatever_parses_validates(doc in document()) {
        if let Ok(s) = parse_suite(&format!("name = \"s\"\n{doc}")) {
            for t in &s.tests {
                for w in &t.workloads {
                    crate::validate_with_target(&w.spec);
                }
            }
            let _ = s.render();
        }
        if let Ok(p) = parse_profile(&format!("name = \"p\"\nfamily = \"f\"\npage = \"8K\"\n{doc}")) {
            for w in &p.workloads {
                crate::validate_with_target(&w.spec);
            }
            let _ = p.suite().render();
        }
    }
}

#[test]
fn deep_nesting_neither_panics_nor_overflows_the_stack() {
    for n in [1_000, 100_000] {
        let arrays = format!("name = {}{}", "[".repeat(n), "]".repeat(n));
        let tables = format!("name = {}1{}", "{a=".repeat(n), "}".repeat(n));
        let dotted = format!("[{}b]", "a.".repeat(n));
        for text in [arrays, tables, dotted] {
            assert!(parse_suite(&text).is_err());
            assert!(parse_profile(&text).is_err());
        }
    }
}

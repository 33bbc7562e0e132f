//! No input may panic: batch files and parameter files come from other machines and other
//! editors, and a panic would lose the results of every test before the bad line.

use crate::{parse_args, parse_batch, parse_param_file};
use proptest::prelude::*;

/// The case count: `PROPTEST_CASES` when set (a longer run: `bench/fuzz.sh`), else `default`,
/// kept small for CI.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Arguments that look like SQLIO's often enough to reach the value parsers.
fn arg() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[-\u{2013}\u{2014}]{0,2}[a-zA-Z?6]{0,2}[0-9a-zA-Z=_\u{2013}\u{e9}]{0,12}",
        Just("--engine".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(2000)))]

    #[test]
    fn parse_args_never_panics(args in prop::collection::vec(arg(), 0..8), file in any::<String>()) {
        let read = |_: &str| Ok(file.clone());
        let _ = parse_args(&args, &read);
        let _ = parse_args(&args, &|_: &str| Err(std::io::Error::other("unreadable")));
    }

    #[test]
    fn parse_param_file_never_panics(text in any::<String>()) {
        let _ = parse_param_file(&text, "param.txt");
    }

    #[test]
    fn parse_param_file_lines_never_panic(
        lines in prop::collection::vec("[ \t#]{0,2}[a-z:\\\\.]{0,6}( [0-9xXa-f+-]{0,22}){0,5}\r?", 0..6)
    ) {
        let _ = parse_param_file(&lines.join("\n"), "param.txt");
    }

    #[test]
    fn parse_batch_never_panics(text in any::<String>()) {
        let _ = parse_batch(&text);
    }

    #[test]
    fn parse_batch_lines_never_panic(
        lines in prop::collection::vec("[@ ]{0,2}(call |rem |:: |echo )?(sqlio|iocap sqlio|x)?( [-\"<>|&12a-z.]{0,6}){0,6}\r?", 0..6)
    ) {
        if let Ok(calls) = parse_batch(&lines.join("\n")) {
            for c in calls {
                let _ = parse_args(&c.args, &|_: &str| Ok("a.dat 1".to_string()));
            }
        }
    }
}

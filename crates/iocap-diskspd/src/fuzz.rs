//! No command line may panic the parser or the views: a runbook's line may be mangled in any
//! way, and the CLI must answer with an error naming the flag, never a crash.

use crate::{parse, render_text, render_xml};
use iocap_model::fixture::{run as fixture, FixtureRun};
use iocap_model::RunResult;
use proptest::prelude::*;
use std::sync::OnceLock;

/// The case count: `PROPTEST_CASES` when set (a longer run), else `default`, small for CI.
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Arguments that look like DiskSpd's often enough to reach the value parsers.
fn arg() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[-\u{2013}]{0,2}[a-zA-Z?#]{0,2}[0-9a-zA-Z,=_.#\u{e9}]{0,10}",
        "-[bBcCdDfFgoOrsStTwWzZ][0-9]{0,4}[iKMGTb]{0,2}",
        // the switches issue 27 made run: -B<base>:<length>, -rs, -i/-j, -p, -vs
        "-[Brijpv]s?[0-9]{0,4}[KMb]?(:[0-9]{0,4}[KMb]?)?",
        Just("t.dat".to_string()),
    ]
}

/// One result with a latency histogram, made once: the fixture samples 200,000 latencies.
fn result() -> &'static RunResult {
    static R: OnceLock<RunResult> = OnceLock::new();
    R.get_or_init(|| {
        fixture(&FixtureRun {
            iops: 1000.0,
            duration_s: 2,
            ..FixtureRun::default()
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(1000)))]

    #[test]
    fn parse_and_render_never_panic(args in prop::collection::vec(arg(), 0..8)) {
        if let Ok(run) = parse(&args) {
            prop_assert_eq!(run.specs.len(), 1);
            let _ = render_text(result(), &run);
            let _ = render_xml(result(), &run);
        }
    }
}

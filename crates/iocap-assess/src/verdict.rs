//! The preflight capacity table: a handful of rows a DBA can read before go-live, each with a
//! verdict and one sentence on what it means and what to look at. The numbers alone are what
//! every other tool prints; the sentence is what iocap adds.
//!
//! Verdicts, per row kind (first rule that applies wins):
//! - **Latency-bounded IOPS** (random read at the latency target, random write, temp): FAIL if
//!   the test stopped on an error or did no I/O, or p99 is above the guideline's `warn`;
//!   WARN if a cache likely answered, p99 is above `pass`, or IOPS are below 80 % of the
//!   expectation; INFO if the test ran buffered (through the page cache the latency is not the
//!   device's); else PASS. For random reads the figure is the most IOPS of any measured point
//!   (a saturation curve's steps and throttled points, or the single test) with p99 at or under
//!   the data-read `pass` limit.
//! - **Log write latency at qd 1** (p50 and p99): FAIL on error or above `warn`; INFO if the
//!   writes were not made durable (no O_DSYNC, no fsync), since a commit waits for more;
//!   WARN above `pass`; else PASS.
//! - **Bandwidth** (log MB/s, scan, backup): FAIL on error or no I/O; WARN if a cache likely
//!   answered or below 80 % of the expectation (scan and backup: the lower of
//!   `sequential_mb_s` and the links); PASS at or above; INFO with nothing to hold against.
//!
//! A WARN for a shortfall comes with likely causes read from evidence in the results (see
//! [`crate::likely_causes`]); they go to the warnings as `metric: sentence`, because the
//! capacity row holds one sentence.

use iocap_model::{CapacityRow, Preflight};

use crate::preflight_input::{PreflightInput, RowKind};
use crate::rows::judge;
use crate::warnings;

/// The preflight result: one row per figure measured (rows whose test is missing are left
/// out), then the warnings: those about the run itself, then each row's likely causes as
/// `metric: sentence`.
pub fn capacity_table(input: &PreflightInput) -> Preflight {
    let mut rows = Vec::new();
    let mut causes = Vec::new();
    for kind in RowKind::ALL {
        let Some(j) = judge(input, kind) else {
            continue;
        };
        let metric = kind.metric(input);
        causes.extend(j.causes.iter().map(|c| format!("{metric}: {c}")));
        rows.push(CapacityRow {
            role: kind.role(),
            metric,
            value: j.value,
            unit: match kind {
                RowKind::RandomRead | RowKind::RandomWrite | RowKind::Temp => "IOPS",
                RowKind::LogP50 | RowKind::LogP99 => "us",
                _ => "MB/s",
            }
            .into(),
            verdict: j.verdict,
            against: j.against,
            sentence: j.sentence,
            test_idx: j.test_idx,
        });
    }
    let mut all = warnings::warnings(input);
    for c in causes {
        if !all.contains(&c) {
            all.push(c);
        }
    }
    Preflight {
        profile: input.profile.clone(),
        quick: input.quick,
        device_class: input.classes.describe(),
        rows,
        warnings: all,
        file_bytes: None,
        cache_included: false,
    }
}

//! iocap's judgements: what the measured tests mean. The engine measures and the reports show;
//! this crate decides. Where the saturation knee is and when to stop raising the queue depth
//! ([`saturate`]), how well volumes scale together ([`mod@scaleup`]), and the preflight capacity
//! table with its PASS/WARN/FAIL verdicts, likely causes and warnings ([`verdict`]), held
//! against latency guidelines per device class ([`guidelines`]) and the user's expectations
//! ([`expect`]), and the spread of a test repeated with `--repeat` ([`repeats()`]). A recorded
//! trace is described by [`workload`] and placed on a saturate run's curve by [`headroom`].
//! Which figure of a run regressed or improved against a base, and whether that fails
//! `iocap compare --fail-on-regression`, is [`compare`]'s.
//!
//! Everything here is a pure function of results already measured (plus TOML text handed in as
//! a string), so every rule is unit-tested on constructed curves and a later iocap can recompute
//! a verdict from a stored run. Odd input (no I/O, no latency, NaN, empty curves) gives an
//! answer that says so, never a panic.

pub mod bucket;
pub mod burst;
pub mod cachescan;
mod causes;
pub mod compare;
mod cost_notes;
pub mod evidence;
pub mod expect;
mod fmt;
pub mod guidelines;
pub mod headroom;
pub mod limit;
mod preflight_input;
mod repeats;
mod rows;
pub mod saturate;
pub mod scaleup;
pub mod stored_bucket;
pub mod verdict;
mod warnings;
pub mod workload;

pub use causes::{likely_causes, CPU_BOUND_SHARE};
pub use cost_notes::notes as cost_notes;
pub use evidence::{implausible, judge_class, transport, ClassEvidence, ClassJudgement};
pub use expect::{parse_links, Expectations};
pub use guidelines::{ClassGuidelines, DeviceClass, Guidelines, Limit, RoleClasses};
pub use limit::{judge_limit, DeviceTime, DriverTime};
pub use preflight_input::{Measured, PreflightInput, RowKind, EXPECTATION_SHARE};
pub use repeats::repeats;
pub use saturate::{
    next_step, ramp, summarize, throttle_points, SaturateConfig, StepDecision, StopReason,
};
pub use scaleup::{group_sizes, scaleup, SLOW_BELOW_MEDIAN_PCT};
pub use verdict::capacity_table;
pub use warnings::warnings;

use thiserror::Error;

/// What can be wrong with the TOML or text handed to this crate.
#[derive(Debug, Error, PartialEq)]
pub enum AssessError {
    #[error("guidelines: {0}")]
    Guidelines(String),
    #[error("expectations: {0}")]
    Expectations(String),
    #[error("links {input:?}: {why}")]
    Links { input: String, why: String },
}

#[cfg(test)]
mod tests;

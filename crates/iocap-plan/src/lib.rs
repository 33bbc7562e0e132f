//! What iocap runs: database workload profiles and test suites, written as TOML and expanded
//! into [`JobSpec`]s whose targets the CLI fills in.
//!
//! Why data and not code: a DBA should be able to read what "the SQL Server profile" or "the
//! OLTP suite" actually issues, copy it, and change a queue depth without rebuilding iocap. The
//! built-in profiles (`profiles/*.toml`) and suites (`suites/*.toml`) are written in the very
//! format users write theirs in (see docs/profiles-and-suites.md), and go through the same parser, so every rule
//! the parser enforces also holds for what ships. The one exception is `sqlio-classic`, which is
//! built from a SQLIO batch file through `iocap-sqlio`, so that it stays exactly what that
//! batch file runs.
//!
//! The crate is pure: it reads TOML text it is given and never a file, a clock or the
//! environment. Every expanded spec passes [`JobSpec::validate`] once a target is added; a file
//! that would give one that does not is refused at parse time, naming the test.

mod captured;
mod captured_words;
mod fields;
mod profile;
mod sqlio_classic;
mod streams;
mod suite;
mod summary;
mod values;

pub use captured::profile_from_workload;
pub use captured_words::CAPTURED_FAMILY;
pub use fields::{BASE_DURATION_S, BASE_MIXED_WRITE_PCT, BASE_ROLE, BASE_WARMUP_S};
pub use profile::{builtin_profiles, parse_profile, profile, Profile, Workload};
pub use sqlio_classic::{sqlio_suite, SQLIO_CLASSIC_BATCH, SQLIO_CLASSIC_PARAM};
pub use suite::{
    builtin_suites, parse_suite, suite, PlannedTest, PlannedWorkload, Suite, DEFAULT_PAUSE_S,
    MAX_TESTS,
};
pub use summary::{
    describe_workload, format_secs, list_profiles, list_runnable, list_suites, ProfileSummary,
    SuiteSummary,
};
pub use values::ROLES;

#[cfg(doc)]
use iocap_model::JobSpec;

/// Why a profile or suite was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// Valid TOML with an unknown key or a value of the wrong type or out of range. The
    /// message is `toml`'s: it names the line and column, quotes the line and names the key.
    #[error("{0}")]
    Toml(String),
    /// Not TOML at all (`/etc/passwd` given as a suite): `toml`'s message, with the line the
    /// parser stopped at.
    #[error("{0}")]
    NotToml(String),
    /// Every key is valid alone but together they are not (e.g. `write_pct` on a pure read);
    /// `context` names the test or workload.
    #[error("{context}: {problem}")]
    Invalid { context: String, problem: String },
    /// The matrices of a suite expand to more than [`MAX_TESTS`] tests.
    #[error("{context} expands to {count} tests; a suite may hold at most {MAX_TESTS}")]
    TooManyTests { context: String, count: u128 },
    /// No built-in profile or suite has this name.
    #[error("unknown {kind} '{name}'; the built-in ones are: {known}")]
    Unknown {
        kind: &'static str,
        name: String,
        known: String,
    },
    /// A SQLIO batch file that a suite is built from was refused by `iocap-sqlio`.
    #[error("sqlio batch: {0}")]
    Sqlio(String),
}

impl PlanError {
    pub(crate) fn invalid(context: impl Into<String>, problem: impl Into<String>) -> Self {
        PlanError::Invalid {
            context: context.into(),
            problem: problem.into(),
        }
    }
}

/// `text` read as a profile's or suite's raw form. An error tells a file that is no TOML at all
/// ([`PlanError::NotToml`]) from valid TOML whose key or value is wrong ([`PlanError::Toml`],
/// worded as such: `toml` heads both "TOML parse error").
pub(crate) fn from_toml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, PlanError> {
    toml::from_str(text).map_err(|e| {
        let m = e.to_string().trim_end().to_string();
        if toml::from_str::<toml::Table>(text).is_ok() {
            PlanError::Toml(m.replacen("TOML parse error at", "key or value not accepted at", 1))
        } else {
            PlanError::NotToml(m)
        }
    })
}

//! iocap-verify: does the storage give back what was written, and keep what it acknowledged?
//!
//! A verifier for database people: pages that describe themselves ([`page`]), written and read
//! the way a database does (random page updates, durable log appends, read-ahead scans, random
//! reads; [`run`]) while a lock-free map ([`map`]) knows which generation each page must hold,
//! so every read is checked and every fault is named ([`classify`]). With a [`journal`] of
//! acknowledged writes, [`check`] tells after a crash or power cut whether an acknowledged write
//! was lost. The crate knows nothing of the command line or the result store: it takes a
//! configuration and returns an [`iocap_model::Verify`].

pub mod check;
pub mod classify;
pub mod file;
pub mod journal;
pub mod map;
pub mod page;
pub mod report;
pub mod run;

pub use check::{check, CheckConfig, CheckOutcome};
pub use run::{run, VerifyConfig, VerifyOutcome};

/// Why a run or check could not be done (failures found are not errors: they are the result).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// Refused to protect data the user had.
    #[error("{0}")]
    Refused(String),
    /// The request cannot work as given.
    #[error("{0}")]
    Invalid(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("interrupted while filling {0}")]
    Interrupted(String),
}
pub mod uring;

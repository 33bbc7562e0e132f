//! iocap-verify: does the storage give back what was written, and keep what it acknowledged?
//!
//! A verifier for database people: pages that describe themselves ([`page`]), written and read
//! the way a database does (random page updates, durable log appends, read-ahead scans, random
//! reads; [`run`], through the engine's io_uring or psync backend) while a lock-free map
//! ([`map`]) knows which generation each page must hold, so every read is checked and every
//! fault is named ([`classify`]). With a [`journal`] of acknowledged writes, [`check`] tells
//! after a crash or power cut whether an acknowledged write was lost. The crate knows nothing of
//! the command line or the result store: it takes a configuration and returns an
//! [`iocap_model::Verify`].

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

use std::path::{Path, PathBuf};

use iocap_engine::IoFailure;

/// The verify file a run makes when given a directory, or nothing (then in the current one).
pub const DEFAULT_TARGET: &str = "iocap-verify.testfile";

/// The file target `t` names: `t`, or [`DEFAULT_TARGET`] in it when it is a directory.
pub fn target_path(t: Option<&Path>) -> PathBuf {
    let mut p = t.map_or_else(|| PathBuf::from(DEFAULT_TARGET), Path::to_path_buf);
    if p.is_dir() {
        p.push(DEFAULT_TARGET);
    }
    p
}

/// Why a run or check could not be done (failures found are not errors: they are the result).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// Refused to protect data the user had.
    #[error("{0}")]
    Refused(String),
    /// The request cannot work as given.
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Io(#[from] IoFailure),
    #[error("interrupted while filling {0}")]
    Interrupted(String),
}

/// For `map_err`: the I/O error met while doing `context`.
pub(crate) fn io_err(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> VerifyError {
    let wrap = IoFailure::with(context);
    move |source| VerifyError::Io(wrap(source))
}

/// A buffer for I/O, or the error that says it could not be had.
pub(crate) fn buffer(bytes: usize) -> Result<iocap_engine::buffers::AlignedBuf, VerifyError> {
    iocap_engine::buffers::AlignedBuf::new(bytes).map_err(io_err("cannot allocate buffers"))
}

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
mod error;
pub mod file;
pub mod journal;
pub mod map;
pub mod page;
pub mod report;
pub mod run;

pub use check::{check, CheckConfig, CheckOutcome};
pub use error::VerifyError;
pub use run::{run, VerifyConfig, VerifyOutcome};

use std::path::{Path, PathBuf};

/// The verify file a run makes when given a directory, or nothing (then in the current one).
pub const DEFAULT_TARGET: &str = "iocap-verify.testfile";

/// The file target `t` names: `t`, or [`DEFAULT_TARGET`] in it when it is a directory.
pub fn target_path(t: Option<&Path>) -> PathBuf {
    let p = t.map_or_else(|| PathBuf::from(DEFAULT_TARGET), Path::to_path_buf);
    iocap_engine::safety::file_in(&p, DEFAULT_TARGET)
}

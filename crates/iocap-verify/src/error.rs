//! Why a run or check could not be done, and the two helpers every module makes such errors
//! with. Its own module, so the modules that return these errors and the crate root that
//! re-exports them do not import each other.

use iocap_engine::buffers::AlignedBuf;
use iocap_engine::IoFailure;

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
pub(crate) fn buffer(bytes: usize) -> Result<AlignedBuf, VerifyError> {
    AlignedBuf::new(bytes).map_err(io_err("cannot allocate buffers"))
}

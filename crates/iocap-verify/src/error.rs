//! Why a run or check could not be done, and the two helpers every module makes such errors
//! with. Its own module, so the modules that return these errors and the crate root that
//! re-exports them do not import each other.

use iocap_engine::AlignedBuf;
use iocap_engine::{IoFailure, TargetError};
use iocap_platform::claim::ClaimError;

/// Why a run or check could not be done (failures found are not errors: they are the result).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// Refused to protect data the user had, a request that cannot work as given, or an I/O
    /// failure: the same reasons a test target gives.
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("interrupted while filling {0}")]
    Interrupted(String),
}

impl VerifyError {
    /// Refused to protect data the user had.
    pub fn refused(why: String) -> Self {
        TargetError::Refused(why).into()
    }

    /// The request cannot work as given.
    pub fn invalid(why: String) -> Self {
        TargetError::Invalid(why).into()
    }

    /// Whether this is a refusal to protect the user's data.
    pub fn is_refusal(&self) -> bool {
        matches!(self, Self::Target(TargetError::Refused(_)))
    }
}

impl From<ClaimError> for VerifyError {
    fn from(e: ClaimError) -> Self {
        TargetError::from(e).into()
    }
}

impl From<IoFailure> for VerifyError {
    fn from(e: IoFailure) -> Self {
        TargetError::Io(e).into()
    }
}

/// For `map_err`: the I/O error met while doing `context`.
pub(crate) fn io_err(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> VerifyError {
    let wrap = IoFailure::with(context);
    move |source| wrap(source).into()
}

/// A buffer for I/O, or the error that says it could not be had.
pub(crate) fn buffer(bytes: usize) -> Result<AlignedBuf, VerifyError> {
    AlignedBuf::new(bytes).map_err(io_err("cannot allocate buffers"))
}

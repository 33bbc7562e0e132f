//! An I/O error with what was being done when it came ("cannot open X: Permission denied"),
//! one type for the engine's [`TargetError`](crate::TargetError) and `iocap-verify`'s error,
//! so the wording and the error's source are carried one way.

use std::io;

use iocap_platform::claim::ClaimError;

#[derive(Debug, thiserror::Error)]
#[error("{context}: {source}")]
pub struct IoFailure {
    pub context: String,
    #[source]
    pub source: io::Error,
}

impl IoFailure {
    /// For `map_err`: the error met while doing `context`.
    pub fn with(context: impl Into<String>) -> impl FnOnce(io::Error) -> Self {
        let context = context.into();
        move |source| Self { context, source }
    }
}

/// Why a target could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// Refused to protect data the user had.
    #[error("{0}")]
    Refused(String),
    /// The request cannot work on this target.
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Io(#[from] IoFailure),
    #[error("interrupted while creating {0}; the partial file was removed")]
    Interrupted(String),
}

/// The claim's refusals and failures (`iocap_platform::claim`), in the same words.
impl From<ClaimError> for TargetError {
    fn from(e: ClaimError) -> Self {
        match e {
            ClaimError::Refused(why) => Self::Refused(why),
            ClaimError::Invalid(why) => Self::Invalid(why),
            ClaimError::Io { context, source } => Self::Io(IoFailure { context, source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_what_was_done_and_keeps_the_source() {
        let e = IoFailure::with("cannot open f")(io::Error::from(io::ErrorKind::NotFound));
        assert!(e.to_string().starts_with("cannot open f: "), "{e}");
        let source = std::error::Error::source(&e).unwrap();
        assert_eq!(source.to_string(), e.source.to_string());
    }
}

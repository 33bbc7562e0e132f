//! The write log: every request that changes a file's contents or size, and what the fault
//! layer did with it.
//!
//! Integrity tests need more than "the checker found something": they must show that the fault
//! they injected is the one the checker reported, and that no write ever landed outside the file
//! region the workload owned. The log records the request as the client issued it (offset and
//! length as the kernel passed them to the daemon) next to the outcome, so such assertions do
//! not depend on reading the backing file back.

use crate::rules::RuleId;

/// The kind of request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOp {
    /// `write` / `pwrite` (one FUSE request; a large client write may arrive as several).
    Write,
    /// `fallocate` with the given mode flags.
    Fallocate {
        /// The `mode` argument of fallocate(2).
        mode: i32,
    },
    /// A size change through `truncate`, `ftruncate`, `set_len` or `O_TRUNC`; `offset` is the
    /// new size and `len` is 0.
    Truncate,
}

/// What happened to the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Done as asked.
    Passed,
    /// Acknowledged but not written ([`crate::Fault::DropWrites`]).
    Dropped,
    /// Only the first `written` bytes reached the file ([`crate::Fault::TearWrites`]).
    Torn {
        /// Bytes written from the start of the request.
        written: u64,
    },
    /// Written in full at this offset instead of the intended one
    /// ([`crate::Fault::Misdirect`]).
    MisdirectedTo(u64),
    /// Failed with this errno: injected (`EIO`, `ENOSPC`) or returned by the backing file.
    Failed(i32),
}

impl Outcome {
    /// Where the request's bytes actually landed, as a byte range of the file (`None` when
    /// nothing was written). For `Truncate` and `Fallocate` this is the requested range.
    pub fn landed(&self, offset: u64, len: u64) -> Option<std::ops::Range<u64>> {
        match *self {
            Outcome::Passed => Some(offset..offset + len),
            Outcome::Torn { written } => Some(offset..offset + written.min(len)),
            Outcome::MisdirectedTo(at) => Some(at..at + len),
            Outcome::Dropped | Outcome::Failed(_) => None,
        }
    }
}

/// One logged request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRecord {
    /// Path of the file relative to the backing directory.
    pub file: String,
    /// The kind of request.
    pub op: WriteOp,
    /// Offset the client asked for (for `Truncate`, the new size).
    pub offset: u64,
    /// Length the client asked for (0 for `Truncate`).
    pub len: u64,
    /// What the fault layer did.
    pub outcome: Outcome,
    /// The rule that decided the outcome, if one did (latency rules never do).
    pub rule: Option<RuleId>,
}

impl WriteRecord {
    /// The byte range that really changed in the backing file, if any; see [`Outcome::landed`].
    pub fn landed(&self) -> Option<std::ops::Range<u64>> {
        match self.op {
            WriteOp::Truncate => None,
            _ => self.outcome.landed(self.offset, self.len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landed_ranges() {
        let rec = |outcome| WriteRecord {
            file: "f".into(),
            op: WriteOp::Write,
            offset: 8192,
            len: 8192,
            outcome,
            rule: None,
        };
        assert_eq!(rec(Outcome::Passed).landed(), Some(8192..16384));
        assert_eq!(
            rec(Outcome::Torn { written: 4096 }).landed(),
            Some(8192..12288)
        );
        assert_eq!(
            rec(Outcome::MisdirectedTo(16384)).landed(),
            Some(16384..24576)
        );
        assert_eq!(rec(Outcome::Dropped).landed(), None);
        assert_eq!(rec(Outcome::Failed(libc::EIO)).landed(), None);
    }
}

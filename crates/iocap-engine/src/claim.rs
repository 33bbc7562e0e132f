//! A command's claim on a target it tests, fills or rewrites: made once, from the descriptor
//! the safety checks were made on (or the file just created), and held for as long as the
//! target is used. It holds two things:
//! - which file or device that was ([`iocap_platform::target::FileId`]): every later open by
//!   path (the test's flags, direct I/O, a verify's check) goes through [`Claim::holds`], which
//!   refuses a descriptor of anything else (a file swapped in under the name meanwhile);
//! - the exclusive lock on a file iocap may write (`lock`), so a second run, a replay or a
//!   verify on the same file is refused naming this process.
//!
//! The engine's `prepare_targets` claims every target (its `PreparedTarget` keeps the claim,
//! which fsync, cost and replay go through), and verify claims its file the same way
//! ([`Claim::take`]), so one type makes every such check. What may be claimed at all is
//! docs/safety.md's decision (`safety::decide`), made before.

use std::fs::File;

use iocap_platform::target::{file_id, FileId};

use crate::error::{IoFailure, TargetError};
use crate::lock::{self, FileLock};
use crate::TargetKind;

/// A target claimed for this command (see the module's comment).
#[derive(Debug)]
pub struct Claim {
    shown: String,
    kind: TargetKind,
    id: FileId,
    _lock: FileLock,
}

impl Claim {
    /// Claims the target open as `f` (found at `shown`, of `kind`): its id, and when `lock`
    /// the exclusive lock on it (or this process's share of it). A file another process holds
    /// is refused, naming it; `Ok((claim, Some(warning)))` where the file system takes no
    /// lock.
    pub fn take(
        f: &File,
        shown: &str,
        kind: TargetKind,
        lock: bool,
    ) -> Result<(Claim, Option<String>), TargetError> {
        let id = file_id(f, kind).map_err(IoFailure::with(format!("cannot stat {shown}")))?;
        let (held, warning) = if lock {
            lock::lock(f, shown)?
        } else {
            (FileLock::none(), None)
        };
        let claim = Claim {
            shown: shown.to_string(),
            kind,
            id,
            _lock: held,
        };
        Ok((claim, warning))
    }

    /// Refuses `f`, the target opened again by its path, unless it is the claimed one.
    pub fn holds(&self, f: &File) -> Result<(), TargetError> {
        let shown = &self.shown;
        let id = file_id(f, self.kind).map_err(IoFailure::with(format!("cannot stat {shown}")))?;
        if id == self.id {
            Ok(())
        } else {
            Err(TargetError::Refused(crate::safety::changed(
                shown, "opening",
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_swapped_in_under_the_claimed_name_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"first").unwrap();
        let f = File::open(&p).unwrap();
        let (claim, _) = Claim::take(&f, "f", TargetKind::File, true).unwrap();
        claim.holds(&File::open(&p).unwrap()).unwrap();
        std::fs::rename(&p, d.path().join("moved")).unwrap();
        std::fs::write(&p, b"second").unwrap();
        let e = claim.holds(&File::open(&p).unwrap()).unwrap_err();
        assert!(e.to_string().contains("changed"), "{e}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_claimed_file_is_refused_to_another_process_s_claim_but_shared_within_this_one() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let (a, _) = Claim::take(&File::open(&p).unwrap(), "f", TargetKind::File, true).unwrap();
        // a second claim in this process shares the lock (two workloads on one file)
        let (b, _) = Claim::take(&File::open(&p).unwrap(), "f", TargetKind::File, true).unwrap();
        // another open file description, as another process would have, is refused
        let other = File::open(&p).unwrap();
        assert!(iocap_platform::flock::try_lock(&other).is_err());
        drop((a, b));
        iocap_platform::flock::try_lock(&other).unwrap();
    }
}

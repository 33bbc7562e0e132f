//! The claim's hold on one target a command tests, fills or rewrites: taken once, from the
//! descriptor the safety checks were made on (or the file just created), and held for as long
//! as the target is used. It holds two things:
//! - which file or device that was ([`FileId`]): every later open by path (the test's flags,
//!   direct I/O, a verify's check) goes through [`Held::holds`], which refuses a descriptor of
//!   anything else (a file swapped in under the name meanwhile);
//! - the exclusive lock on a file iocap may write ([`super::lock`]), so a second run, a replay
//!   or a verify on the same file is refused naming this process.
//!
//! The engine's `prepare_targets` takes one for every target (its `PreparedTarget` keeps it,
//! which fsync, cost and replay go through), and verify takes one on its file the same way
//! ([`Held::take`]), so one type makes every such check. What may be held at all is
//! docs/safety.md's decision (the engine's `safety::decide`), made before; the command's claim
//! ([`super::Claim`]) has kept every other path it writes off the target before that.

use std::fs::File;

use iocap_model::TargetKind;

use super::lock::{self, FileLock};
use super::ClaimError;
use crate::target::{file_id, FileId};

/// A target held for this command (see the module's comment).
#[derive(Debug)]
pub struct Held {
    shown: String,
    kind: TargetKind,
    id: FileId,
    _lock: FileLock,
}

impl Held {
    /// Holds the target open as `f` (found at `shown`, of `kind`): its id, and when `lock` the
    /// exclusive lock on it (or this process's share of it). A file another process holds is
    /// refused, naming it; `Ok((held, Some(warning)))` where the file system takes no lock.
    pub fn take(
        f: &File,
        shown: &str,
        kind: TargetKind,
        lock: bool,
    ) -> Result<(Held, Option<String>), ClaimError> {
        let id = file_id(f, kind).map_err(ClaimError::io(format!("cannot stat {shown}")))?;
        let (lock, warning) = if lock {
            lock::lock(f, shown)?
        } else {
            (FileLock::none(), None)
        };
        let held = Held {
            shown: shown.to_string(),
            kind,
            id,
            _lock: lock,
        };
        Ok((held, warning))
    }

    /// Refuses `f`, the target opened again by its path, unless it is the one held.
    pub fn holds(&self, f: &File) -> Result<(), ClaimError> {
        let shown = &self.shown;
        let id = file_id(f, self.kind).map_err(ClaimError::io(format!("cannot stat {shown}")))?;
        if id == self.id {
            Ok(())
        } else {
            Err(ClaimError::Refused(changed(shown, "opening")))
        }
    }
}

/// The refusal of a path that is no longer the file that was checked (a file swapped in
/// meanwhile is never written), while iocap was `doing` it (`checking`, `opening`, `testing`).
pub fn changed(shown: &str, doing: &str) -> String {
    format!("{shown} changed while iocap was {doing} it; not writing to it")
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
        let (held, _) = Held::take(&f, "f", TargetKind::File, true).unwrap();
        held.holds(&File::open(&p).unwrap()).unwrap();
        std::fs::rename(&p, d.path().join("moved")).unwrap();
        std::fs::write(&p, b"second").unwrap();
        let e = held.holds(&File::open(&p).unwrap()).unwrap_err();
        assert!(e.to_string().contains("changed"), "{e}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_held_file_is_refused_to_another_process_but_shared_within_this_one() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let (a, _) = Held::take(&File::open(&p).unwrap(), "f", TargetKind::File, true).unwrap();
        // a second hold in this process shares the lock (two workloads on one file)
        let (b, _) = Held::take(&File::open(&p).unwrap(), "f", TargetKind::File, true).unwrap();
        // another open file description, as another process would have, is refused
        let other = File::open(&p).unwrap();
        assert!(crate::flock::try_lock(&other).is_err());
        drop((a, b));
        crate::flock::try_lock(&other).unwrap();
    }
}

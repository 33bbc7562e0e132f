//! One run at a time on a file iocap may write: the claim's lock, taken by [`super::Held::take`].
//! Two runs started on the same new file both filled it (the second saw a fill under way,
//! `state=filling`, and refilled it from offset 0); two tests on one file measure each other.
//! So the engine's `prepare_targets` claims every file it may write (its own test files, which
//! even a read test fills when unfinished, and a user's file written with `--allow-overwrite`)
//! with the lock before it looks at the fill, and its `PreparedTarget` holds the claim until the
//! test is over. A second run refuses at once (exit 2), naming the process that holds the lock.
//! `iocap verify`, which rewrites every byte of its file, takes the same lock through the same
//! claim, so a verify and a run or a replay on one file refuse each other too.
//!
//! The mechanism, chosen for what each kind of lock does on Linux:
//! - `flock(2)`, on a descriptor of our own (a dup of the one checked): the lock belongs to the
//!   open file description, so the other descriptors prepare, fill and test through may be
//!   opened and closed freely. A classic POSIX lock (`F_SETLK`) would be dropped as soon as the
//!   process closed *any* descriptor of the file, which preparing does several times.
//! - The holder's pid: `F_GETLK` cannot name it for `flock` or for OFD locks (their `l_pid` is
//!   -1), but `/proc/locks` lists each `flock` with the pid that took it, by device and inode;
//!   `/proc/PID/comm` gives its command. Nothing is written into the file or its marker.
//! - Within one process, a file prepared twice at once (two workloads of a suite on one role's
//!   file, two targets naming one file) shares the lock: `flock` would refuse the second open
//!   file description even in the same process, so held locks are kept in a table by identity.
//! - On NFS, `flock` is emulated with POSIX locks by the client and may be lost when a
//!   descriptor closes; where the file system takes no lock at all (ENOLCK), the run goes on
//!   with a warning that another run is not kept out.
//!
//! Windows: no lock is taken. Its byte-range locks (`LockFileEx`) are mandatory, so they would
//! stop the test's own I/O through the handles each worker reopens; two runs on one file there
//! are not kept apart. The system calls are [`crate::flock`]'s.

use std::fs::File;
use std::sync::{Arc, Mutex, Weak};

use super::ClaimError;
use crate::flock as plat;

/// The lock on one claimed file: released when the last claim of this process that holds it
/// is dropped.
#[derive(Debug, Clone, Default)]
pub struct FileLock {
    _held: Option<Arc<Locked>>,
}

/// A locked descriptor, by the identity of its file.
#[derive(Debug)]
struct Locked {
    _fd: File,
    key: FileId,
}

/// A file's identity: its device and inode ([`crate::filetag::dev_ino`]).
type FileId = (u64, u64);

/// The locks this process holds, so a file claimed twice at once shares one.
static HELD: Mutex<Vec<(FileId, Weak<Locked>)>> = Mutex::new(Vec::new());

impl FileLock {
    /// No lock: a block device (O_EXCL keeps writers apart), a user's file only read.
    pub fn none() -> Self {
        Self { _held: None }
    }

    fn of(h: Arc<Locked>) -> Self {
        Self { _held: Some(h) }
    }
}

/// Takes the exclusive lock on the file open as `f` (found at `shown`), or shares the one this
/// process holds on it. `Ok((lock, Some(warning)))` where the file system takes no lock.
pub fn lock(f: &File, shown: &str) -> Result<(FileLock, Option<String>), ClaimError> {
    let key = crate::filetag::dev_ino(f)
        .map_err(|e| ClaimError::Invalid(format!("cannot stat {shown}: {e}")))?;
    let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
    held.retain(|(_, w)| w.strong_count() > 0);
    if let Some(h) = held
        .iter()
        .find(|(k, _)| *k == key)
        .and_then(|(_, w)| w.upgrade())
    {
        return Ok((FileLock::of(h), None));
    }
    // a descriptor of its own: the lock lives as long as it does, whatever becomes of `f`
    let fd = f
        .try_clone()
        .map_err(|e| ClaimError::Invalid(format!("cannot lock {shown}: {e}")))?;
    match plat::try_lock(&fd) {
        Ok(()) => {}
        Err(e) if plat::is_held(&e) => return Err(busy(shown, key)),
        Err(e) => {
            let why = format!(
                "{shown} could not be locked ({e}): another iocap run on it would not be kept \
                 out"
            );
            return Ok((FileLock::none(), Some(why)));
        }
    }
    let h = Arc::new(Locked { _fd: fd, key });
    held.push((h.key, Arc::downgrade(&h)));
    Ok((FileLock::of(h), None))
}

/// The refusal of a file another process holds, naming that process where it can be read.
fn busy(shown: &str, key: FileId) -> ClaimError {
    let who = match plat::holder(key) {
        Some((pid, Some(comm))) => format!("process {pid} ({comm})"),
        Some((pid, None)) => format!("process {pid}"),
        None => "another process (its pid could not be read from /proc/locks)".into(),
    };
    ClaimError::Refused(format!(
        "{shown} is in use: {who} holds its lock, filling or testing it. iocap runs one test \
         at a time on a file; wait for that run to end, or give another file"
    ))
}

// flock is Linux's: on Windows no lock is taken (see the module's note)
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_second_description_is_refused_but_this_process_shares_its_own() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        std::fs::write(&p, b"x").unwrap();
        let a = File::open(&p).unwrap();
        let (first, warn) = lock(&a, "t").unwrap();
        assert!(warn.is_none());
        // another open of the file in this process shares the lock held
        let b = File::open(&p).unwrap();
        let (second, _) = lock(&b, "t").unwrap();
        // flock itself refuses a second description, as it would another process
        let c = File::open(&p).unwrap();
        let e = plat::try_lock(&c).unwrap_err();
        assert!(plat::is_held(&e), "{e}");
        drop((a, b, first));
        assert!(plat::try_lock(&c).is_err(), "still held by the second");
        drop(second);
        plat::try_lock(&c).unwrap();
    }
}

//! Linux: `flock(2)`, and its holder from `/proc/locks` and `/proc/PID/comm`.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// `flock(LOCK_EX | LOCK_NB)`: never waits.
pub fn try_lock(f: &File) -> io::Result<()> {
    // SAFETY: flock on a descriptor this File owns, for the duration of the call.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether [`try_lock`] failed because another open file description holds the lock.
pub fn is_held(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EWOULDBLOCK)
}

/// The pid (not this process) holding the lock on the file `(dev, ino)`, and its command.
pub fn holder((dev, ino): (u64, u64)) -> Option<(u32, Option<String>)> {
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    let pid = *crate::parse::flock::holders(&text, (libc::major(dev), libc::minor(dev)), ino)
        .iter()
        .find(|p| **p != std::process::id())?;
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty());
    Some((pid, comm))
}

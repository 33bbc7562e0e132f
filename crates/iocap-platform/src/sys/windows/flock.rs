//! Windows: no lock is taken. Its byte-range locks (`LockFileEx`) are mandatory, so they would
//! stop a test's own I/O through the handles each worker reopens.

use std::fs::File;
use std::io;

/// No lock (see the module's note).
pub fn try_lock(_: &File) -> io::Result<()> {
    Ok(())
}

/// Never: no lock is taken.
pub fn is_held(_: &io::Error) -> bool {
    false
}

/// Nobody: no lock is taken.
pub fn holder(_: (u64, u64)) -> Option<(u32, Option<String>)> {
    None
}

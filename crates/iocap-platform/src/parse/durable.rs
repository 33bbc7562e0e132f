//! Why a log-flush method's handle could not be opened (`crate::durable`): the same answers on
//! both systems, so `iocap fsync` words each once. A type only, below `sys`, which returns it.

use std::io;

/// Why [`Prepared::open`](crate::durable::Prepared::open) gave no handle.
#[derive(Debug)]
pub enum OpenError {
    /// The file system refused the method's flags (`crate::durable::REFUSED`): the method is
    /// not offered here.
    Refused,
    /// The open itself failed.
    Open(io::Error),
    /// The handle opened could not be read back (Linux's `stat`).
    Stat(io::Error),
    /// The event an overlapped write signals could not be made (Windows).
    Event(io::Error),
    /// The path names another file than the one prepared (Linux reopens by path): it is not
    /// written.
    Changed,
}

//! What opening and checking a test's target needs that differs by system: the names the
//! refusals use (a link, a device, direct I/O, the cache), how a device is recognised (by its
//! type on Linux, by its name on Windows), the opens (read-only for the checks, the test's with
//! its flags, a new file, the fill's), the errors that mean "direct I/O refused" or "in use",
//! and the fill's positioned write. The engine's `target` and `safety` decide with them; the
//! rules stay there.
//!
//! Each system's file is `sys/<system>/target.rs`, with the same items on both.

use std::fs::File;
use std::io;

use iocap_model::TargetKind;

/// Which file or device an open descriptor is: a regular file's device and inode (Windows: its
/// volume serial number and file index), a block device's number and type (Windows, which names
/// devices by path, has none: every device descriptor is the one its path names). Two
/// descriptors with the same id are the same target, so a target opened again by path is
/// refused when its id is not the one checked (a file swapped in under the name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId(u64, u64);

/// The id of `f`, opened as a target of `kind`.
pub fn file_id(f: &File, kind: TargetKind) -> io::Result<FileId> {
    crate::sys::target::file_id(f, kind).map(|(a, b)| FileId(a, b))
}

pub use crate::sys::target::{
    create_new, device_in_use, direct_refused_error, is_block_device, is_busy, is_direct_refused,
    is_link, is_link_refused, names_device, no_follow, open_fill, open_read, open_test,
    output_flags, write_at, CACHE, DEVICE, DIRECT, LINK,
};

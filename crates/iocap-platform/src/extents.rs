//! Where a file's data lies on the disk, for the trace's file map (`capture --files`): its
//! extents (FIEMAP on Linux, asked without FIEMAP_FLAG_SYNC, so never a flush of iocap's own),
//! the whole disk under its file system's device with the device's start on it (sysfs), and
//! what tells a changed file at the next scan ([`Stamp`]). Windows has no FIEMAP: there its
//! `extents` and `disk_of` say so, so the trace's scanner builds and reports on both.
//!
//! FIEMAP's records are read purely (`parse/extents.rs`: [`FiemapExtent`], [`take`]), so they
//! are tested on any system; each system's calls are in `sys/<system>/extents.rs`, with the
//! same functions on both.

pub use crate::parse::extents::{take, FiemapExtent, Stamp, Taken};
pub use crate::sys::extents::{disk_of, extents, stamp};

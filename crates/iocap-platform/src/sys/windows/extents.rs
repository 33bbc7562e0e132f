//! Windows: no FIEMAP, and no disk to map a file system's device to; the calls say so (the
//! trace's file map is Linux's, as the capture is), and a file's stamp is its size alone.

use std::fs::Metadata;
use std::io;
use std::path::Path;

use crate::parse::extents::Stamp;

/// No device, inode or time: a changed size alone tells a changed file.
pub fn stamp(_: &Metadata) -> Stamp {
    Stamp::default()
}

/// FIEMAP is Linux's.
pub fn extents(_: &Path) -> io::Result<(Vec<[u64; 2]>, bool)> {
    Err(io::Error::other("FIEMAP is Linux's"))
}

/// File extents are read on Linux only.
pub fn disk_of(_: u64) -> Result<((u32, u32), u64), String> {
    Err("file extents are read on Linux only (FIEMAP)".into())
}

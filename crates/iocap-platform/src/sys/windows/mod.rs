//! Windows: Win32 and the native API through windows-sys; `win` holds the wrappers the other
//! files (and, through the crate root, other crates) share.

pub mod clock;
pub mod devinfo;
pub mod durable;
pub mod extents;
pub mod filetag;
pub mod flock;
pub mod host;
pub mod power;
pub mod procstat;
pub mod rights;
pub mod target;
pub mod topology;
pub mod volume;
pub mod win;

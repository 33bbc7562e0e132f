//! Linux: /proc, /sys, ioctls and statx through libc.

pub mod clock;
pub mod devinfo;
pub mod durable;
pub mod extents;
pub mod filetag;
pub mod flock;
pub mod host;
pub mod procstat;
pub mod target;
pub mod topology;

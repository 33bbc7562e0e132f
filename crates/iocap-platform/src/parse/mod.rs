//! What a system gives, parsed and decoded purely: the lowest layer of the crate, so that its
//! imports run one way. `sys` reads the system and hands what it read to these parsers; the
//! neutral modules at the root re-export both (the parsers' types and functions, and the
//! chosen system's readers). A parser here imports neither, so it is tested on any system with
//! the text or bytes each system gives. (`winstruct`, the Windows ioctl structures, is of the
//! same kind and public on its own.)

pub mod durable;
pub mod extents;
pub mod flock;
pub mod host;
pub mod procstat;
pub mod topology;

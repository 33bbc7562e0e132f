//! A short text kept with a file outside its data, and the file's identity: the extended
//! attribute `user.iocap` on Linux, the named stream `<file>:iocap` on Windows (where the volume
//! has named streams); device and inode, or volume serial and file index. The engine's marker
//! of its own test files is written and read with it; where no tag can be kept, the marker's
//! sidecar is opened with [`open_sidecar`] (never through a link) and bound to [`dev_ino`].

pub use crate::sys::filetag::{dev_ino, open_sidecar, read_attr, write_attr};

//! An exclusive advisory lock on an open file, and who holds it: `flock(2)` on Linux, whose
//! holder `/proc/locks` names ([`holders`] reads its text); none on Windows (see
//! `sys/windows/flock.rs`). The claim's lock (`claim/lock.rs`) keeps one run at a time on a
//! file with it.

pub use crate::parse::flock::holders;
pub use crate::sys::flock::{holder, is_held, try_lock};

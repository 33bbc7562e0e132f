//! The one place a system is chosen, after mio's `sys`: `linux/` and `windows/` hold files of
//! the same names (`clock`, `devinfo`, `durable`, `extents`, `filetag`, `flock`, `host`,
//! `procstat`, `target`, `topology`) with the same public items, and exactly one of them is
//! compiled in. The crate root's modules re-export from here, so a caller never names a system;
//! what only one system has (Windows' `power`, `rights`, `volume` and `win`) is re-exported by
//! the root under `cfg` too. A function one system lacks is a compile error on that system, not
//! a stub that answers wrongly at run time; where a caller that builds on both needs it, the
//! other system's says it cannot (as Windows' `extents` does), never a made-up answer.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use self::linux::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use self::windows::*;

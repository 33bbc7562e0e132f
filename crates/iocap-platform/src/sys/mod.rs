//! The one place a system is chosen, after mio's `sys`: `linux/` and `windows/` hold files of
//! the same names (`clock`, `devinfo`, `filetag`, `flock`, `host`,
//! `procstat`, `topology`) with the same public
//! functions, and exactly one of them is compiled in. The crate root's modules re-export from
//! here, so a caller never names a system; what only one system has (`win`) is re-exported by
//! the root under `cfg` too. A function one system lacks is a compile error on that system, not
//! a stub that answers wrongly at run time.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use self::linux::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use self::windows::*;

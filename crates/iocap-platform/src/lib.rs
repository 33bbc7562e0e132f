//! iocap's platform layer: what the rest of iocap asks of the operating system outside the I/O
//! itself. The clock every latency is read from (`clock`), the host's fingerprint (`host`),
//! system-wide CPU times (`procstat`) and where the CPUs sit (`topology`), what the system says
//! of a target's device (`devinfo`), and on Windows the Win32 wrappers (`win`) with the ioctl
//! structures they return, decoded purely (`winstruct`, built and tested everywhere).
//!
//! Why a crate of its own: these used to be public modules of the engine, so the audit, the
//! monitor, the console and cost depended on the engine for a clock, a hostname or a disk's
//! counters. Here they depend on this small crate instead, and the engine's front door is the
//! run alone (docs/ARCHITECTURE.md, "Invariants").
//!
//! Layout, after mio: each system's calls live in `sys/linux/` and `sys/windows/`, in files of
//! the same names with the same functions, chosen by `cfg` in one place (`sys/mod.rs`). The
//! modules at this root are platform-neutral: they hold the pure parsers and decoders (tested
//! on any system) and re-export the chosen system's functions, so callers never write `cfg`
//! to ask for a fact. New platform code (a system call another crate needs outside its hot
//! path) goes here, not behind a `#[path]` or a `cfg(windows)` module elsewhere (`tests/tidy.rs`
//! keeps that so).

pub mod clock;
pub mod devinfo;
pub mod host;
pub mod procstat;
pub mod topology;
pub mod winstruct;

mod sys;

#[cfg(windows)]
pub use sys::win;

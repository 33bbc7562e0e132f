//! iocap's platform layer: what the rest of iocap asks of the operating system outside the I/O
//! of a test itself. The clock every latency is read from (`clock`), the host's fingerprint
//! (`host`), system-wide CPU times (`procstat`) and where the CPUs sit (`topology`), what the
//! system says of a target's device (`devinfo`), how a test's target is opened and checked
//! (`target`), a command's claim on every path it touches, which holds its targets (their lock
//! and identity) and opens its outputs (`claim`), an exclusive lock on a file and its holder
//! (`flock`), a tag kept with a file and its identity (`filetag`), fsync's durable writes
//! (`durable`), where a file's extents lie (`extents`); on Windows only, the audit's volume, power and account queries (`volume`,
//! `power`, `rights`) and the Win32 wrappers (`win`), with the ioctl structures they return
//! decoded purely (`winstruct`, built and tested everywhere).
//!
//! Why a crate of its own: these used to be public modules of the engine, so the audit, the
//! monitor, the console and cost depended on the engine for a clock, a hostname or a disk's
//! counters. Here they depend on this small crate instead, and the engine's front door is the
//! run alone (docs/ARCHITECTURE.md, "Invariants").
//!
//! Layout, after mio, in three layers whose imports run one way (`tests/tidy.rs` forbids a
//! cycle): the pure parsers and decoders of what a system gives (`parse`, and `winstruct` for
//! Windows' ioctl structures), tested on any system; each system's calls in `sys/linux/` and
//! `sys/windows/`, in files of the same names with the same functions, chosen by `cfg` in one
//! place (`sys/mod.rs`), which read the system and hand what they read to those parsers; and
//! the platform-neutral modules at this root, which re-export the chosen system's functions
//! with the parsers' types (and hold what is the same on both, as the clock's self-check), so
//! callers never write `cfg` to ask for a fact. New platform code (a system call another crate
//! needs, the engine's I/O backends apart) goes here, not behind a `#[path]` or a
//! `cfg(windows)` module elsewhere (`tests/tidy.rs` keeps that so).

pub mod claim;
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
pub mod winstruct;

mod parse;
mod sys;

#[cfg(windows)]
pub use sys::{power, rights, volume, win};

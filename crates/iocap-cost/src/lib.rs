//! The CPU cost of I/O (`iocap cost`): which points to run ([`matrix`]), the page cache around
//! them ([`cache`]), system-wide CPU from `/proc/stat` on the engine's window edges
//! ([`procstat`]), the least-squares cost model ([`fit`]) and the report with its answers in
//! plain words ([`build`]). The engine measures each point; this crate turns the points into
//! CPU per I/O three ways. Method and caveats: docs/cost.md.

pub mod build;
pub mod cache;
pub mod fit;
pub mod matrix;
pub mod procstat;

pub use build::{account, answers, models, point, stretch, Questions, MIN_IOS, STRETCHES};
pub use matrix::{plan, PlannedPoint};
pub use procstat::{StatWatch, WindowCpu};

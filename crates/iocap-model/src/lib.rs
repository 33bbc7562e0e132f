//! The data iocap speaks: what a test asks for ([`spec`]), what it measured ([`result`]) and
//! the unit parsers both share ([`units`]).
//!
//! This crate is pure: no I/O, no clocks, no environment. The engine, the front ends and the
//! reports all depend on it, so the JSON a user scripts against is defined in exactly one place.
//! The result structs *are* the JSON contract: fields are only ever added, never renamed, and
//! units live in field names (`_ns`, `_us`, `_bytes`, `_s`).

mod names;

pub mod assess;
pub mod audit;
pub mod burst;
pub mod cachescan;
pub mod command;
pub mod cost;
pub mod detail;
pub mod domain;
pub mod engines;
pub mod figures;
pub mod filekind;
pub mod fixture;
pub mod flags;
pub mod fsync;
pub mod hist;
pub mod kind;
pub mod limit;
pub mod opstats;
pub mod os;
pub mod places;
pub mod ranks;
pub mod replay;
pub mod request;
pub mod result;
pub mod spec;
pub mod stored;
pub mod text;
pub mod timer;
pub mod uncertainty;
pub mod units;
pub mod verify;
pub mod workload;

pub use assess::*;
pub use burst::{BurstBucket, CountedIn, InsideBurst, Refill, StoredBucket};
pub use cachescan::*;
pub use command::RunCommand;
pub use cost::*;
pub use detail::*;
pub use domain::*;
pub use engines::{Engine, EngineFeature, System};
pub use filekind::file_kind;
pub use flags::*;
pub use fsync::*;
pub use kind::{Payload, RunKind};
pub use limit::*;
pub use os::*;
pub use ranks::*;
pub use result::*;
pub use spec::*;
pub use stored::*;
pub use timer::*;
pub use uncertainty::*;
pub use units::{
    format_bytes, format_count, format_us, human_bytes, parse_duration, parse_rate, parse_size,
    UnitError,
};
pub use verify::*;

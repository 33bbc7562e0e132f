//! What a block request does, as a trace records it and as a recorded workload
//! ([`crate::workload`]) and a replay ([`crate::replay`]) count it. The trace file stores it as
//! its number (`repr(u8)`, [`Op::from_u8`]), the JSON and CSV as its name (`write-zeroes`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a request does. A flush carries no data (`bytes` 0); a write with a preflush or FUA is
/// a `Write` with those flags (the trace's `IoFlags`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[repr(u8)]
pub enum Op {
    #[default]
    Read = 0,
    Write = 1,
    Flush = 2,
    Discard = 3,
    WriteZeroes = 4,
    /// A request of another kind (secure erase, zone management, a driver's own).
    Other = 5,
}

crate::names::names! {
    Op {
        Read => "read",
        Write => "write",
        Flush => "flush",
        Discard => "discard",
        WriteZeroes => "write-zeroes",
        Other => "other",
    }
}

impl Op {
    /// From its number in a file; `None` for a number no version wrote.
    pub fn from_u8(v: u8) -> Option<Op> {
        Op::ALL.get(v as usize).copied()
    }

    /// A read or a write: a request that moves data.
    pub fn moves_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }
}

#[cfg(test)]
mod tests {
    use super::Op;

    #[test]
    fn the_number_in_a_file_is_the_place_in_all() {
        for (i, op) in Op::ALL.into_iter().enumerate() {
            assert_eq!(op as usize, i);
            assert_eq!(Op::from_u8(i as u8), Some(op));
        }
        assert_eq!(Op::from_u8(6), None);
    }
}

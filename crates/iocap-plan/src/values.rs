//! The value types of profile and suite files. Each one checks its value while the TOML is
//! deserialized, not afterwards, because only then does the `toml` crate know where the value
//! sits: an error raised here comes back with the line, the column and the offending line of the
//! file, so `qd = 0` or `bs = "7"` points at itself.

use iocap_model::{
    parse_bs_split, parse_duration, parse_rate, parse_size, BsWeight, RwMode, MAX_BS_BYTES, MAX_QD,
    MAX_THREADS, MIN_BS_BYTES,
};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

/// The file roles a workload can stand for; the CLI maps each to a directory.
pub const ROLES: [iocap_model::Role; 4] = iocap_model::Role::FILES;

/// A number or a string, as users write sizes and durations both ways (`bs = 8192`,
/// `bs = "8K"`, `duration = 60`, `duration = "1m"`).
#[derive(Debug, Clone)]
pub(crate) enum Scalar {
    Int(i64),
    Float(f64),
    Str(String),
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a string such as \"8K\" or \"30s\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                i64::try_from(v)
                    .map(Scalar::Int)
                    .map_err(|_| E::custom("number too large"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Str(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A byte count: a bare integer is bytes, a string takes K, M, G, T (powers of 1024).
fn bytes(s: Scalar) -> Result<u64, String> {
    match s {
        Scalar::Int(n) => u64::try_from(n).map_err(|_| format!("size {n} is negative")),
        Scalar::Float(f) => Err(format!(
            "size {f} is not a whole number of bytes; write e.g. \"8K\""
        )),
        Scalar::Str(s) => parse_size(&s).map_err(|e| e.to_string()),
    }
}

fn check_block(bs: u64) -> Result<u64, String> {
    if (MIN_BS_BYTES..=MAX_BS_BYTES).contains(&bs) && bs % 512 == 0 {
        Ok(bs)
    } else {
        Err(format!(
            "block size {bs} B must be a multiple of 512 B from 512 B to 64 MiB"
        ))
    }
}

/// A block size (`bs`, `page`, `align`, matrix `bs`): 512 B to 64 MiB in steps of 512 B.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "Scalar")]
pub(crate) struct BlockSize(pub u64);

impl TryFrom<Scalar> for BlockSize {
    type Error = String;
    fn try_from(s: Scalar) -> Result<Self, String> {
        check_block(bytes(s)?).map(BlockSize)
    }
}

/// A test-file size: above zero.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "Scalar")]
pub(crate) struct Size(pub u64);

impl TryFrom<Scalar> for Size {
    type Error = String;
    fn try_from(s: Scalar) -> Result<Self, String> {
        match bytes(s)? {
            0 => Err("size must be greater than zero".into()),
            n => Ok(Size(n)),
        }
    }
}

/// A length of time in seconds: a bare number is seconds, a string takes ms, s, m, h.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "Scalar")]
pub(crate) struct Secs(pub f64);

impl TryFrom<Scalar> for Secs {
    type Error = String;
    fn try_from(s: Scalar) -> Result<Self, String> {
        let v = match s {
            Scalar::Int(n) => n as f64,
            Scalar::Float(f) => f,
            Scalar::Str(s) => parse_duration(&s).map_err(|e| e.to_string())?,
        };
        if !v.is_finite() || !(0.0..=366.0 * 86400.0).contains(&v) {
            return Err(format!(
                "duration {v} s must be from 0 to a year; write e.g. \"30s\" or \"5m\""
            ));
        }
        Ok(Secs(v))
    }
}

/// A rate limit (IOPS or MB/s): above zero; strings take k and M (decimal).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "Scalar")]
pub(crate) struct Rate(pub f64);

impl TryFrom<Scalar> for Rate {
    type Error = String;
    fn try_from(s: Scalar) -> Result<Self, String> {
        let v = match s {
            Scalar::Int(n) => n as f64,
            Scalar::Float(f) => f,
            Scalar::Str(s) => parse_rate(&s).map_err(|e| e.to_string())?,
        };
        if v.is_finite() && v > 0.0 {
            Ok(Rate(v))
        } else {
            Err(format!("rate {v} must be greater than zero"))
        }
    }
}

/// A whole number in `MIN..=MAX`: queue depth, threads, write percentage, fsync interval.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "i64")]
pub(crate) struct Count<const MIN: u32, const MAX: u32>(pub u32);

impl<const MIN: u32, const MAX: u32> TryFrom<i64> for Count<MIN, MAX> {
    type Error = String;
    fn try_from(n: i64) -> Result<Self, String> {
        if (i64::from(MIN)..=i64::from(MAX)).contains(&n) {
            Ok(Count(n as u32))
        } else {
            Err(format!("{n} is out of range: use {MIN} to {MAX}"))
        }
    }
}

pub(crate) type Qd = Count<1, MAX_QD>;
pub(crate) type Threads = Count<1, MAX_THREADS>;
pub(crate) type Percent = Count<0, 100>;
pub(crate) type Every = Count<0, { u32::MAX }>;

/// An I/O engine by its `--engine` name on this system (`psync`, `io_uring`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub(crate) struct Engine(pub iocap_model::EngineChoice);

impl TryFrom<String> for Engine {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        iocap_model::EngineChoice::parse(&s).map(Engine)
    }
}

/// An access pattern by its `--rw` name.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub(crate) struct Rw(pub RwMode);

impl TryFrom<String> for Rw {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        RwMode::parse(&s).map(Rw).ok_or_else(|| {
            format!("unknown rw '{s}': use read, write, randread, randwrite, rw or randrw")
        })
    }
}

/// A block-size mix as for `--bs-split`: `"512:10,4K:30,60K:10"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub(crate) struct BsSplit(pub Vec<BsWeight>);

impl TryFrom<String> for BsSplit {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let mix = parse_bs_split(&s).map_err(|e| e.to_string())?;
        for w in &mix {
            check_block(w.bs_bytes)?;
        }
        Ok(BsSplit(mix))
    }
}

/// One of [`ROLES`].
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub(crate) struct Role(pub iocap_model::Role);

impl TryFrom<String> for Role {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        iocap_model::Role::parse_file_role(&s).map(Role)
    }
}

/// `burst = { on = "5s", off = "25s" }`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BurstCfg {
    pub on: Secs,
    pub off: Secs,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_strings_both_work() {
        assert_eq!(BlockSize::try_from(Scalar::Int(8192)), Ok(BlockSize(8192)));
        assert_eq!(
            BlockSize::try_from(Scalar::Str("60K".into())),
            Ok(BlockSize(61440))
        );
        assert!(BlockSize::try_from(Scalar::Float(8192.5)).is_err());
        assert!(Size::try_from(Scalar::Int(-1)).is_err());
        assert_eq!(Secs::try_from(Scalar::Str("2m".into())), Ok(Secs(120.0)));
        assert_eq!(Secs::try_from(Scalar::Float(0.25)), Ok(Secs(0.25)));
        assert!(Secs::try_from(Scalar::Float(f64::INFINITY)).is_err());
        assert_eq!(Rate::try_from(Scalar::Str("2k".into())), Ok(Rate(2000.0)));
        assert_eq!(Qd::try_from(4096), Ok(Count(4096)));
        assert!(Qd::try_from(4097).is_err());
        assert!(Every::try_from(i64::from(u32::MAX) + 1).is_err());
        assert_eq!(Rw::try_from("RandRW".to_string()), Ok(Rw(RwMode::RandRw)));
    }
}

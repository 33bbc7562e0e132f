//! clap value parsers for the commands' flags: thin wrappers over the model's parsers
//! (`iocap_model::flags` and `units`), which hold the rules and their messages.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Arg, Command};
use iocap_model::{parse_bs_split, BsWeight, EngineChoice, RwMode, System, UntilStableFlag};

/// clap wants `fn(&str) -> Result<T, String>`; the model's unit parsers fail with a `UnitError`.
fn text<T, E: ToString>(r: Result<T, E>) -> Result<T, String> {
    r.map_err(|e| e.to_string())
}

pub use iocap_model::{parse_burst as burst_arg, parse_latency_us as us_arg, parse_pct as pct_arg};

/// A value parser that offers `names` (to the help and to shell completion, which would offer
/// file names otherwise) and parses with the model's `parse`, which also takes other
/// spellings (any case, aliases) and words its own refusal.
#[derive(Clone)]
pub struct Offered<T> {
    names: &'static [&'static str],
    parse: fn(&str) -> Result<T, String>,
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Offered<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &Command, arg: Option<&Arg>, value: &OsStr) -> Result<T, clap::Error> {
        self.parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.names.iter().map(PossibleValue::new)))
    }
}

const RW_NAMES: [&str; 6] = {
    let mut names = [""; 6];
    let mut i = 0;
    while i < 6 {
        names[i] = RwMode::ALL[i].name();
        i += 1;
    }
    names
};

/// `--rw`: read, write, randread, randwrite, rw or randrw.
pub fn rw_arg() -> Offered<RwMode> {
    Offered {
        names: &RW_NAMES,
        parse: iocap_model::parse_rw,
    }
}

/// `--engine`: this system's engine names.
pub fn engine_arg() -> Offered<EngineChoice> {
    Offered {
        names: System::HOST.engines(),
        parse: iocap_model::parse_engine,
    }
}

pub fn size_arg(s: &str) -> Result<u64, String> {
    text(iocap_model::parse_size(s))
}
pub fn duration_arg(s: &str) -> Result<f64, String> {
    text(iocap_model::parse_duration(s))
}
pub fn rate_arg(s: &str) -> Result<f64, String> {
    text(iocap_model::parse_rate(s))
}
pub fn until_stable_arg(s: &str) -> Result<UntilStableFlag, String> {
    UntilStableFlag::parse(s)
}

/// A parsed `--bs-split` (a newtype: clap would take a bare Vec for a repeated flag).
#[derive(Debug, Clone)]
pub struct Mix(pub Vec<BsWeight>);

pub fn bs_split_arg(s: &str) -> Result<Mix, String> {
    text(parse_bs_split(s).map(Mix))
}

/// A parsed list of block sizes (`4K,16K,64K`), or `none` for no sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeList(pub Vec<u64>);

/// `none`, or block sizes separated by commas, each parsed as `--bs` is.
pub fn size_list_arg(s: &str) -> Result<SizeList, String> {
    if s.trim().eq_ignore_ascii_case("none") {
        return Ok(SizeList(Vec::new()));
    }
    let mut v = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!(
                "'{s}' has an empty size; give sizes like 4K,16K,64K or none"
            ));
        }
        v.push(size_arg(part)?);
    }
    v.sort_unstable();
    v.dedup();
    Ok(SizeList(v))
}

#[cfg(test)]
mod size_list_tests {
    use super::*;

    #[test]
    fn sizes_parse_sorted_and_none_is_empty() {
        assert_eq!(size_list_arg("64K,4k,16K").unwrap().0, [4096, 16384, 65536]);
        assert!(size_list_arg("NONE").unwrap().0.is_empty());
        assert!(size_list_arg("4K,,8K").unwrap_err().contains("empty size"));
        assert!(size_list_arg("4K,lots").is_err());
    }
}

/// A parsed list of durations in seconds (`10s,30s`), or `none` for no durations.
#[derive(Debug, Clone, PartialEq)]
pub struct DurationList(pub Vec<f64>);

/// `none`, or durations separated by commas, each parsed as `--duration` is.
pub fn duration_list_arg(s: &str) -> Result<DurationList, String> {
    if s.trim().eq_ignore_ascii_case("none") {
        return Ok(DurationList(Vec::new()));
    }
    s.split(',')
        .map(|p| match p.trim() {
            "" => Err(format!(
                "'{s}' has an empty duration; give durations like 10s,30s or none"
            )),
            p => duration_arg(p),
        })
        .collect::<Result<Vec<f64>, String>>()
        .map(DurationList)
}

#[cfg(test)]
mod duration_list_tests {
    use super::*;

    #[test]
    fn durations_parse_in_order_and_none_is_empty() {
        assert_eq!(duration_list_arg("30s,10s").unwrap().0, [30.0, 10.0]);
        assert!(duration_list_arg("none").unwrap().0.is_empty());
        assert!(duration_list_arg("10s,")
            .unwrap_err()
            .contains("empty duration"));
        assert!(duration_list_arg("soon").is_err());
    }
}

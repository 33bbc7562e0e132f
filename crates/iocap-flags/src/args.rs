//! clap value parsers for the commands' flags: thin wrappers over the model's parsers
//! (`iocap_model::flags` and `units`), which hold the rules and their messages.

use iocap_model::{parse_bs_split, BsWeight, UntilStableFlag};

/// clap wants `fn(&str) -> Result<T, String>`; the model's unit parsers fail with a `UnitError`.
fn text<T, E: ToString>(r: Result<T, E>) -> Result<T, String> {
    r.map_err(|e| e.to_string())
}

pub use iocap_model::{
    parse_burst as burst_arg, parse_engine as engine_arg, parse_latency_us as us_arg,
    parse_pct as pct_arg, parse_rw as rw_arg,
};

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

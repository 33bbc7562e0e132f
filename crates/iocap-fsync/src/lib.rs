//! Log-flush methods compared (issue 7): write + fsync, write + fdatasync, O_DSYNC,
//! O_DIRECT|O_DSYNC, O_SYNC, O_DIRECT|O_SYNC and pwritev2 with RWF_DSYNC, at queue depth 1, for
//! write sizes from 512 B to 64 KiB, the way pg_test_fsync measures them: a 16 MiB test file,
//! rewritten at offset 0 (or walked through with [`Offsets::Cycle`]).
//!
//! [`measure`] runs the points, [`analyse`] turns them into warnings for durable writes too fast
//! for the device and a recommendation per database family. The result is the model's
//! [`iocap_model::FsyncReport`]; its text view is `iocap_report::fsync`.

pub mod analyse;
pub mod measure;
pub mod method;
mod request;

use thiserror::Error;

pub use iocap_model::DbFamily;
pub use measure::{resolve_target, run, Outcome, Plan, DEFAULT_FILE, FILE_SIZE};
pub use method::Method;
pub use request::Request;

/// Where the writes of one point go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Offsets {
    /// Offset 0 every time, as pg_test_fsync's one-write tests do.
    #[default]
    Same,
    /// Offset 0, then the next `size` bytes, and so on, wrapping at the end of the file.
    Cycle,
}

impl Offsets {
    /// By [`Offsets::name`].
    pub fn parse(s: &str) -> Option<Self> {
        [Offsets::Same, Offsets::Cycle]
            .into_iter()
            .find(|o| o.name() == s)
    }

    pub fn name(self) -> &'static str {
        match self {
            Offsets::Same => "same",
            Offsets::Cycle => "cycle",
        }
    }
}

#[derive(Debug, Error)]
pub enum FsyncError {
    #[error(transparent)]
    Target(#[from] iocap_engine::TargetError),
    #[error("{0}")]
    Refused(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// The smallest and largest write size compared.
pub const MIN_SIZE: u64 = 512;
pub const MAX_SIZE: u64 = 64 << 10;

/// The default sizes: 512 B, 4K, 8K, 16K, 64K.
pub const DEFAULT_SIZES: [u64; 5] = [512, 4 << 10, 8 << 10, 16 << 10, 64 << 10];
/// The sizes of `--quick`: 8K and 16K, the WAL and redo writes.
pub const QUICK_SIZES: [u64; 2] = [8 << 10, 16 << 10];

/// Parses `--sizes`, e.g. `8K,16K`: each a multiple of 512 B from 512 B to 64 KiB, returned in
/// ascending order without duplicates.
pub fn parse_sizes(s: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!(
                "'{s}' has an empty size; give sizes separated by commas, e.g. 8K,16K"
            ));
        }
        let v = iocap_model::parse_size(part).map_err(|e| e.to_string())?;
        if !(MIN_SIZE..=MAX_SIZE).contains(&v) {
            return Err(format!(
                "write size {part} is outside 512 B to 64K, the range of log writes"
            ));
        }
        if v % 512 != 0 {
            return Err(format!(
                "write size {part} is not a multiple of 512 B, the smallest sector"
            ));
        }
        out.push(v);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Parses `--methods`, e.g. `fdatasync,o_direct_o_dsync`: method ids ([`Method::id`]), measured
/// in the order given (so a run can follow another tool's order); a repeated id counts once.
pub fn parse_methods(s: &str) -> Result<Vec<Method>, String> {
    let known = || {
        Method::ALL
            .iter()
            .map(|m| m.id())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!(
                "'{s}' has an empty method; give method names separated by commas, e.g. \
                 fdatasync,o_direct_o_dsync"
            ));
        }
        let m = Method::from_id(&part.to_ascii_lowercase())
            .ok_or_else(|| format!("unknown method '{part}'; the methods are {}", known()))?;
        if !out.contains(&m) {
            out.push(m);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_sorted_and_deduplicated() {
        assert_eq!(parse_sizes("16K,8K").unwrap(), vec![8192, 16384]);
        assert_eq!(parse_sizes(" 8k , 8192 ").unwrap(), vec![8192]);
        assert_eq!(parse_sizes("512,64K").unwrap(), vec![512, 65536]);
        assert_eq!(parse_sizes("1.5K").unwrap(), vec![1536]);
    }

    #[test]
    fn sizes_out_of_range_or_malformed_are_refused() {
        for (bad, why) in [
            ("", "empty"),
            ("8K,,16K", "empty"),
            ("8K,", "empty"),
            ("256", "outside"),
            ("0", "outside"),
            ("128K", "outside"),
            ("1000", "multiple of 512"),
            ("8X", "unit"),
            ("-8K", ""),
        ] {
            let e = parse_sizes(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn methods_parse_in_the_order_given_without_repeats() {
        assert_eq!(
            parse_methods("o_direct_o_dsync, fdatasync,FSYNC,fdatasync").unwrap(),
            vec![Method::ODirectODsync, Method::Fdatasync, Method::Fsync]
        );
        let all: Vec<&str> = Method::ALL.iter().map(|m| m.id()).collect();
        assert_eq!(parse_methods(&all.join(",")).unwrap(), Method::ALL.to_vec());
    }

    #[test]
    fn unknown_or_empty_methods_are_refused_with_the_list() {
        for (bad, why) in [
            ("", "empty method"),
            ("fsync,,fdatasync", "empty method"),
            ("open_datasync", "unknown method 'open_datasync'"),
            ("fsync,o_direct", "unknown method 'o_direct'"),
        ] {
            let e = parse_methods(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let e = parse_methods("nope").unwrap_err();
        assert!(
            e.contains("o_direct_o_sync") && e.contains("rwf_dsync"),
            "{e}"
        );
    }
}

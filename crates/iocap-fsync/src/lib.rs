//! Log-flush methods compared (issue 7): write + fsync, write + fdatasync, O_DSYNC,
//! O_DIRECT|O_DSYNC, O_SYNC, O_DIRECT|O_SYNC and pwritev2 with RWF_DSYNC on Linux; on Windows
//! (issue 28) WriteFile + FlushFileBuffers, FILE_FLAG_WRITE_THROUGH, and FILE_FLAG_NO_BUFFERING |
//! FILE_FLAG_WRITE_THROUGH overlapped (SQL Server's log). At queue depth 1, for write sizes from
//! 512 B to 64 KiB, the way pg_test_fsync measures them: a 16 MiB test file, rewritten at offset
//! 0 (or walked through with [`Offsets::Cycle`]).
//!
//! [`measure`] runs the points (the loop is shared; the calls are the platform's,
//! `iocap_platform::durable`, opened through `site`), [`analyse`] turns them into warnings for
//! durable writes too fast for the device and a recommendation per database family. The result
//! is the model's [`iocap_model::FsyncReport`]; its text view is `iocap_report::fsync`.

pub mod analyse;
mod durable;
pub mod measure;
pub mod method;
mod request;
mod site;

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

/// Parses `--methods`, e.g. `fdatasync,o_direct_o_dsync`: method ids ([`Method::id`]) of this
/// system ([`method::native`]), measured in the order given (so a run can follow another
/// tool's order); a repeated id counts once.
pub fn parse_methods(s: &str) -> Result<Vec<Method>, String> {
    parse_methods_of(s, method::native(), method::native_system())
}

/// [`parse_methods`] for the system named `system`, whose methods are `native`: another
/// system's method is refused with the methods of this one.
pub fn parse_methods_of(s: &str, native: &[Method], system: &str) -> Result<Vec<Method>, String> {
    let known = || native.iter().map(|m| m.id()).collect::<Vec<_>>().join(", ");
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            let example = if native.contains(&Method::Fdatasync) {
                "fdatasync,o_direct_o_dsync"
            } else {
                "write_through,no_buffering_write_through"
            };
            return Err(format!(
                "'{s}' has an empty method; give method names separated by commas, e.g. \
                 {example}"
            ));
        }
        let m = Method::from_id(&part.to_ascii_lowercase())
            .ok_or_else(|| format!("unknown method '{part}'; the methods are {}", known()))?;
        if !native.contains(&m) {
            return Err(format!(
                "method '{part}' ({}) is a {} method; on {system} the methods are {}",
                m.label(),
                m.system(),
                known()
            ));
        }
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
            parse_methods_of(
                "o_direct_o_dsync, fdatasync,FSYNC,fdatasync",
                &Method::LINUX,
                "Linux"
            )
            .unwrap(),
            vec![Method::ODirectODsync, Method::Fdatasync, Method::Fsync]
        );
        for (native, system) in [(&Method::LINUX[..], "Linux"), (&Method::WINDOWS, "Windows")] {
            let all: Vec<&str> = native.iter().map(|m| m.id()).collect();
            assert_eq!(
                parse_methods_of(&all.join(","), native, system).unwrap(),
                native.to_vec()
            );
        }
        assert_eq!(
            parse_methods_of(
                "no_buffering_write_through,FLUSH_FILE_BUFFERS",
                &Method::WINDOWS,
                "Windows"
            )
            .unwrap(),
            vec![Method::NoBufferingWriteThrough, Method::FlushFileBuffers]
        );
        // this build's own
        assert_eq!(parse_methods(method::native()[0].id()).unwrap().len(), 1);
    }

    #[test]
    fn unknown_or_empty_methods_are_refused_with_the_list() {
        let linux = |s: &str| parse_methods_of(s, &Method::LINUX, "Linux");
        for (bad, why) in [
            ("", "empty method"),
            ("fsync,,fdatasync", "empty method"),
            ("open_datasync", "unknown method 'open_datasync'"),
            ("fsync,o_direct", "unknown method 'o_direct'"),
        ] {
            let e = linux(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let e = linux("nope").unwrap_err();
        assert!(
            e.contains("o_direct_o_sync") && e.contains("rwf_dsync"),
            "{e}"
        );
        assert!(!e.contains("write_through"), "Linux lists its own: {e}");
        let e = linux("fsync,").unwrap_err();
        assert!(e.contains("e.g. fdatasync,o_direct_o_dsync"), "{e}");
        let e = parse_methods_of("", &Method::WINDOWS, "Windows").unwrap_err();
        assert!(
            e.contains("e.g. write_through,no_buffering_write_through"),
            "{e}"
        );
    }

    #[test]
    fn another_systems_method_is_refused_naming_this_systems_methods() {
        let e = parse_methods_of("fsync,write_through", &Method::LINUX, "Linux").unwrap_err();
        assert_eq!(
            e,
            "method 'write_through' (WRITE_THROUGH) is a Windows method; on Linux the methods are \
             fsync, fdatasync, o_dsync, o_direct_o_dsync, o_sync, o_direct_o_sync, rwf_dsync"
        );
        let e = parse_methods_of("O_DSYNC", &Method::WINDOWS, "Windows").unwrap_err();
        assert_eq!(
            e,
            "method 'O_DSYNC' (O_DSYNC) is a Linux method; on Windows the methods are \
             flush_file_buffers, write_through, no_buffering_write_through"
        );
    }
}

//! What can go wrong with a trace, in words a user can act on: every error names the file, and
//! for bad content the byte offset (binary files) or the line (text files), and how many
//! records were read before it. A reader that meets bad content yields every record before it,
//! then this error, then ends.

use std::path::PathBuf;

/// The formats iocap reads, as the "unknown format" error lists them.
pub const KNOWN_FORMATS: &str = "iocap's own trace (`iocap capture`), blktrace's binary \
     per-CPU files (DEV.blktrace.N, from `blktrace -d DEV`; give the files or the base name \
     DEV) and fio's iolog, versions 2 and 3 (`--write_iolog`)";

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("writing the export: {0}")]
    Write(#[source] std::io::Error),
    #[error(
        "{}: already exists and is kept; iocap does not write over a file",
        path.display()
    )]
    Exists { path: PathBuf },
    #[error("no trace file was given")]
    NoPaths,
    #[error(
        "{}: no such file, and no blktrace per-CPU files {}N beside it",
        path.display(),
        prefix
    )]
    NotFound { path: PathBuf, prefix: String },
    #[error(
        "{}: is a {format}; only blktrace's per-CPU files are read together",
        path.display()
    )]
    Mixed { path: PathBuf, format: &'static str },
    #[error(
        "{}: not a trace iocap knows (it starts with \"{first_bytes}\"); iocap reads {}",
        path.display(),
        KNOWN_FORMATS
    )]
    UnknownFormat { path: PathBuf, first_bytes: String },
    #[error(
        "{}: written by a newer iocap (trace format version {version}; this iocap reads \
         versions 1 to {newest})",
        path.display()
    )]
    NewerVersion {
        path: PathBuf,
        version: u16,
        /// The newest version this iocap reads (the file format's, which the reader knows).
        newest: u16,
    },
    #[error(
        "{}: {what} at byte {offset} is truncated (expected {expected} bytes, {left} left); {}",
        path.display(),
        records_before(*records)
    )]
    Truncated {
        path: PathBuf,
        what: &'static str,
        offset: u64,
        expected: u64,
        left: u64,
        records: u64,
    },
    #[error(
        "{}: {what} at byte {offset} is corrupt ({why}); {}",
        path.display(),
        records_before(*records)
    )]
    Corrupt {
        path: PathBuf,
        what: &'static str,
        offset: u64,
        why: String,
        records: u64,
    },
    #[error("{}: line {line}: {why}; {}", path.display(), records_before(*records))]
    Line {
        path: PathBuf,
        line: u64,
        why: String,
        records: u64,
    },
}

impl TraceError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: path.into(),
            source,
        }
    }
}

/// "the 48,000 records before it are read", or the singular, or "nothing before it was read".
pub fn records_before(n: u64) -> String {
    match n {
        0 => "no record before it was read".to_string(),
        1 => "the one record before it is read".to_string(),
        n => format!(
            "the {} records before it are read",
            iocap_model::format_count(n)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_with_separators() {
        assert_eq!(records_before(1), "the one record before it is read");
    }

    #[test]
    fn truncation_names_the_offset_and_the_records_kept() {
        let e = TraceError::Truncated {
            path: "trace.iocap".into(),
            what: "chunk",
            offset: 1_234_567,
            expected: 6000,
            left: 312,
            records: 48_000,
        };
        assert_eq!(
            e.to_string(),
            "trace.iocap: chunk at byte 1234567 is truncated (expected 6000 bytes, 312 left); \
             the 48,000 records before it are read"
        );
    }
}

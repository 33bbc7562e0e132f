//! Which format a trace is in, from its first bytes, and one opener for all of them.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::blktrace::{self, BlktraceReader};
use crate::error::TraceError;
use crate::fio::FioIologReader;
use crate::{TraceReader, TraceSource};
use iocap_model::text::printable_bytes;

/// The formats iocap reads. CSV is written only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    Iocap,
    Blktrace,
    FioIologV2,
    FioIologV3,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Iocap => "iocap trace",
            TraceFormat::Blktrace => "blktrace binary file",
            TraceFormat::FioIologV2 => "fio iolog (version 2)",
            TraceFormat::FioIologV3 => "fio iolog (version 3)",
        }
    }

    /// The format whose file starts with `first` (its first 32 bytes are enough).
    pub fn detect(first: &[u8]) -> Option<TraceFormat> {
        if first.starts_with(crate::file::MAGIC) {
            Some(TraceFormat::Iocap)
        } else if blktrace::magic_endian(first).is_some() {
            Some(TraceFormat::Blktrace)
        } else if first.starts_with(crate::fio::V2_LINE.as_bytes()) {
            Some(TraceFormat::FioIologV2)
        } else if first.starts_with(crate::fio::V3_LINE.as_bytes()) {
            Some(TraceFormat::FioIologV3)
        } else {
            None
        }
    }
}

/// Opens a trace of any known format. `paths` is one file, or blktrace's per-CPU files
/// (merged in time order), or blktrace's base name as `blkparse -i` takes it (`sda` or
/// `sda.blktrace.` for `sda.blktrace.0`, `sda.blktrace.1`, ... beside it).
pub fn open_trace(paths: &[PathBuf]) -> Result<Box<dyn TraceSource>, TraceError> {
    let [first, ..] = paths else {
        return Err(TraceError::NoPaths);
    };
    let missing = std::fs::symlink_metadata(first).map_err(|e| e.kind());
    if paths.len() == 1 && missing.err() == Some(std::io::ErrorKind::NotFound) {
        let files = blktrace::per_cpu_files(first)?;
        return Ok(Box::new(BlktraceReader::open(&files)?));
    }
    let format = detect_file(first)?;
    if format == TraceFormat::Blktrace {
        for p in &paths[1..] {
            let other = detect_file(p)?;
            if other != TraceFormat::Blktrace {
                return Err(mixed(p, other));
            }
        }
        return Ok(Box::new(BlktraceReader::open(&with_siblings(paths)?)?));
    }
    if paths.len() > 1 {
        return Err(mixed(first, format));
    }
    Ok(match format {
        TraceFormat::Iocap => Box::new(TraceReader::open(first)?),
        TraceFormat::FioIologV2 | TraceFormat::FioIologV3 => Box::new(FioIologReader::open(first)?),
        TraceFormat::Blktrace => unreachable!("handled above"),
    })
}

/// The files [`open_trace`] reads for `paths`: blktrace's per-CPU files for its base name
/// (`sda`) or for one CPU's file (`sda.blktrace.0` stands for all of them), else `paths`
/// themselves. What a command that writes beside a trace must not write over.
pub fn trace_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, TraceError> {
    let [first, ..] = paths else {
        return Err(TraceError::NoPaths);
    };
    let missing = std::fs::symlink_metadata(first).map_err(|e| e.kind());
    if paths.len() == 1 && missing.err() == Some(std::io::ErrorKind::NotFound) {
        return blktrace::per_cpu_files(first);
    }
    match detect_file(first)? {
        TraceFormat::Blktrace => with_siblings(paths),
        _ => Ok(paths.to_vec()),
    }
}

/// One CPU's file (`sda.blktrace.0`) alone would drop the other CPUs' requests without a word:
/// it stands for every `sda.blktrace.N` beside it.
fn with_siblings(paths: &[PathBuf]) -> Result<Vec<PathBuf>, TraceError> {
    let [one] = paths else {
        return Ok(paths.to_vec());
    };
    let name = one.file_name().map(|n| n.to_string_lossy().into_owned());
    let base = name.as_deref().and_then(|n| {
        let (stem, cpu) = n.rsplit_once(".blktrace.")?;
        cpu.parse::<u32>().ok().map(|_| format!("{stem}.blktrace."))
    });
    match base {
        Some(b) => blktrace::per_cpu_files(&one.with_file_name(b)),
        None => Ok(paths.to_vec()),
    }
}

fn mixed(path: &Path, format: TraceFormat) -> TraceError {
    TraceError::Mixed {
        path: path.into(),
        format: format.name(),
    }
}

/// The format of the regular file `path`; anything that is not a regular file (a device, a
/// FIFO) is refused before it is opened.
pub fn detect_file(path: &Path) -> Result<TraceFormat, TraceError> {
    let meta = std::fs::metadata(path).map_err(|e| TraceError::io(path, e))?;
    if !meta.is_file() {
        let e = std::io::Error::other("not a regular file, so not read as a trace");
        return Err(TraceError::io(path, e));
    }
    let mut first = [0u8; 32];
    let mut f = std::fs::File::open(path).map_err(|e| TraceError::io(path, e))?;
    let mut n = 0;
    while n < first.len() {
        match f.read(&mut first[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TraceError::io(path, e)),
        }
    }
    TraceFormat::detect(&first[..n]).ok_or_else(|| TraceError::UnknownFormat {
        path: path.into(),
        first_bytes: printable_bytes(&first[..n]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_apart_by_their_first_bytes() {
        let d = TraceFormat::detect;
        assert_eq!(d(b"IOCAPTRC\x01\x00"), Some(TraceFormat::Iocap));
        assert_eq!(d(&[0x07, 0x74, 0x61, 0x65]), Some(TraceFormat::Blktrace));
        assert_eq!(d(&[0x65, 0x61, 0x74, 0x07]), Some(TraceFormat::Blktrace));
        assert_eq!(d(b"fio version 2 iolog\n"), Some(TraceFormat::FioIologV2));
        assert_eq!(d(b"fio version 3 iolog\n"), Some(TraceFormat::FioIologV3));
        assert_eq!(d(b"fio version 1 iolog\n"), None);
        assert_eq!(d(b""), None);
    }

    #[test]
    fn an_unknown_file_lists_the_known_formats_and_shows_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.csv");
        std::fs::write(&path, "issue_ns,complete_ns\n1,2\n").unwrap();
        let e = open_trace(&[path]).err().unwrap().to_string();
        assert!(
            e.contains(r#"it starts with "issue_ns,complete_ns\x0a1,2\x0a""#),
            "{e}"
        );
        for known in ["iocap's own trace", "DEV.blktrace.N", "fio's iolog"] {
            assert!(e.contains(known), "{e}");
        }
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "").unwrap();
        let e = open_trace(&[empty]).err().unwrap().to_string();
        assert!(e.contains(r#"it starts with """#), "{e}");
    }

    #[test]
    fn what_is_not_a_file_or_not_there_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = open_trace(&[dir.path().into()]).err().unwrap().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = open_trace(&[dir.path().join("sdz")])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("no blktrace per-CPU files sdz.blktrace.N"),
            "{e}"
        );
        assert!(matches!(open_trace(&[]), Err(TraceError::NoPaths)));
    }
}

//! `iocap convert`: a trace of any known format written as another: iocap's own file (from
//! blktrace or fio's iolog, so that it keeps and loads fast), fio's iolog v3 (for `fio
//! --read_iolog`), or CSV. Streaming, as everything here: one chunk of records at a time.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::TraceError;
use crate::{open_trace, ExportSummary, TraceSource, TraceWriter};

/// The formats a trace is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    Iocap,
    FioIolog,
    Csv,
}

impl ExportFormat {
    /// The names `--to` takes, with what each is for.
    pub const CHOICES: &'static [(&'static str, &'static str)] = &[
        (
            "iocap",
            "iocap's own trace file (compact, with its metadata)",
        ),
        (
            "fio",
            "fio's iolog version 3, for fio --read_iolog (times in us)",
        ),
        ("csv", "one row per request, for a spreadsheet"),
    ];

    pub fn parse(s: &str) -> Option<ExportFormat> {
        match s {
            "iocap" => Some(ExportFormat::Iocap),
            "fio" => Some(ExportFormat::FioIolog),
            "csv" => Some(ExportFormat::Csv),
            _ => None,
        }
    }
}

/// What a conversion read and wrote.
#[derive(Clone, Debug)]
pub struct Converted {
    /// The format read (its name).
    pub from: &'static str,
    pub written: ExportSummary,
    pub out: PathBuf,
}

/// Reads `inputs` (any format [`open_trace`] knows) and writes them in `to` to `file`, opened
/// by the caller under the rule for the files iocap writes (`iocap_console::claim`, which
/// refuses an output among [`crate::trace_files`] of the inputs); `out`
/// names it. `fio_filename` is the file fio's iolog names (default: the trace's first device
/// as `/dev/NAME`). A record that cannot be read ends the output, which keeps what came before
/// it, and is the error. The inputs are opened before anything is written.
pub fn convert(
    inputs: &[PathBuf],
    to: ExportFormat,
    (file, out): (File, &Path),
    fio_filename: Option<&str>,
) -> Result<Converted, TraceError> {
    let mut source = open_trace(inputs)?;
    let from = source.format().name();
    if to == ExportFormat::Iocap {
        let mut w = TraceWriter::new(file, out, source.meta())?;
        let mut n = 0u64;
        let mut failed = None;
        for r in source.by_ref() {
            match r {
                Ok(r) => {
                    w.push(&r)?;
                    n += 1;
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        let lost = source.lost();
        w.set_lost(lost.ring_full, lost.other);
        w.finish()?;
        return match failed {
            Some(e) => Err(e),
            None => Ok(Converted {
                from,
                written: ExportSummary {
                    records: n,
                    skipped: 0,
                },
                out: out.into(),
            }),
        };
    }
    let written = match to {
        ExportFormat::FioIolog => {
            let name = fio_filename
                .map(str::to_string)
                .unwrap_or_else(|| default_filename(&*source));
            crate::fio::export_fio_iolog(source, file, &name)?
        }
        _ => crate::csv::export_csv(source, file)?,
    };
    Ok(Converted {
        from,
        written,
        out: out.into(),
    })
}

fn default_filename(source: &dyn TraceSource) -> String {
    match source.meta().devices.first() {
        Some(d) if d.name.starts_with('/') => d.name.clone(),
        Some(d) if !d.name.is_empty() => format!("/dev/{}", d.name),
        _ => "/dev/sdX".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DevId, DeviceInfo, IoFlags, IoRecord, Op, TraceMeta, TraceReader};

    fn rec(i: u64, op: Op) -> IoRecord {
        IoRecord {
            issue_ns: i * 1_000_000,
            complete_ns: Some(i * 1_000_000 + 80_000),
            dev: DevId { major: 7, minor: 0 },
            sector: i * 16,
            bytes: if op == Op::Flush { 0 } else { 8192 },
            op,
            flags: IoFlags(0),
            error: 0,
            pid: 42,
            comm: IoRecord::comm_from("postgres"),
        }
    }

    fn trace(dir: &Path) -> PathBuf {
        let p = dir.join("t.iotrace");
        let meta = TraceMeta {
            source: "capture".into(),
            devices: vec![DeviceInfo {
                dev: DevId { major: 7, minor: 0 },
                name: "loop0".into(),
                size_bytes: None,
            }],
            ..TraceMeta::default()
        };
        let mut w = TraceWriter::create_new(&p, &meta).unwrap();
        for i in 0..10 {
            w.push(&rec(
                i,
                if i == 9 {
                    Op::Flush
                } else if i % 3 == 0 {
                    Op::Write
                } else {
                    Op::Read
                },
            ))
            .unwrap();
        }
        w.finish().unwrap();
        p
    }

    #[test]
    fn a_trace_converts_to_fio_csv_and_back_to_iocap() {
        let d = tempfile::tempdir().unwrap();
        let t = trace(d.path());
        let fio = d.path().join("t.log");
        let c = convert(
            std::slice::from_ref(&t),
            ExportFormat::FioIolog,
            (File::create(&fio).unwrap(), &fio),
            None,
        )
        .unwrap();
        assert_eq!(c.written.records, 10);
        let text = std::fs::read_to_string(&fio).unwrap();
        assert!(text.contains("/dev/loop0 read 8192 8192"), "{text}");
        assert!(text.contains("9000 /dev/loop0 sync"), "{text}");
        let back = d.path().join("back.iotrace");
        convert(
            &[fio],
            ExportFormat::Iocap,
            (File::create(&back).unwrap(), &back),
            None,
        )
        .unwrap();
        let recs: Vec<IoRecord> = TraceReader::open(&back)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(recs.len(), 10);
        assert_eq!(recs[1].sector, 16);
        assert_eq!(recs[9].op, Op::Flush);
        let csv = d.path().join("t.csv");
        let c = convert(
            &[t],
            ExportFormat::Csv,
            (File::create(&csv).unwrap(), &csv),
            None,
        )
        .unwrap();
        assert_eq!(c.from, "iocap trace");
        assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 11);
    }
}

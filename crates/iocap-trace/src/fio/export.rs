//! A trace as fio's iolog version 3, for `fio --read_iolog` to replay.

use std::io::{BufWriter, Write};

use super::V3_LINE;
use crate::error::TraceError;
use crate::record::{IoRecord, Op};
use crate::ExportSummary;

/// Writes `records` as fio's iolog version 3 on one file, `filename` (every device of the
/// trace lands there, at the same offsets): `add`, `open`, one line per I/O at its issue time
/// in µs (fio's unit), `close`. A flush is `sync`, a discard `trim`, a write-zeroes a `write`
/// of the same extent (fio has no write-zeroes); [`Op::Other`] has no fio action and is counted
/// in [`ExportSummary::skipped`]. A record that cannot be read ends the log (with its `close`
/// line) and is returned as the error.
pub fn export_fio_iolog<I, W>(
    records: I,
    out: W,
    filename: &str,
) -> Result<ExportSummary, TraceError>
where
    I: IntoIterator<Item = Result<IoRecord, TraceError>>,
    W: Write,
{
    if filename.is_empty() || filename.len() > 256 || filename.contains(char::is_whitespace) {
        return Err(TraceError::Write(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "fio's iolog names a file in at most 256 bytes without blanks, not `{}`",
                iocap_model::text::printable_bytes(filename.as_bytes())
            ),
        )));
    }
    let mut w = BufWriter::new(out);
    let mut summary = ExportSummary::default();
    let mut last_us = 0;
    let mut failed = None;
    let written = (|| {
        writeln!(w, "{V3_LINE}\n0 {filename} add\n0 {filename} open")?;
        for r in records {
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            };
            let (action, offset, bytes) = match r.op {
                Op::Read => ("read", r.sector.saturating_mul(512), r.bytes),
                Op::Write | Op::WriteZeroes => ("write", r.sector.saturating_mul(512), r.bytes),
                Op::Discard => ("trim", r.sector.saturating_mul(512), r.bytes),
                Op::Flush => ("sync", 0, 0),
                Op::Other => {
                    summary.skipped += 1;
                    continue;
                }
            };
            let us = r.issue_ns / 1000;
            last_us = last_us.max(us);
            writeln!(w, "{us} {filename} {action} {offset} {bytes}")?;
            summary.records += 1;
        }
        writeln!(w, "{last_us} {filename} close")?;
        w.flush()
    })();
    written.map_err(TraceError::Write)?;
    match failed {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

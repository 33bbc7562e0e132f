//! A trace as CSV, one row per record, for a spreadsheet or `awk`:
//!
//! ```text
//! issue_ns,complete_ns,latency_ns,dev,sector,offset_bytes,bytes,op,flags,pid,comm
//! 1500,81500,80000,259:0,16,8192,8192,read,RS,4242,postgres
//! ```
//!
//! `complete_ns` and `latency_ns` are empty where the trace has no completion. `flags` is the
//! request as the kernel's `rwbs` string shows it (`blk_fill_rwbs`: `F` before the operation
//! for a preflush, the operation `R`, `W`, `D`, `F` or `N`, then `F` for FUA, `A` read-ahead,
//! `S` sync, `M` metadata), which blkparse and the block tracepoints print too.
//! `IoRecord::parse_rwbs` reads it back. The process name is text another user chose: like
//! every CSV iocap writes (docs/safety.md, rule 7; `iocap_report::csv`), its control and
//! bidirectional characters are escaped (`\e`, `\x01`, `\u{202e}`) and one that a spreadsheet
//! would take for a formula starts with `'`. (`iocap_model::text::csv_cell`, the run export's rule too.)

use std::io::{BufWriter, Write};

use crate::error::TraceError;
use crate::record::{IoFlags, IoRecord, Op};
use crate::ExportSummary;

pub const HEADER: &str =
    "issue_ns,complete_ns,latency_ns,dev,sector,offset_bytes,bytes,op,flags,pid,comm";

/// Writes `records` as CSV with [`HEADER`]. A record that cannot be read ends the rows and is
/// returned as the error, after what came before it is written.
pub fn export_csv<I, W>(records: I, out: W) -> Result<ExportSummary, TraceError>
where
    I: IntoIterator<Item = Result<IoRecord, TraceError>>,
    W: Write,
{
    let mut w = BufWriter::new(out);
    let mut summary = ExportSummary::default();
    let mut failed = None;
    let written = (|| {
        writeln!(w, "{HEADER}")?;
        for r in records {
            match r {
                Ok(r) => {
                    row(&mut w, &r)?;
                    summary.records += 1;
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        w.flush()
    })();
    written.map_err(TraceError::Write)?;
    match failed {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

fn row(w: &mut impl Write, r: &IoRecord) -> std::io::Result<()> {
    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    writeln!(
        w,
        "{},{},{},{},{},{},{},{},{},{},{}",
        r.issue_ns,
        opt(r.complete_ns),
        opt(r.latency_ns()),
        r.dev,
        r.sector,
        r.sector.saturating_mul(512),
        r.bytes,
        r.op.name(),
        rwbs(r),
        r.pid,
        text_cell(&r.comm_str())
    )
}

/// The kernel's `rwbs` letters for a record.
pub fn rwbs(r: &IoRecord) -> String {
    let mut s = String::with_capacity(6);
    let has = |bit| r.flags.has(bit);
    if has(IoFlags::PREFLUSH) {
        s.push('F');
    }
    s.push(match r.op {
        Op::Read => 'R',
        Op::Write => 'W',
        Op::Flush => 'F',
        Op::Discard => 'D',
        Op::WriteZeroes | Op::Other => 'N',
    });
    for (bit, c) in [
        (IoFlags::FUA, 'F'),
        (IoFlags::AHEAD, 'A'),
        (IoFlags::SYNC, 'S'),
        (IoFlags::META, 'M'),
    ] {
        if has(bit) {
            s.push(c);
        }
    }
    s
}

/// A text cell: controls escaped, a formula neutralised, then quoted (RFC 4180), by the rule
/// every CSV iocap writes follows.
fn text_cell(s: &str) -> String {
    iocap_model::text::csv_cell(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::DevId;

    fn rec(op: Op, flags: u8, comm: &str) -> IoRecord {
        IoRecord {
            issue_ns: 1500,
            complete_ns: Some(81_500),
            dev: DevId {
                major: 259,
                minor: 0,
            },
            sector: 16,
            bytes: 8192,
            op,
            flags: IoFlags(flags),
            error: 0,
            pid: 4242,
            comm: IoRecord::comm_from(comm),
        }
    }

    #[test]
    fn rows_carry_every_field_with_rwbs_flags() {
        let mut flush = rec(Op::Flush, 0, "jbd2/sda1-8");
        flush.complete_ns = None;
        flush.bytes = 0;
        let recs = [
            rec(Op::Read, IoFlags::SYNC, "postgres"),
            rec(
                Op::Write,
                IoFlags::PREFLUSH | IoFlags::FUA | IoFlags::SYNC,
                "a,b\"c",
            ),
            flush,
        ];
        let mut out = Vec::new();
        let s = export_csv(recs.iter().map(|r| Ok(*r)), &mut out).unwrap();
        assert_eq!(s.records, 3);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], HEADER);
        assert_eq!(
            lines[1],
            "1500,81500,80000,259:0,16,8192,8192,read,RS,4242,postgres"
        );
        assert_eq!(
            lines[2],
            r#"1500,81500,80000,259:0,16,8192,8192,write,FWFS,4242,"a,b""c""#
        );
        assert_eq!(lines[3], "1500,,,259:0,16,8192,0,flush,F,4242,jbd2/sda1-8");
        for r in &recs {
            assert_eq!(IoRecord::parse_rwbs(rwbs(r).as_bytes()), (r.op, r.flags));
        }
    }

    #[test]
    fn a_hostile_process_name_is_escaped_and_neutralised() {
        assert_eq!(text_cell("=HYPERLINK(x)"), "'=HYPERLINK(x)");
        assert_eq!(text_cell("-1.5"), "-1.5");
        assert_eq!(text_cell("a\x1b[2Jb\u{202e}"), "a\\e[2Jb\\u{202e}");
        assert_eq!(text_cell("x\x01"), "x\\x01");
    }

    #[test]
    fn a_failing_source_ends_the_rows_with_its_error() {
        let recs = vec![
            Ok(rec(Op::Read, 0, "p")),
            Err(TraceError::NoPaths),
            Ok(rec(Op::Read, 0, "p")),
        ];
        let mut out = Vec::new();
        assert!(matches!(
            export_csv(recs, &mut out),
            Err(TraceError::NoPaths)
        ));
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), 2);
    }
}

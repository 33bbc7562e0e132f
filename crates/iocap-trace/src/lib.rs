//! Block I/O traces: what a device was sent, request by request.
//!
//! A trace is a stream of [`IoRecord`]s in issue order. They come from `iocap capture` (eBPF on
//! the block tracepoints, crate `iocap-capture`), or are imported from the traces users already
//! have (blktrace's binary files, fio's iolog); they are written to iocap's own compact file and
//! exported for fio or a spreadsheet. Everything here is streaming: no reader or writer holds
//! more than one chunk of records, whatever the trace's length (each module states its bound).
//!
//! - [`file`](mod@file): iocap's own file ([`TraceWriter`], [`TraceReader`]).
//! - [`open_trace`]: any known format, detected from its first bytes, as a [`TraceSource`].
//! - [`blktrace`], [`fio`]: the imports; [`fio::export_fio_iolog`] and [`csv::export_csv`]: the
//!   exports.

pub mod blktrace;
pub mod convert;
pub mod csv;
mod detect;
pub mod error;
pub mod file;
pub mod filemap;
pub mod fio;
pub mod meta;
pub mod record;

pub use convert::{convert, Converted, ExportFormat};
pub use detect::{detect_file, open_trace, trace_files, TraceFormat};
pub use error::TraceError;
pub use file::{read_maps, TraceReader, TraceWriter};
pub use filemap::{FileIndex, FileMap};
pub use meta::{DeviceInfo, LostCounts, TraceMeta, TraceSummary};
pub use record::{DevId, IoFlags, IoRecord, Op};

/// A trace being read, whatever its format: its metadata, then its records in issue order. A
/// record that cannot be read ends the stream with one error, after every record before it.
pub trait TraceSource: Iterator<Item = Result<IoRecord, TraceError>> + Send {
    fn format(&self) -> TraceFormat;
    fn meta(&self) -> &TraceMeta;
    /// Events the recorder lost, as far as read (only iocap's own file knows).
    fn lost(&self) -> LostCounts {
        LostCounts::default()
    }
    /// Whether the trace ended as its writer meant it to; meaningful once read to its end
    /// (iocap's file: `false` when the capture was killed before its trailer).
    fn complete(&self) -> bool {
        true
    }
}

impl TraceSource for TraceReader {
    fn format(&self) -> TraceFormat {
        TraceFormat::Iocap
    }
    fn meta(&self) -> &TraceMeta {
        TraceReader::meta(self)
    }
    fn lost(&self) -> LostCounts {
        TraceReader::lost(self)
    }
    fn complete(&self) -> bool {
        TraceReader::complete(self)
    }
}

/// What an export wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Records written.
    pub records: u64,
    /// Records the format cannot hold (fio's iolog: [`Op::Other`]), left out and counted.
    pub skipped: u64,
}

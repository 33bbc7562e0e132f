//! Block I/O traces: what a device was sent, request by request.
//!
//! A trace is a stream of [`IoRecord`]s in issue order. They come from `iocap capture` (eBPF on
//! the block tracepoints, crate `iocap-capture`), or are imported from the traces users already
//! have (blktrace's binary files, fio's iolog); they are written to iocap's own compact file and
//! exported for fio or a spreadsheet. Everything here is streaming: no reader or writer holds
//! more than one chunk of records, whatever the trace's length.

pub mod record;

pub use record::{DevId, IoFlags, IoRecord, Op};

//! A recorded workload replayed on a target (`iocap replay`), beside the recording's own
//! figures: what the new storage gave the same requests, and whether the replay kept to the
//! recorded times. Built by `iocap-replay`; saved like any run (`RunResult::replay`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::workload::Percentiles;

/// A replay and the recording it replayed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Replay {
    /// The trace file(s) replayed.
    pub trace: Vec<String>,
    /// Its format: `iocap trace`, `blktrace binary file`, `fio iolog (version 2)`, ...
    pub format: String,
    /// The file or device the requests went to.
    pub target: String,
    /// `file` or `block_device`.
    pub target_kind: crate::TargetKind,
    /// Whether this replay created the target file.
    pub created: bool,
    /// The target's range the requests were mapped into.
    pub range_bytes: u64,
    /// Where the trace's last request ends: the range it spans.
    pub trace_span_bytes: u64,
    /// `none` (the trace fits the target), `wrap` or `scale`.
    pub mapping: String,
    /// `recorded` (open loop at the recorded times) or `fast` (as soon as the recorded queue
    /// depth allows).
    pub timing: String,
    /// Recorded times divided by this (1 for the recorded rate); 0 in fast mode, which keeps
    /// no times.
    pub speed: f64,
    /// In fast mode without completion times in the trace: the fixed depth kept.
    pub fast_depth: Option<u64>,
    /// The most I/Os in flight the replay allows; a request due while this many are in flight
    /// waits, and its wait counts as lag.
    pub max_inflight: u64,
    /// `io_uring` or `psync`.
    pub io_engine: crate::Engine,
    /// Whether the target was opened with O_DIRECT.
    pub direct: bool,
    /// Wall time of the replay, from its first request to its last completion.
    pub elapsed_s: f64,
    /// Ctrl-C stopped it before the trace's end: the figures cover what ran.
    pub interrupted: bool,
    /// The replay's figures.
    pub replayed: ReplaySide,
    /// The recording's figures (from its own times; latency and depth only when the trace has
    /// completion times).
    pub recorded: ReplaySide,
    /// Per operation of the trace: how many were replayed, skipped, failed.
    pub ops: Vec<ReplayOp>,
    /// How late each request was issued against its scheduled time.
    pub lag: Lag,
    pub verdict: ReplayVerdict,
    pub warnings: Vec<String>,
    /// The first request that failed or transferred less than its length, with its operation
    /// and offset (the others are counted in `ops`); absent when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<crate::IoFault>,
}

/// IOPS, MB/s, latency and queue depth of one side (the replay, or the recording).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct ReplaySide {
    pub duration_s: f64,
    /// Requests (reads, writes, flushes; discards when replayed).
    pub ios: u64,
    pub iops: f64,
    /// 10^6 bytes per second, reads and writes.
    pub mb_s: f64,
    /// Reads among reads and writes, by count.
    pub read_pct: f64,
    /// Per operation (`read`, `write`, `flush`, `discard`); empty for a recording without
    /// completion times.
    pub latency: Vec<OpLatency>,
    /// Requests in flight, time-weighted; `None` for a recording without completion times.
    pub qd_mean: Option<f64>,
    pub qd_max: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct OpLatency {
    pub op: crate::request::Op,
    pub count: u64,
    pub latency: Percentiles,
}

/// One operation of the trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct ReplayOp {
    /// `read`, `write`, `flush`, `discard`, `write-zeroes`, `other`.
    pub op: crate::request::Op,
    /// In the trace (as far as replayed).
    pub recorded: u64,
    pub replayed: u64,
    /// Bytes moved by the replayed requests (after alignment).
    pub bytes: u64,
    /// Writes sent as durable writes (FUA or preflush in the trace: RWF_DSYNC).
    pub durable: u64,
    /// Not replayed: discards without `--discard`, or where the target has no discard; kinds
    /// with no equivalent (write-zeroes, other).
    pub skipped: u64,
    /// Completed with an error.
    pub errors: u64,
}

/// Schedule lag: issue time minus scheduled time, per request (0 when on time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Lag {
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    /// Requests issued more than 1 ms after their scheduled time, and their share.
    pub late_1ms: u64,
    pub late_1ms_pct: f64,
    /// Requests that found `max_inflight` I/Os in flight when due and had to wait.
    pub waited_for_slot: u64,
}

/// Whether the replay kept to the recorded times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct ReplayVerdict {
    /// True when lag p99 stayed under 1 ms (always true in fast mode, which has no schedule).
    pub kept_up: bool,
    /// One sentence: kept up, or fell behind with the lag.
    pub text: String,
}

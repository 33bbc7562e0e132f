//! The first pass over the trace: the recording described (`iocap_assess::workload`, the same
//! figures `iocap characterise` gives) and what the replay must know before its first request:
//! the span the offsets cover, the largest request, whether it writes. Streaming, with the
//! characteriser's bounded memory.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use iocap_assess::workload::{Characteriser, TraceFacts};
use iocap_model::replay::{OpLatency, ReplaySide};
use iocap_model::workload::Workload;
use iocap_trace::{open_trace, Op, TraceFormat};

use crate::ReplayError;

/// What the first pass found.
#[derive(Debug, Clone)]
pub struct Survey {
    pub format: TraceFormat,
    pub workload: Workload,
    /// Where the last request ends, in bytes.
    pub span_bytes: u64,
    pub max_request_bytes: u32,
    pub records: u64,
    /// Requests that would be replayed (reads, writes, flushes; discards with `--discard`).
    pub replayable: u64,
    /// Requests that would write the target (writes; discards with `--discard`).
    pub writes: u64,
}

/// Reads the trace of `paths` once. A trace that cannot be read to its end is refused, naming
/// where it is damaged: a replay of part of it would be taken for the whole. `stop` (Ctrl-C)
/// ends the reading with an error: nothing has been written yet.
pub fn survey(paths: &[PathBuf], discard: bool, stop: &AtomicBool) -> Result<Survey, ReplayError> {
    let mut source = open_trace(paths)?;
    let format = source.format();
    let mut c = Characteriser::new();
    let (mut span, mut max_bytes, mut records, mut replayable, mut writes) = (0, 0, 0, 0, 0);
    for r in source.by_ref() {
        let r = r?;
        c.push(&r);
        records += 1;
        if records % 65_536 == 0 && stop.load(Ordering::Relaxed) {
            return Err(ReplayError::Invalid(format!(
                "interrupted while reading the trace ({records} records read); nothing was \
                 replayed"
            )));
        }
        let (replays, writes_data) = match r.op {
            Op::Read => (r.bytes > 0, false),
            Op::Write => (r.bytes > 0, r.bytes > 0),
            Op::Flush => (true, false),
            Op::Discard => (discard && r.bytes > 0, discard && r.bytes > 0),
            Op::WriteZeroes | Op::Other => (false, false),
        };
        if replays && r.op != Op::Flush {
            span = span.max(r.end_bytes());
            max_bytes = max_bytes.max(r.bytes);
        }
        replayable += u64::from(replays);
        writes += u64::from(writes_data);
    }
    let meta = source.meta().clone();
    let facts = TraceFacts {
        source: meta.source.clone(),
        files: paths.iter().map(|p| p.display().to_string()).collect(),
        target: meta.target.clone(),
        complete: source.complete(),
        // from the first issue to the last completion, as the replay's own time is measured
        // (a capture's trailer counts its idle seconds after the last request too)
        duration_s: None,
        ..TraceFacts::default()
    };
    Ok(Survey {
        format,
        workload: c.finish(facts),
        span_bytes: span,
        max_request_bytes: max_bytes,
        records,
        replayable,
        writes,
    })
}

/// The recording's side of the comparison, counting the kinds the replay issues.
pub fn recorded_side(w: &Workload, discard: bool) -> ReplaySide {
    let kinds: &[Op] = if discard {
        &[Op::Read, Op::Write, Op::Flush, Op::Discard]
    } else {
        &[Op::Read, Op::Write, Op::Flush]
    };
    let share = |op: Op| w.mix.iter().find(|m| m.op == op);
    let count = |op: Op| share(op).map_or(0, |m| m.count);
    let bytes = |op: Op| share(op).map_or(0, |m| m.bytes);
    let ios: u64 = kinds.iter().map(|k| count(*k)).sum();
    let d = w.duration_s.max(1e-9);
    let rw = count(Op::Read) + count(Op::Write);
    let latency = w
        .latency
        .iter()
        .filter(|l| l.size_class == "all" && kinds.contains(&l.op))
        .map(|l| OpLatency {
            op: l.op,
            count: l.count,
            latency: l.latency.clone(),
        })
        .collect();
    ReplaySide {
        duration_s: w.duration_s,
        ios,
        iops: ios as f64 / d,
        mb_s: (bytes(Op::Read) + bytes(Op::Write)) as f64 / d / 1e6,
        read_pct: pct(count(Op::Read), rw),
        latency,
        qd_mean: w.queue_depth.as_ref().map(|q| q.mean),
        qd_max: w.queue_depth.as_ref().map(|q| q.max),
    }
}

pub fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

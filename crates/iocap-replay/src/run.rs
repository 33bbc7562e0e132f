//! A replay on Linux, from the request to the result: survey the trace, prepare the target as
//! every write test does (the engine's `prepare_targets`: iocap's own file, created and filled
//! at the trace's span; anything else only with `allow_overwrite`), map, size the buffers, run
//! the loop on io_uring (psync at depth 1 where io_uring is missing), and assemble the result.

use std::sync::atomic::{AtomicBool, Ordering};

use iocap_engine::backend::{self, Backend, Drive, Handle, Opened, Options, Registration};
use iocap_engine::{EngineKind, IoQueue, PreparedTarget, SlotBuffers};
use iocap_model::replay::Replay;
use iocap_model::{human_bytes, FaultOp, SubmitMode};

use crate::clock::Monotonic;
use crate::drive::{Driver, Plan, Tick};
use crate::feed::Feed;
use crate::map::Mapper;
use crate::stats::Stats;
use crate::survey::{recorded_side, survey, Survey};
use crate::target::{discard, open_target, refuse_unfit_new_file};
use crate::target_path;
use crate::verdict::{replayed_side, verdict, Ran};
use crate::{ReplayConfig, ReplayError, Timing, BUFFER_BUDGET_BYTES};

pub fn replay(
    cfg: &ReplayConfig,
    stop: &AtomicBool,
    tick: &mut dyn FnMut(Tick),
) -> Result<Replay, ReplayError> {
    cfg.validate()?;
    let sv = survey(&cfg.trace, cfg.discard, stop)?;
    let mut warnings = Vec::new();
    let engine = check(cfg, &sv, &mut warnings)?;
    let path = target_path(&cfg.target);
    refuse_unfit_new_file(cfg, &path, &sv)?;
    let target = open_target(cfg, &path, &sv, stop)?;
    warnings.extend(target.warnings.iter().cloned());
    let shown = path.display().to_string();
    let align = if target.direct {
        target.logical_block.max(512)
    } else {
        512
    };
    let mapper = Mapper::new(cfg.map, sv.span_bytes, target.range_bytes, align, &shown)
        .map_err(ReplayError::Refused)?;
    let buf_bytes = mapper.map(0, sv.max_request_bytes).1 as usize;
    let slots = slot_count(cfg, engine, buf_bytes, &mut warnings);
    let mut bufs = SlotBuffers::new(slots, buf_bytes, cfg.seed)
        .map_err(ReplayError::io("cannot allocate the I/O buffers"))?;
    let plan = Plan {
        timing: cfg.timing,
        max_inflight: slots,
        fast_depth: cfg.fast_depth,
        discard: cfg.discard,
    };
    iocap_platform::clock::tighten_timer_slack();
    let feed = Feed::start(iocap_trace::open_trace(&cfg.trace)?)
        .map_err(ReplayError::io("cannot start the trace's reader thread"))?;
    let ran = drive(engine, &target, &mut bufs, mapper, plan, feed, stop, tick);
    let (stats, notes, feed) = match ran {
        Ok(r) => r,
        Err(e) => {
            // the kernel may still use the buffers: the queue left them never to be freed
            return Err(ReplayError::io(format!("the replay on {shown} failed"))(e));
        }
    };
    if let Some(e) = feed.finish() {
        warnings.push(format!(
            "the trace could not be read to its end the second time: {e}"
        ));
    }
    warnings.extend(notes);
    let ran = Ran {
        timing: cfg.timing,
        max_inflight: slots as u64,
        fast_depth: (cfg.timing == Timing::Fast && !sv.workload.has_completions)
            .then_some(cfg.fast_depth as u64),
        interrupted: stop.load(Ordering::Relaxed),
    };
    let r = Replay {
        fault: stats.first_fault.map(|f| fault(f, &shown)),
        target: shown,
        target_kind: target.kind,
        created: target.created,
        range_bytes: target.range_bytes,
        mapping: mapper.name().into(),
        io_engine: engine.engine(),
        direct: target.direct,
        warnings,
        ..Replay::default()
    };
    Ok(assemble(cfg, &sv, ran, &stats, r))
}

/// What can be refused before the target is touched: a trace with nothing to replay; the
/// engine (psync, with a warning, where io_uring is missing); a trace without times.
fn check(
    cfg: &ReplayConfig,
    sv: &Survey,
    warnings: &mut Vec<String>,
) -> Result<EngineKind, ReplayError> {
    if sv.replayable == 0 {
        return Err(ReplayError::Invalid(format!(
            "the trace holds no request to replay ({} records, none a read, write or flush{})",
            sv.records,
            if cfg.discard { " or discard" } else { "" }
        )));
    }
    let (engine, fallback) = EngineKind::resolve(cfg.engine).map_err(ReplayError::Invalid)?;
    if let Some(e) = fallback {
        warnings.push(format!(
            "io_uring is not available ({e}); replayed with psync, one I/O at a time, so the \
             recorded concurrency is lost"
        ));
    }
    let timeless = sv.workload.duration_s == 0.0 && sv.records > 1;
    if timeless && matches!(cfg.timing, Timing::Recorded { .. }) {
        warnings.push(
            "the trace has no times (every request at 0 s): recorded timing issues them all at \
             once, up to the most in flight; --timing fast keeps a depth instead"
                .into(),
        );
    }
    Ok(engine)
}

/// How many I/Os may be in flight: one with psync; with io_uring `max_inflight`, cut (and
/// said) where that many buffers of the largest request would pass the budget.
fn slot_count(
    cfg: &ReplayConfig,
    engine: EngineKind,
    buf_bytes: usize,
    warnings: &mut Vec<String>,
) -> usize {
    if engine == EngineKind::Psync {
        return 1;
    }
    let slots = cfg
        .max_inflight
        .min((BUFFER_BUDGET_BYTES / buf_bytes.max(1)).max(1));
    if slots < cfg.max_inflight {
        warnings.push(format!(
            "at most {slots} I/Os in flight: {slots} buffers of the largest request ({}) fill \
             the {} buffer budget",
            human_bytes(buf_bytes as u64),
            human_bytes(BUFFER_BUDGET_BYTES as u64)
        ));
    }
    slots
}

/// The result: `r` (the target's part) completed with the request, both sides and the verdict.
/// The first failed request as the result names it: its operation, offset and length, and why.
fn fault(f: crate::stats::Fault, path: &str) -> iocap_model::IoFault {
    let op = match f.kind {
        crate::stats::READ => FaultOp::Read,
        crate::stats::WRITE => FaultOp::Write,
        _ => FaultOp::Fsync,
    };
    let (errno, message) = if f.result < 0 {
        let e = -f.result;
        (e, std::io::Error::from_raw_os_error(e).to_string())
    } else {
        (
            0,
            format!("short transfer: {} of {} bytes", f.result, f.len),
        )
    };
    iocap_model::IoFault {
        op,
        path: path.into(),
        offset_bytes: f.offset,
        len_bytes: u64::from(f.len),
        errno,
        message,
    }
}

fn assemble(cfg: &ReplayConfig, sv: &Survey, ran: Ran, stats: &Stats, r: Replay) -> Replay {
    let recorded = recorded_side(&sv.workload, cfg.discard);
    let replayed = replayed_side(stats);
    let lag = stats.lag_figures();
    Replay {
        trace: cfg.trace.iter().map(|p| p.display().to_string()).collect(),
        format: sv.format.name().into(),
        trace_span_bytes: sv.span_bytes,
        timing: cfg.timing.name().into(),
        speed: match cfg.timing {
            Timing::Recorded { speed } => speed,
            Timing::Fast => 0.0,
        },
        fast_depth: ran.fast_depth,
        max_inflight: ran.max_inflight,
        elapsed_s: replayed.duration_s,
        interrupted: ran.interrupted,
        ops: stats.op_rows(),
        verdict: verdict(ran, &lag, &replayed, &recorded),
        lag,
        replayed,
        recorded,
        ..r
    }
}

/// The loop on `engine`'s backend over the target's descriptor; its statistics, notes and the
/// spent feed.
#[allow(clippy::too_many_arguments)]
fn drive(
    engine: EngineKind,
    target: &PreparedTarget,
    bufs: &mut SlotBuffers,
    mapper: Mapper,
    plan: Plan,
    mut feed: Feed,
    stop: &AtomicBool,
    tick: &mut dyn FnMut(Tick),
) -> std::io::Result<(Stats, Vec<String>, Feed)> {
    let options = Options {
        depth: plan.max_inflight as u32,
        // plain reads and writes on the fd: buffers are not registered (io_uring's fixed buffers
        // would count against RLIMIT_MEMLOCK for up to the whole budget)
        registration: Registration::Plain,
        submit: SubmitMode::Batch,
    };
    let replay = Replayer {
        target,
        mapper,
        plan,
        feed: &mut feed,
        stop,
        tick,
    };
    let handle = Handle { file: &target.file };
    let (stats, notes) = backend::drive(engine, handle, bufs, options, replay)??;
    Ok((stats, notes, feed))
}

/// The replay, for [`backend::drive`] to run on the engine's backend with its loop.
struct Replayer<'a> {
    target: &'a PreparedTarget,
    mapper: Mapper,
    plan: Plan,
    feed: &'a mut Feed,
    stop: &'a AtomicBool,
    tick: &'a mut dyn FnMut(Tick),
}

impl Drive for Replayer<'_> {
    type Out = std::io::Result<(Stats, Vec<String>)>;

    fn run<B: Backend>(self, q: IoQueue<'_, B>, _: Opened) -> Self::Out {
        let target = self.target;
        let mut discard = |off: u64, len: u64| discard(target, off, len);
        let clock = Monotonic;
        let mut d = Driver::new(q, &clock, self.mapper, self.plan);
        d.run(self.feed, self.stop, &mut discard, self.tick)?;
        Ok((d.stats, d.notes))
    }
}

#[cfg(test)]
mod tests {
    use iocap_model::EngineChoice;
    use iocap_trace::{IoRecord, Op, TraceMeta, TraceWriter};

    use super::*;
    use crate::tests::record;
    use crate::{MapMode, Timing};

    /// 300 requests over 30 ms: 2 reads to 1 write of 8 KiB within 8 MiB, a flush every 50.
    fn trace(dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("t.iotrace");
        let meta = TraceMeta {
            source: iocap_trace::meta::source::CAPTURE.into(),
            ..TraceMeta::default()
        };
        let mut w = TraceWriter::create_new(&path, &meta).unwrap();
        for i in 0..300u64 {
            let op = match i % 50 {
                49 => Op::Flush,
                _ if i % 3 == 2 => Op::Write,
                _ => Op::Read,
            };
            let bytes = if op == Op::Flush { 0 } else { 8192 };
            w.push(&IoRecord {
                issue_ns: i * 100_000,
                complete_ns: Some(i * 100_000 + 80_000),
                ..record(op, (i * 7919 % 1024) * 8192, bytes)
            })
            .unwrap();
        }
        w.finish().unwrap();
        path
    }

    #[test]
    fn a_trace_replays_on_a_new_file_with_both_engines() {
        for engine in [EngineChoice::Psync, EngineChoice::IoUring] {
            if let Err(e) = EngineKind::resolve(engine) {
                // a host without io_uring replays with psync alone; CI's must have it
                assert!(
                    std::env::var_os("CI").is_none(),
                    "no io_uring under CI: {e}"
                );
                continue;
            }
            let d = tempfile::tempdir().unwrap();
            let cfg = ReplayConfig {
                engine,
                ..ReplayConfig::new(trace(d.path()), d.path().join("target"))
            };
            let r = replay(&cfg, &AtomicBool::new(false), &mut |_| {}).unwrap();
            assert!(r.created && r.mapping == "none", "{r:?}");
            let span = (0..300u64).map(|i| (i * 7919 % 1024) * 8192 + 8192).max();
            assert_eq!(Some(r.trace_span_bytes), span);
            let row = |op: Op| r.ops.iter().find(|o| o.op == op).unwrap().clone();
            assert_eq!((row(Op::Read).replayed, row(Op::Write).replayed), (196, 98));
            assert_eq!(row(Op::Flush).replayed, 6);
            assert_eq!(row(Op::Read).bytes, 196 * 8192);
            assert_eq!(r.replayed.ios, 300);
            assert_eq!(r.recorded.ios, 300);
            assert!((r.replayed.read_pct - r.recorded.read_pct).abs() < 1e-9);
            // the file stays iocap's: a second replay may write it again
            replay(&cfg, &AtomicBool::new(false), &mut |_| {}).unwrap();
        }
    }

    #[test]
    fn a_write_trace_on_a_foreign_file_is_refused_and_the_file_kept() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("precious");
        std::fs::write(&target, vec![7u8; 16 << 20]).unwrap();
        let cfg = ReplayConfig::new(trace(d.path()), target.clone());
        let e = replay(&cfg, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
        assert!(
            e.is_refusal() && e.to_string().contains("iocap did not create it"),
            "{e}"
        );
        assert_eq!(std::fs::read(&target).unwrap(), vec![7u8; 16 << 20]);
    }

    #[test]
    fn a_new_file_smaller_than_the_trace_needs_a_mapping() {
        let d = tempfile::tempdir().unwrap();
        let mut cfg = ReplayConfig::new(trace(d.path()), d.path().join("small"));
        cfg.size_bytes = Some(2 << 20);
        cfg.timing = Timing::Fast;
        let e = replay(&cfg, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
        assert!(
            e.is_refusal() && e.to_string().contains("--map scale"),
            "{e}"
        );
        assert!(
            !d.path().join("small").exists(),
            "refused before anything was created"
        );
        cfg.map = Some(MapMode::Scale);
        let r = replay(&cfg, &AtomicBool::new(false), &mut |_| {}).unwrap();
        assert_eq!((r.mapping.as_str(), r.range_bytes), ("scale", 2 << 20));
    }
}

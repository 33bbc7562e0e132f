//! `iocap replay TRACE [TARGET]`: a recorded workload replayed on a target, beside the
//! recording (docs/replay.md). The replay is `iocap-replay`'s, reached through the session;
//! this turns flags into a request, shows progress and prints and saves the run.

use iocap_console::{claim, flags::Keeping};
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use iocap_console::interrupt::INTERRUPTED;
use iocap_console::progress::LiveLine;
use iocap_flags::{choices, size_arg, EngineArg, OutputArg, SafetyArgs, SaveArgs};
use iocap_model::{RunCommand, DEFAULT_TARGET};
use iocap_session::{MapMode, ReplayConfig, ReplayTiming as Timing};

use super::execute::new_run;
use super::Exit;

/// `--map`'s values, iocap-replay's `MapMode` (no copy here), in --help's words.
const MAP: &[(&str, &str)] = &[
    (
        "wrap",
        "Offsets modulo the target's size: locality kept, far regions folded together",
    ),
    (
        "scale",
        "Offsets times target size / trace span: the spread kept, distances shrunk",
    ),
];

/// `--timing`'s values, iocap-replay's `Timing` (`recorded` at speed 1 until `--speed`).
const TIMING: &[(&str, &str)] = &[
    (
        "recorded",
        "Each request at its recorded time since the first (open loop)",
    ),
    (
        "fast",
        "Each request as soon as the recorded queue depth allows",
    ),
];

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The trace: iocap's file, fio's iolog (v2 or v3), or blktrace's per-CPU files' base
    /// name (sda for sda.blktrace.*)
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// A file (created and filled if missing; a directory means DIR/iocap.testfile) or, with
    /// --allow-overwrite, a device or a file iocap did not create [default: ./iocap.testfile]
    #[arg(value_name = "TARGET")]
    pub target: Option<PathBuf>,
    /// How offsets beyond the target are brought into it; needed when the trace spans more
    /// than the target holds
    #[arg(long, value_parser = choices(MAP, MapMode::parse))]
    pub map: Option<MapMode>,
    /// recorded: each request at its recorded time (open loop); fast: as soon as the recorded
    /// queue depth allows
    #[arg(long, value_parser = choices(TIMING, Timing::parse), default_value = "recorded")]
    pub timing: Timing,
    /// Recorded times divided by N: 2 asks what twice the load would get (recorded timing)
    #[arg(long, value_name = "N")]
    pub speed: Option<f64>,
    /// Replay discards (punch a hole in a file, BLKDISCARD on a device); skipped otherwise
    #[arg(long)]
    pub discard: bool,
    /// Size of a new target file [default: the trace's span]
    #[arg(long, value_parser = size_arg)]
    pub size: Option<u64>,
    /// The most I/Os in flight; a request due beyond it waits, and its wait counts as lag
    #[arg(long, default_value_t = iocap_replay::DEFAULT_MAX_INFLIGHT)]
    pub max_inflight: usize,
    /// Use the page cache instead of O_DIRECT
    #[arg(long)]
    pub buffered: bool,
    #[command(flatten)]
    pub safety: SafetyArgs,
    #[command(flatten)]
    pub engine: EngineArg,
    #[command(flatten)]
    pub output: OutputArg,
    #[command(flatten)]
    pub save: SaveArgs,
}

fn config(a: &ReplayArgs) -> Result<ReplayConfig> {
    let timing = match (a.timing, a.speed) {
        (Timing::Fast, Some(_)) => {
            bail!("--speed applies to --timing recorded; --timing fast has no times to divide")
        }
        (Timing::Fast, None) => Timing::Fast,
        (Timing::Recorded { .. }, speed) => Timing::Recorded {
            speed: speed.unwrap_or(1.0),
        },
    };
    let target = a.target.clone().unwrap_or(PathBuf::from(DEFAULT_TARGET));
    Ok(ReplayConfig {
        size_bytes: a.size,
        map: a.map,
        timing,
        discard: a.discard,
        allow_overwrite: a.safety.allow_overwrite,
        direct: !a.buffered,
        engine: a.engine.engine,
        max_inflight: a.max_inflight,
        ..ReplayConfig::new(a.trace.clone(), target)
    })
}

pub fn replay(a: ReplayArgs) -> Result<Exit> {
    let cfg = config(&a)?;
    // the target is never the trace, the store or --html, by any name or link (issue 35)
    let trace = iocap_trace::trace_files(std::slice::from_ref(&a.trace))?;
    let target = iocap_replay::target_path(&cfg.target);
    a.save
        .claim(claim::target(&target).reads("the trace", &trace))?;
    let mut run = new_run(RunCommand::Replay);
    let exec = super::ranks::engine();
    let label = format!("iocap replay {}", a.trace.display());
    let mut line: Option<LiveLine> = None;
    let res = iocap_session::replay(&cfg, &mut run, &exec, &INTERRUPTED, &mut |t| {
        // a line only for replays that last: a short one prints its result at once
        if t.elapsed_s >= 2.0 {
            let late = iocap_report::fmt::count(t.late as f64);
            let n = iocap_report::fmt::count(t.issued as f64);
            line.get_or_insert_with(|| LiveLine::new(&label))
                .show(&format!(
                    "{:.0} s, {n} requests, {late} over 1 ms late",
                    t.elapsed_s
                ));
        }
    });
    drop(line);
    res?;
    a.save.stamp(&mut run);
    let mut code = super::execute::finish(&run, a.output.output, || iocap_report::run_text(&run));
    // a request the storage failed is an I/O fault, as in any test: named, and exit 2
    if let Some(f) = run.replay.as_ref().and_then(|r| r.fault.as_ref()) {
        eprintln!("{}", iocap_report::fmt::error_line(&f.to_string()));
        code = Exit::Error;
    }
    a.save.keep(std::slice::from_ref(&run))?;
    Ok(code)
}

//! Cost: the CPU spent per I/O over a matrix of engines, block sizes, directions, cache modes and
//! queue depths (`iocap_cost::matrix`), each point run by the engine like any test with
//! `/proc/stat` read on the engine's window edges; then the fitted model and the answers. The
//! points depend on the page cache (warmed, dropped, measured), so this flow runs on the
//! engine itself, not through the [`Executor`](crate::Executor) trait.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use iocap_cost::{build, cache, procstat, Cache, Matrix, PlannedPoint, Questions, StatWatch};
use iocap_engine::{prepare_targets, run_test, Quiet};
use iocap_model::{CostPoint, CostReport, JobSpec, RunResult, RwMode};

use crate::engine::EngineExecutor;
use crate::executor::Executor;

/// A cost matrix, planned: its points on a base spec (the target, size and timing).
pub struct CostConfig {
    pub matrix: Matrix,
    pub points: Vec<PlannedPoint>,
    /// Notes from planning (points left out).
    pub notes: Vec<String>,
    pub base: JobSpec,
    pub questions: Questions,
}

impl CostConfig {
    /// The matrix planned at `qd` on `base`, every point checked before the first runs.
    pub fn new(matrix: Matrix, qd: u32, base: JobSpec, questions: Questions) -> Result<Self> {
        if qd == 0 || qd > iocap_model::MAX_QD {
            bail!("--qd must be 1 to {}", iocap_model::MAX_QD);
        }
        for (flag, v) in [
            ("--bs", questions.bs_bytes),
            ("--mb-bs", questions.mb_bs_bytes),
        ] {
            if v == 0 {
                bail!("{flag} 0: the answers need a block size of at least one byte (e.g. 8K)");
            }
        }
        let (points, notes) = iocap_cost::plan(matrix, qd);
        for p in &points {
            p.spec(&base).validate()?;
        }
        Ok(CostConfig {
            matrix,
            points,
            notes,
            base,
            questions,
        })
    }
}

/// Creates (or refuses) the test file exactly as for `iocap run`, before anything runs: with
/// a writing spec when the matrix writes, so a foreign file is refused up front. Its path and
/// the bytes it can address.
fn prepare(
    e: &mut EngineExecutor,
    points: &[PlannedPoint],
    base: &JobSpec,
) -> Result<(PathBuf, u64)> {
    let rw = if points.iter().any(|p| p.write) {
        RwMode::RandWrite
    } else {
        RwMode::RandRead
    };
    let probe = JobSpec {
        rw,
        write_pct: rw.write_pct(0),
        ..points[0].spec(base)
    };
    let t = prepare_targets(&probe, e.fill_bar().as_mut(), e.stop_flag())?;
    Ok((t[0].path.clone(), t[0].range_bytes))
}

/// Leaves out the cache-hit points when the test range does not fit in half of the memory.
fn fit_hits(points: &mut Vec<PlannedPoint>, range: u64, notes: &mut Vec<String>) {
    if !points.iter().any(|p| p.cache == Cache::Hit) {
        return;
    }
    if let Some(avail) = iocap_engine::host::mem_available_bytes().filter(|m| range > m / 2) {
        points.retain(|p| p.cache != Cache::Hit);
        notes.push(format!(
            "cache-hit points skipped: the {} MiB test range does not fit in half of the \
             {} MiB of available memory; use a smaller --size",
            range >> 20,
            avail >> 20
        ));
    }
}

/// A point's result, the CPU window of its measured time, and the share of the file cached
/// when it ended.
type PointRun = (
    iocap_model::TestResult,
    Option<procstat::WindowCpu>,
    Option<f64>,
);

/// Runs one point with the page cache set up as it asks.
fn run_point(
    e: &mut EngineExecutor,
    p: &PlannedPoint,
    spec: &JobSpec,
    (path, range): (&Path, u64),
) -> Result<PointRun> {
    if p.cache == Cache::Hit {
        cache::warm(path, range).context("cannot read the test file into the cache")?;
    }
    let targets = prepare_targets(spec, e.fill_bar().as_mut(), e.stop_flag())?;
    if p.cache == Cache::Miss {
        cache::drop_pages(path).context("cannot drop the test file's cached pages")?;
    }
    let mut quiet = Quiet;
    let mut watch = StatWatch::new(&mut quiet);
    let out =
        run_test(spec, &targets, e.stop_flag(), &mut watch).context("the test could not run")?;
    let win = watch.window();
    drop(targets);
    let resident = (p.cache != Cache::Direct)
        .then(|| cache::resident_pct(path, range).ok())
        .flatten();
    if p.write {
        cache::flush(path).context("cannot fsync the test file")?;
    }
    Ok((out.result, win, resident))
}

fn fmt_us(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The line said after each point.
fn progress_line(i: usize, n: usize, p: &PlannedPoint, cp: &CostPoint) -> String {
    format!(
        "[{}/{n}] {}: {} IOPS, {} µs CPU per I/O (process), {} (system-wide)",
        i + 1,
        p.label(),
        iocap_report::fmt::count(cp.iops),
        fmt_us(cp.process.us_per_io),
        cp.system
            .as_ref()
            .map(|s| fmt_us(s.us_per_io))
            .unwrap_or_else(|| "-".into())
    )
}

/// The matrix into `run`: every point's test in `run.tests`, the report in `run.cost`.
pub fn cost(e: &mut EngineExecutor, run: &mut RunResult, c: CostConfig) -> Result<()> {
    let CostConfig {
        matrix,
        mut points,
        mut notes,
        base,
        questions,
    } = c;
    let (path, range) = prepare(e, &points, &base)?;
    fit_hits(&mut points, range, &mut notes);
    let hz = procstat::ticks_per_s();
    if procstat::read().is_none() {
        notes.push(format!(
            "{} could not be read: no system-wide accounting",
            procstat::PROC_STAT
        ));
    }
    let mut cost_points = Vec::new();
    for (i, p) in points.iter().enumerate() {
        if e.interrupted() {
            break;
        }
        let spec = p.spec(&base);
        let (r, win, resident) = run_point(e, p, &spec, (&path, range))?;
        if p.cache == Cache::Direct && !r.direct {
            notes.push(format!("{}: ran without O_DIRECT", p.label()));
        }
        let cp = build::point(p, run.tests.len(), &r, win, hz, resident);
        e.say(&progress_line(i, points.len(), p, &cp));
        let stop = r.error.is_some() || r.interrupted;
        run.tests.push(r);
        cost_points.push(cp);
        if stop {
            break;
        }
    }
    notes.extend(crate::cost_notes::notes(&cost_points, run.host.cpus));
    let models = build::models(&cost_points);
    run.cost = Some(CostReport {
        matrix: matrix.name().into(),
        cpus: run.host.cpus,
        clock_ticks_per_s: hz,
        answers: build::answers(&models, &questions),
        points: cost_points,
        models,
        notes,
    });
    Ok(())
}

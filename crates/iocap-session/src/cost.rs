//! Cost: the CPU spent per I/O over a matrix of engines, block sizes, directions, cache modes and
//! queue depths (`iocap_cost::matrix`), each point run by the engine like any test with
//! `/proc/stat` read on the engine's window edges; then the fitted model and the answers. Like
//! every flow it runs in a [`Session`]: the points that depend on the page cache (warmed, dropped,
//! measured) are the executor's [`CostPoints`], which only an executor on one host lends (an
//! MPI job refuses the command), so the flow's decisions (which points run, when it stops, what
//! the notes say) are tested on the mock.

use anyhow::{bail, Result};
use iocap_cost::{build, procstat, PlannedPoint, Questions};
use iocap_model::Payload;
use iocap_model::{figures, CostPoint, CostReport, JobSpec, RwMode};
use iocap_model::{CacheMode, CostMatrix};

use crate::executor::CostRun;
use crate::session::Session;

/// A cost matrix, planned: its points on a base spec (the target, size and timing).
pub struct CostConfig {
    pub matrix: CostMatrix,
    pub points: Vec<PlannedPoint>,
    /// Notes from planning (points left out).
    pub notes: Vec<String>,
    pub base: JobSpec,
    pub questions: Questions,
}

impl CostConfig {
    /// The matrix planned at `qd` on `base`, every point checked before the first runs.
    pub fn new(matrix: CostMatrix, qd: u32, base: JobSpec, questions: Questions) -> Result<Self> {
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
/// a writing spec when the matrix writes, so a foreign file is refused up front. The bytes it
/// can address.
fn prepare(s: &mut Session, points: &[PlannedPoint], base: &JobSpec) -> Result<u64> {
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
    s.exec.probe().range(&probe)
}

/// One point through the executor's cost points (checked to be lent before the first).
fn point(s: &mut Session, spec: &JobSpec, cache: CacheMode, range: u64) -> Result<CostRun> {
    match s.exec.cost_points() {
        Some(e) => e.cost_point(spec, cache, range),
        None => bail!("the CPU cost is measured on one host"),
    }
}

/// One point, measured again over a doubled window while it completes too few I/Os to divide
/// its CPU by (`iocap_cost::stretch`), each time said in a note; a fault or Ctrl-C keeps what
/// was measured.
fn measure(
    s: &mut Session,
    p: &PlannedPoint,
    base: &JobSpec,
    range: u64,
    notes: &mut Vec<String>,
) -> Result<CostRun> {
    let mut spec = p.spec(base);
    for stretched in 0.. {
        let run = point(s, &spec, p.cache, range)?;
        let r = &run.result;
        let longer = iocap_cost::stretch(r.total.ios, spec.duration_s, stretched);
        match longer {
            Some(d) if r.error.is_none() && !r.interrupted && !s.exec.interrupted() => {
                notes.push(format!(
                    "{}: {} I/Os in {}, too few to divide its CPU by: measured again over {}",
                    p.label(),
                    r.total.ios,
                    figures::window_s(spec.duration_s),
                    figures::window_s(d)
                ));
                spec.duration_s = d;
            }
            _ => return Ok(run),
        }
    }
    unreachable!("the stretches are bounded")
}

/// Leaves out the cache-hit points when the test range does not fit in half of the memory.
fn fit_hits(
    points: &mut Vec<PlannedPoint>,
    range: u64,
    avail: Option<u64>,
    notes: &mut Vec<String>,
) {
    if !points.iter().any(|p| p.cache == CacheMode::Hit) {
        return;
    }
    if let Some(avail) = avail.filter(|m| range > m / 2) {
        points.retain(|p| p.cache != CacheMode::Hit);
        notes.push(format!(
            "cache-hit points skipped: the {} MiB test range does not fit in half of the \
             {} MiB of available memory; use a smaller --size",
            range >> 20,
            avail >> 20
        ));
    }
}

/// The line said after each point.
fn progress_line(i: usize, n: usize, p: &PlannedPoint, cp: &CostPoint) -> String {
    format!(
        "[{}/{n}] {}: {} IOPS, {} µs CPU per I/O (process), {} (system-wide)",
        i + 1,
        p.label(),
        figures::count(cp.iops),
        figures::micros(cp.process.us_per_io),
        cp.system
            .as_ref()
            .map(|s| figures::micros(s.us_per_io))
            .unwrap_or_else(|| "-".into())
    )
}

/// The matrix into the session's run: every point's test in `run.tests`, the report in
/// `run.cost`. Refused before anything runs by an executor that lends no cost points (several
/// hosts at once).
pub fn cost(s: &mut Session, c: CostConfig) -> Result<()> {
    if s.exec.cost_points().is_none() {
        bail!("the CPU cost is measured on one host: run iocap cost without mpirun");
    }
    let CostConfig {
        matrix,
        mut points,
        mut notes,
        base,
        questions,
    } = c;
    let range = prepare(s, &points, &base)?;
    fit_hits(
        &mut points,
        range,
        s.exec.facts().mem_available_bytes(),
        &mut notes,
    );
    let hz = procstat::ticks_per_s();
    if procstat::read().is_none() {
        let source = if cfg!(windows) {
            "GetSystemTimes"
        } else {
            procstat::PROC_STAT
        };
        notes.push(format!(
            "{source} could not be read: no system-wide accounting"
        ));
    }
    let mut cost_points = Vec::new();
    for (i, p) in points.iter().enumerate() {
        if s.exec.interrupted() {
            break;
        }
        let CostRun {
            result: r,
            cpu: win,
            resident_pct: resident,
        } = measure(s, p, &base, range, &mut notes)?;
        if p.cache == CacheMode::Direct && !r.direct {
            notes.push(format!("{}: ran without O_DIRECT", p.label()));
        }
        let cp = build::point(p, s.run.tests.len(), &r, win, hz, resident);
        s.exec.say(&progress_line(i, points.len(), p, &cp));
        let stop = r.error.is_some() || r.interrupted;
        s.run.tests.push(r);
        cost_points.push(cp);
        if stop {
            break;
        }
    }
    let run = &mut s.run;
    notes.extend(iocap_assess::cost_notes(&cost_points, run.host.cpus));
    let models = build::models(&cost_points);
    run.set(Payload::Cost(CostReport {
        matrix,
        cpus: run.host.cpus,
        clock_ticks_per_s: hz,
        answers: build::answers(&models, &questions),
        points: cost_points,
        models,
        notes,
        windows: cfg!(windows),
    }));
    Ok(())
}

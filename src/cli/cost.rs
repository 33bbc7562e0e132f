//! `iocap cost`: the CPU spent per I/O over a matrix of engines, block sizes, directions, cache
//! modes and queue depths (see `iocap_cost::matrix`), each point run by the engine like any
//! test, with `/proc/stat` read on the engine's window edges; then the fitted model and the
//! answers (IOPS per core, cores for a target, one 64K I/O against eight 8K). docs/cost.md.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use iocap_cost::{build, cache, plan, procstat, Cache, Matrix, Questions, StatWatch};
use iocap_engine::{prepare_targets, run_test, Quiet};
use iocap_model::{CostReport, JobSpec, RwMode, TargetSpec, DEFAULT_TARGET};

use super::args::{duration_arg, rate_arg, size_arg};
use super::execute::{finish, new_run, run_text};
use super::progress::FillBar;
use super::run::SubmitArg;
use super::save::SaveArgs;
use super::signals::{interrupted, INTERRUPTED};
use super::{Exit, OutputFormat};

#[derive(Args, Debug)]
pub struct CostArgs {
    /// The test file (a directory means DIR/iocap.testfile) [default: ./iocap.testfile]
    #[arg(value_name = "TARGET")]
    pub target: Option<String>,
    /// A smoke set of 12 points (psync and registered io_uring, 4K/64K/1M, O_DIRECT): ~30 s
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// The whole matrix: 3 engines × 5 sizes × read/write × direct/hit/miss × qd 1 and --qd
    #[arg(long)]
    pub full: bool,
    /// Measured time of each point
    #[arg(long, default_value = "2s", value_parser = duration_arg)]
    pub duration: f64,
    /// Unmeasured time before each point (none for cache-miss points)
    #[arg(long, default_value = "0.5s", value_parser = duration_arg)]
    pub warmup: f64,
    /// I/Os in flight for the concurrent points (io_uring queue depth; psync threads)
    #[arg(long, default_value_t = 16)]
    pub qd: u32,
    /// Size of the test file; the cache-hit points need it to fit in memory
    #[arg(long, default_value = "256M", value_parser = size_arg)]
    pub size: u64,
    /// Answer: how many cores for this many I/Os per second (of --bs)
    #[arg(long, value_parser = rate_arg)]
    pub target_iops: Option<f64>,
    /// Answer: how many cores for this many MB/s (10^6 B; in I/Os of --mb-bs)
    #[arg(long, value_parser = rate_arg)]
    pub target_mbps: Option<f64>,
    /// Block size of the IOPS answers
    #[arg(long, default_value = "8K", value_parser = size_arg)]
    pub bs: u64,
    /// Block size of the MB/s answers
    #[arg(long, default_value = "1M", value_parser = size_arg)]
    pub mb_bs: u64,
    /// Permit writes to a file iocap did not create (destroys its contents)
    #[arg(long)]
    pub allow_overwrite: bool,
    /// io_uring submission for every point: auto (both tried in the warm-up, the faster kept),
    /// batch or each (see `iocap run --help`)
    #[arg(long, value_enum, default_value_t = SubmitArg::Auto)]
    pub submit: SubmitArg,
    #[arg(long, visible_alias = "format", value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    #[command(flatten)]
    pub save: SaveArgs,
}

pub fn cost(a: CostArgs) -> Result<Exit> {
    let matrix = match (a.quick, a.full) {
        (true, _) => Matrix::Quick,
        (_, true) => Matrix::Full,
        _ => Matrix::Default,
    };
    if a.qd == 0 || a.qd > iocap_model::MAX_QD {
        bail!("--qd must be 1 to {}", iocap_model::MAX_QD);
    }
    for (flag, v) in [("--bs", a.bs), ("--mb-bs", a.mb_bs)] {
        if v == 0 {
            bail!("{flag} 0: the answers need a block size of at least one byte (e.g. 8K)");
        }
    }
    let (mut points, mut notes) = plan(matrix, a.qd);
    let base = JobSpec {
        targets: vec![TargetSpec::new(
            a.target.clone().unwrap_or_else(|| DEFAULT_TARGET.into()),
        )],
        size_bytes: a.size,
        duration_s: a.duration,
        warmup_s: a.warmup,
        allow_overwrite: a.allow_overwrite,
        submit: a.submit.mode(),
        ..JobSpec::default()
    };
    for p in &points {
        p.spec(&base).validate()?;
    }
    a.save.check()?;

    // The file is created, or refused, exactly as for `iocap run`, before anything runs: with
    // a writing spec when the matrix writes, so a foreign file is refused up front.
    let probe = JobSpec {
        rw: if points.iter().any(|p| p.write) {
            RwMode::RandWrite
        } else {
            RwMode::RandRead
        },
        ..points[0].spec(&base)
    };
    let probe = JobSpec {
        write_pct: probe.rw.write_pct(0),
        ..probe
    };
    let (path, range): (PathBuf, u64) = {
        let t = prepare_targets(&probe, &mut FillBar::new(), &INTERRUPTED)?;
        (t[0].path.clone(), t[0].range_bytes)
    };
    if points.iter().any(|p| p.cache == Cache::Hit) {
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

    let hz = procstat::ticks_per_s();
    if procstat::read().is_none() {
        notes.push(format!(
            "{} could not be read: no system-wide accounting",
            procstat::PROC_STAT
        ));
    }
    let mut run = new_run("cost");
    a.save.stamp(&mut run);
    let mut cost_points = Vec::new();
    let n = points.len();
    for (i, p) in points.iter().enumerate() {
        if interrupted() {
            break;
        }
        let spec = p.spec(&base);
        if p.cache == Cache::Hit {
            cache::warm(&path, range).context("cannot read the test file into the cache")?;
        }
        let targets = prepare_targets(&spec, &mut FillBar::new(), &INTERRUPTED)?;
        if p.cache == Cache::Miss {
            cache::drop_pages(&path).context("cannot drop the test file's cached pages")?;
        }
        let mut quiet = Quiet;
        let mut watch = StatWatch::new(&mut quiet);
        let out = run_test(&spec, &targets, &INTERRUPTED, &mut watch)
            .context("the test could not run")?;
        let win = watch.window();
        drop(targets);
        let resident = (p.cache != Cache::Direct)
            .then(|| cache::resident_pct(&path, range).ok())
            .flatten();
        if p.write {
            cache::flush(&path).context("cannot fsync the test file")?;
        }
        let r = out.result;
        if p.cache == Cache::Direct && !r.direct {
            notes.push(format!("{}: ran without O_DIRECT", p.label()));
        }
        let cp = build::point(p, run.tests.len(), &r, win, hz, resident);
        eprintln!(
            "iocap: [{}/{n}] {}: {} IOPS, {} µs CPU per I/O (process), {} (system-wide)",
            i + 1,
            p.label(),
            iocap_report::fmt::count(cp.iops),
            fmt_us(cp.process.us_per_io),
            cp.system
                .as_ref()
                .map(|s| fmt_us(s.us_per_io))
                .unwrap_or_else(|| "-".into())
        );
        let stop = r.error.is_some() || r.interrupted;
        run.tests.push(r);
        cost_points.push(cp);
        if stop {
            break;
        }
    }
    for p in &cost_points {
        if p.ios == 0 {
            notes.push(format!(
                "{} {} {} {} qd {}: no I/O completed in its window (is --duration too short?), so it \
                 has no CPU per I/O and is left out of the models",
                p.engine,
                p.rw,
                iocap_model::format_bytes(p.bs_bytes),
                p.cache,
                p.qd
            ));
        }
        if p.cache == "miss" && p.resident_after_pct.is_some_and(|r| r > 50.0) {
            notes.push(format!(
                "{} {} {} qd {}: {:.0} % of the file was cached when it ended, so part of its \
                 reads were hits; a larger --size keeps it a miss",
                p.engine,
                p.rw,
                iocap_model::format_bytes(p.bs_bytes),
                p.qd,
                p.resident_after_pct.unwrap_or(0.0)
            ));
        }
        if p.engine == "io_uring_registered"
            && !p.engine_features.iter().any(|f| f == "registered_buffers")
        {
            notes.push(format!(
                "io_uring_registered {} {} qd {}: the buffers could not be registered (RLIMIT_MEMLOCK, \
                 ulimit -l): it ran with plain buffers",
                p.rw,
                iocap_model::format_bytes(p.bs_bytes),
                p.qd
            ));
        }
    }
    let stolen: Vec<f64> = cost_points
        .iter()
        .filter(|p| p.duration_s > 0.0)
        .filter_map(|p| Some(100.0 * p.steal_s? / (p.duration_s * f64::from(run.host.cpus.max(1)))))
        .filter(|pct| *pct > 2.0)
        .collect();
    if let Some(max) = stolen.iter().copied().reduce(f64::max) {
        notes.push(format!(
            "the hypervisor stole CPU time in {} of {} points (up to {max:.0} % of all CPUs' time in the window): virtual CPUs, so the figures are inflated and noisy",
            stolen.len(),
            cost_points.len()
        ));
    }
    let models = build::models(&cost_points);
    let q = Questions {
        bs_bytes: a.bs,
        mb_bs_bytes: a.mb_bs,
        target_iops: a.target_iops,
        target_mb_s: a.target_mbps,
    };
    run.cost = Some(CostReport {
        matrix: matrix.name().into(),
        cpus: run.host.cpus,
        clock_ticks_per_s: hz,
        answers: build::answers(&models, &q),
        points: cost_points,
        models,
        notes,
    });
    super::audit::record_config(&mut run);
    let code = finish(&run, a.output, || run_text(&run));
    a.save.keep(std::slice::from_ref(&run))?;
    Ok(code)
}

fn fmt_us(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

//! `iocap saturate`: raise the outstanding I/O step by step (1, 2, 4, ...) until throughput stops
//! rising while latency keeps climbing (the knee), or latency passes a ceiling; then run
//! throttled points at 10 to 100 % of the maximum for a load–latency curve. Answers "how far can
//! this storage be pushed", and "how many IOPS at my latency target" (CALIBRATE_IO's question).

use anyhow::Result;
use clap::Args;
use iocap_assess::{ramp, summarize, throttle_points, SaturateConfig};
use iocap_model::{
    format_bytes, CurvePoint, EngineChoice, JobSpec, RunResult, RwMode, TargetSpec, DEFAULT_TARGET,
};

use super::args::{duration_arg, engine_arg, rw_arg, size_arg, us_arg, DataShapeArgs};
use super::execute::{finish, median_run, new_run, run_repeated, run_text};
use super::run::SubmitArg;
use super::save::SaveArgs;
use super::signals::interrupted;
use super::sure::SureArgs;
use super::{Exit, OutputFormat};

#[derive(Args, Debug)]
pub struct SaturateArgs {
    /// Files or block devices, tested together at each step [default: ./iocap.testfile]
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
    /// Workload: randread, randwrite, randrw, read, write or rw
    #[arg(long, default_value = "randread", value_parser = rw_arg)]
    pub rw: RwMode,
    /// Share of writes in percent for rw and randrw
    #[arg(long, value_name = "PCT", default_value_t = 30)]
    pub write_pct: u8,
    #[arg(long, default_value = "8K", value_parser = size_arg,
          aliases = ["blocksize", "block-size"])]
    pub bs: u64,
    /// Threads per target (the queue depth is per thread)
    #[arg(long, default_value_t = 1, aliases = ["numjobs"])]
    pub threads: u32,
    /// Size of a test file that does not exist yet
    #[arg(long, default_value = "1G", value_parser = size_arg)]
    pub size: u64,
    /// Measured time of each step
    #[arg(long, default_value = "10s", value_parser = duration_arg)]
    pub step_duration: f64,
    /// Unmeasured time before each step
    #[arg(long, default_value = "2s", value_parser = duration_arg)]
    pub warmup: f64,
    /// A doubling of the queue depth that gains less than this (percent) counts as flat
    #[arg(long, value_name = "PCT", default_value_t = 5.0)]
    pub min_gain: f64,
    /// The largest queue depth to try
    #[arg(long, default_value_t = 256)]
    pub max_qd: u32,
    /// Stop raising the queue depth once p99 latency reaches this (e.g. 50ms)
    #[arg(long, value_name = "LATENCY", value_parser = us_arg)]
    pub lat_ceiling: Option<f64>,
    /// The p99 latency target for the capacity figure
    #[arg(long, value_name = "LATENCY", default_value = "10ms", value_parser = us_arg)]
    pub latency_target: f64,
    /// Skip the throttled points at 10 to 100 % of the maximum
    #[arg(long)]
    pub no_throttled: bool,
    /// I/O engine: auto, io_uring, io_uring_unregistered (no registered file or buffers) or psync
    #[arg(long, default_value = "auto", value_parser = engine_arg)]
    pub engine: EngineChoice,
    /// io_uring submission: auto (both tried in the warm-up, the faster kept), batch (the I/Os
    /// freed by one reap together: least CPU) or each (every I/O at once, as fio does)
    #[arg(long, value_enum, default_value_t = SubmitArg::Auto)]
    pub submit: SubmitArg,
    /// Permit writes to files and devices iocap did not create (destroys their contents)
    #[arg(long)]
    pub allow_overwrite: bool,
    #[arg(long, visible_alias = "format", value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    #[command(flatten)]
    pub data: DataShapeArgs,
    #[command(flatten)]
    pub sure: SureArgs,
    #[command(flatten)]
    pub save: SaveArgs,
}

fn base_spec(a: &SaturateArgs) -> JobSpec {
    let mut spec = base_spec_of(a);
    a.sure.apply(&mut spec);
    a.data.apply(&mut spec);
    spec
}

fn base_spec_of(a: &SaturateArgs) -> JobSpec {
    let targets = if a.targets.is_empty() {
        vec![DEFAULT_TARGET.to_string()]
    } else {
        a.targets.clone()
    };
    JobSpec {
        targets: targets.into_iter().map(TargetSpec::new).collect(),
        rw: a.rw,
        write_pct: a.rw.write_pct(a.write_pct),
        bs_bytes: a.bs,
        align_bytes: a.bs,
        threads: a.threads,
        size_bytes: a.size,
        duration_s: a.step_duration,
        warmup_s: a.warmup,
        engine: a.engine,
        submit: a.submit.mode(),
        allow_overwrite: a.allow_overwrite,
        ..JobSpec::default()
    }
}

/// Runs one point (`--repeat` times), adds its tests to the run and returns the point, taken
/// from the median run.
fn measure(
    run: &mut RunResult,
    spec: &JobSpec,
    sure: &SureArgs,
    qd: u32,
    load: Option<f64>,
) -> Result<CurvePoint> {
    super::progress::set_label(match load {
        Some(_) => format!("{}, throttled point", spec.name),
        None => format!(
            "{}, step {}",
            spec.name,
            run.tests.len() / sure.repeat.max(1) as usize + 1
        ),
    });
    let runs = run_repeated(std::slice::from_ref(spec), sure, 1, true)?;
    let at = run.tests.len() + median_run(&runs);
    run.tests
        .extend(runs.into_iter().map(|mut r| r.remove(0).result));
    let p = CurvePoint::of(at as u32, qd, load, &run.tests[at]);
    eprintln!(
        "iocap: {}: {} IOPS, {:.1} MB/s, p99 {}",
        spec.name,
        iocap_report::fmt::count(p.iops),
        p.mb_s,
        p.lat_us_p99
            .map(iocap_report::fmt::lat_us)
            .unwrap_or_else(|| "-".into())
    );
    Ok(p)
}

fn stopped(run: &RunResult) -> bool {
    interrupted()
        || run
            .tests
            .last()
            .is_some_and(|t| t.error.is_some() || t.interrupted)
}

pub fn saturate(a: SaturateArgs) -> Result<Exit> {
    let cfg = SaturateConfig {
        min_gain_pct: a.min_gain,
        max_qd: a.max_qd,
        lat_ceiling_us: a.lat_ceiling,
        latency_target_us: Some(a.latency_target),
        ..SaturateConfig::default()
    };
    let base = base_spec(&a);
    base.validate()?;
    if a.max_qd == 0 || a.max_qd > iocap_model::MAX_QD {
        anyhow::bail!("--max-qd must be 1 to {}", iocap_model::MAX_QD);
    }
    a.save.check()?;
    let mut run = new_run("saturate");
    a.save.stamp(&mut run);
    let what = format!("{} {}", a.rw.name(), format_bytes(a.bs));
    let steps = ramp(&cfg, |qd| {
        let spec = JobSpec {
            name: format!("{what} qd {qd}"),
            qd,
            ..base.clone()
        };
        let p = measure(&mut run, &spec, &a.sure, qd, None)?;
        anyhow::Ok((p, stopped(&run)))
    })?;
    let mut throttled = Vec::new();
    let best = steps
        .iter()
        .filter(|p| p.iops.is_finite())
        .max_by(|x, y| x.iops.total_cmp(&y.iops))
        .cloned();
    if let (false, Some(best)) = (a.no_throttled || stopped(&run), best) {
        for (pct, rate) in throttle_points(best.iops) {
            let spec = JobSpec {
                name: format!("{what} qd {} at {pct:.0} %", best.qd),
                qd: best.qd,
                rate_iops: Some(rate),
                ..base.clone()
            };
            throttled.push(measure(&mut run, &spec, &a.sure, best.qd, Some(pct))?);
            if stopped(&run) {
                break;
            }
        }
    }
    let qd1 = run.tests.iter().find_map(super::class::qd1_read_p50);
    for t in &mut run.tests {
        super::class::check(t, qd1, None);
    }
    run.saturation = Some(summarize(&steps, &throttled, &cfg));
    run.repeats = iocap_assess::repeats(&run.tests);
    super::audit::record_config(&mut run);
    let code = finish(&run, a.output, || run_text(&run));
    a.save.keep(std::slice::from_ref(&run))?;
    Ok(code)
}

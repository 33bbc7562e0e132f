//! `iocap cost`: the CPU spent per I/O over a matrix of engines, block sizes, directions, cache
//! modes and queue depths (see `iocap_cost::matrix`), each point run by the engine like any
//! test, with `/proc/stat` read on the engine's window edges; then the fitted model and the
//! answers (IOPS per core, cores for a target, one 64K I/O against eight 8K). docs/cost.md.

use anyhow::Result;
use clap::Args;
use iocap_console::{claim, flags::Keeping};
use iocap_cost::Questions;
use iocap_model::CostMatrix;
use iocap_model::{JobSpec, RunCommand, TargetSpec, DEFAULT_TARGET};
use iocap_session::CostConfig;

use super::execute::{finish, run_text};
use super::Exit;
use iocap_flags::{rate_arg, size_arg, OutputArg, SafetyArgs, SaveArgs, SubmitFlag, TimingArgs};

#[derive(Args, Debug)]
#[command(
    mut_arg("duration", |a| a.help("Measured time of each point").default_value("2s")),
    mut_arg("warmup", |a| a
        .help("Unmeasured time before each point (none for cache-miss points)")
        .default_value("0.5s")),
    mut_arg("allow_overwrite", |a| a.help(
        "Permit writes to a file iocap did not create (destroys its contents)")),
    mut_arg("submit", |a| a.help(
        "io_uring submission for every point: auto (both tried in the warm-up, the faster \
         kept), batch or each (see `iocap run --help`)")),
)]
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
    #[command(flatten)]
    pub timing: TimingArgs,
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
    #[command(flatten)]
    pub safety: SafetyArgs,
    #[command(flatten)]
    pub submit: SubmitFlag,
    #[command(flatten)]
    pub output: OutputArg,
    #[command(flatten)]
    pub save: SaveArgs,
}

pub fn cost(a: CostArgs) -> Result<Exit> {
    let matrix = match (a.quick, a.full) {
        (true, _) => CostMatrix::Quick,
        (_, true) => CostMatrix::Full,
        _ => CostMatrix::Default,
    };
    let base = JobSpec {
        targets: vec![TargetSpec::new(
            a.target.clone().unwrap_or_else(|| DEFAULT_TARGET.into()),
        )],
        size_bytes: a.size,
        duration_s: a.timing.duration.duration,
        warmup_s: a.timing.warmup.warmup,
        allow_overwrite: a.safety.allow_overwrite,
        submit: a.submit.mode(),
        ..JobSpec::default()
    };
    let questions = Questions {
        bs_bytes: a.bs,
        mb_bs_bytes: a.mb_bs,
        target_iops: a.target_iops,
        target_mb_s: a.target_mbps,
    };
    let c = CostConfig::new(matrix, a.qd, base, questions)?;
    a.save.claim(claim::tests([&c.base]))?;
    let run = super::execute::session(RunCommand::Cost, None, &a.save, |s| {
        iocap_session::cost(s, c)
    })?;
    let code = finish(&run, a.output.output, || run_text(&run));
    a.save.keep(std::slice::from_ref(&run))?;
    Ok(code)
}

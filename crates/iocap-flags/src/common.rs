//! The groups many commands share: safety (`--allow-overwrite`), timing (`--duration`,
//! `--warmup`, `--step-duration`), engine (`--engine`, `--submit`), data shape
//! (`--compressible`, `--dedupe`), and [`CommonArgs`], the tail of every measuring command.
//! The output format is [`super::output`]'s, the store's flags [`super::save`]'s, `--repeat`
//! [`super::sure`]'s.

use clap::Args;
use iocap_model::{EngineChoice, JobSpec, RateProcess, Severity, SubmitMode};

use super::args::{duration_arg, engine_arg};
use super::output::OutputArg;
use super::save::SaveArgs;
use super::sure::SureArgs;

/// `--allow-overwrite`: the one way past the refusal to write what iocap did not create.
#[derive(Args, Debug, Clone, Default)]
pub struct SafetyArgs {
    /// Permit writes to files and devices iocap did not create (destroys their contents)
    #[arg(long)]
    pub allow_overwrite: bool,
}

/// `--duration`: the measured time of each test. It answers to `--step-duration` too, and
/// [`StepDurationArg`] to `--duration`, so one name serves every measuring command (scaleup's
/// and saturate's were told apart only by which one each took).
#[derive(Args, Debug, Clone)]
pub struct DurationArg {
    /// Measured time of each test
    #[arg(long, default_value = "10s", value_parser = duration_arg, alias = "step-duration")]
    pub duration: f64,
}

/// `--warmup`: the unmeasured time before each test or step.
#[derive(Args, Debug, Clone)]
pub struct WarmupArg {
    /// Unmeasured time before each test
    #[arg(long, default_value = "2s", value_parser = duration_arg)]
    pub warmup: f64,
}

/// `--duration` and `--warmup` together.
#[derive(Args, Debug, Clone)]
pub struct TimingArgs {
    #[command(flatten)]
    pub duration: DurationArg,
    #[command(flatten)]
    pub warmup: WarmupArg,
}

/// `--step-duration` (or `--duration`): the measured time of each step of a sweep.
#[derive(Args, Debug, Clone)]
pub struct StepDurationArg {
    /// Measured time of each step
    #[arg(long, default_value = "10s", value_parser = duration_arg, alias = "duration")]
    pub step_duration: f64,
}

/// `--engine`'s help: the engines of the system this is built for (the names are the system's
/// own, `iocap_model::engines`).
#[cfg(not(windows))]
pub const ENGINE_HELP: &str =
    "I/O engine: auto, io_uring, io_uring_unregistered (no registered file or buffers) or psync";
#[cfg(windows)]
pub const ENGINE_HELP: &str =
    "I/O engine: auto (iocp), iocp (I/O completion ports) or sync (a blocking handle per I/O)";

/// `--engine`.
#[derive(Args, Debug, Clone)]
pub struct EngineArg {
    // the help is this system's: ENGINE_HELP
    #[arg(long, default_value = "auto", value_parser = engine_arg(), help = ENGINE_HELP,
        hide_possible_values = true)]
    pub engine: EngineChoice,
}

/// `--submit`: when io_uring I/Os reach the kernel.
#[derive(Args, Debug, Clone)]
pub struct SubmitFlag {
    /// io_uring submission: auto (both tried in the warm-up, the faster kept), batch (the I/Os
    /// freed by one reap together: least CPU) or each (every I/O at once, as fio does)
    #[arg(long, value_parser = crate::output::choices(SUBMIT, SubmitMode::parse), default_value = "auto")]
    pub submit: SubmitMode,
}

/// `--submit`'s values, the model's `SubmitMode` (one enum, no copy here), in --help's words.
const SUBMIT: &[(&str, &str)] = &[
    (
        "auto",
        "Try both in the warm-up, alternating in 100 ms slices, and keep the faster",
    ),
    (
        "batch",
        "The I/Os freed by one reap together, in the io_uring_enter that waits",
    ),
    (
        "each",
        "Each I/O at once, with its own io_uring_enter (fio's iodepth_batch_submit=1)",
    ),
];

impl SubmitFlag {
    pub fn mode(&self) -> SubmitMode {
        self.submit
    }
}

/// `--rate-process`: how throttled I/O starts are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RateProcessArg {
    /// Evenly spaced, one interval apart (fio's default)
    Linear,
    /// Exponential gaps of the same mean: independent arrivals, as a database's clients
    Poisson,
}

impl RateProcessArg {
    pub fn process(self) -> RateProcess {
        match self {
            Self::Linear => RateProcess::Linear,
            Self::Poisson => RateProcess::Poisson,
        }
    }
}

/// `--engine` and `--submit` together.
#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    #[command(flatten)]
    pub engine: EngineArg,
    #[command(flatten)]
    pub submit: SubmitFlag,
}

impl EngineArgs {
    /// Sets the engine and the submission mode on `spec`.
    pub fn apply(&self, spec: &mut JobSpec) {
        spec.engine = self.engine.engine;
        spec.submit = self.submit.mode();
    }
}

/// What written data looks like (`--compressible`, `--dedupe`), shared by the commands that
/// write.
#[derive(Args, Debug, Clone, Default)]
pub struct DataShapeArgs {
    /// Share of each 4 KiB block written that is zeros, so a compressor saves about this much
    /// (fio's buffer_compress_percentage); 0 is incompressible
    #[arg(long, value_name = "PCT", default_value_t = 0,
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub compressible: u8,
    /// Share of the 4 KiB blocks written that duplicate other blocks (fio's
    /// dedupe_percentage); 0 makes every block unique
    #[arg(long, value_name = "PCT", default_value_t = 0,
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub dedupe: u8,
}

impl DataShapeArgs {
    pub fn apply(&self, spec: &mut JobSpec) {
        spec.compressible_pct = self.compressible;
        spec.dedupe_pct = self.dedupe;
    }
}

/// How bad a verdict or check must be for `--fail-on` to exit with 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Exit 1 when any line is WARN or FAIL
    Warn,
    /// Exit 1 when any line is FAIL
    Fail,
}

impl FailOn {
    /// Whether `--fail-on` (if given) trips on any of `found`.
    pub fn trips(fail_on: Option<FailOn>, mut found: impl Iterator<Item = Severity>) -> bool {
        fail_on.is_some_and(|f| found.any(|s| s.fails(f == FailOn::Warn)))
    }
}

/// The flags a measuring command ends with, in this order: what it may overwrite, how it
/// prints, its own groups (`E`: [`DataAndSure`] for run and saturate, `--repeat` for suites,
/// [`NoExtra`] for the rest), and how the run is kept.
#[derive(Args, Debug, Clone)]
pub struct CommonArgs<E: Args> {
    #[command(flatten)]
    pub safety: SafetyArgs,
    #[command(flatten)]
    pub output: OutputArg,
    #[command(flatten)]
    pub extra: E,
    #[command(flatten)]
    pub save: SaveArgs,
}

/// No flags of a command's own between `--output` and the store's.
#[derive(Args, Debug, Clone, Default)]
pub struct NoExtra {}

/// What written data looks like and how sure a figure must be: the commands that run a
/// workload the user describes (run, saturate).
#[derive(Args, Debug, Clone)]
pub struct DataAndSure {
    #[command(flatten)]
    pub data: DataShapeArgs,
    #[command(flatten)]
    pub sure: SureArgs,
}

impl DataAndSure {
    /// `--until-stable`, then the data shape, on `spec`.
    pub fn apply(&self, spec: &mut JobSpec) {
        self.sure.apply(spec);
        self.data.apply(spec);
    }
}

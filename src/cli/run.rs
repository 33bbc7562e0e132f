//! `iocap run`: flags in the style of fio and DiskSpd, turned into a [`JobSpec`].

use anyhow::{bail, Result};
use clap::Args;
use iocap_model::{Burst, EngineChoice, JobSpec, RwMode, SubmitMode, TargetSpec, DEFAULT_TARGET};

use super::args::{
    bs_split_arg, burst_arg, duration_arg, engine_arg, rate_arg, rw_arg, size_arg, DataShapeArgs,
    Mix,
};
use super::execute::{finish, session};
use super::save::SaveArgs;
use super::sure::SureArgs;
use super::{Exit, OutputFormat};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Files or block devices to test together; a directory means DIR/iocap.testfile.
    /// Default: ./iocap.testfile
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,

    /// Workload: read, write, randread, randwrite, rw or randrw (rw mixes sequential, randrw random)
    #[arg(long, default_value = "randread", value_parser = rw_arg, aliases = ["readwrite"])]
    pub rw: RwMode,

    /// Share of writes in percent for rw and randrw [default: 50]
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u8).range(0..=100),
          aliases = ["rwmixwrite"])]
    pub write_pct: Option<u8>,

    /// Block size, 512 B to 64 MiB (K, M suffixes are powers of 1024)
    #[arg(long, default_value = "8K", value_parser = size_arg,
          aliases = ["blocksize", "block-size"])]
    pub bs: u64,

    /// A block-size mix instead of one size, e.g. 8K:70,64K:30 (shares of the I/Os)
    #[arg(long, value_name = "MIX", value_parser = bs_split_arg, conflicts_with = "bs")]
    pub bs_split: Option<Mix>,

    /// Issue in bursts, like a checkpoint: ON:OFF seconds at full speed then idle (e.g. 2s:8s)
    #[arg(long, value_name = "ON:OFF", value_parser = burst_arg)]
    pub burst: Option<Burst>,

    /// Outstanding I/Os per thread per target
    #[arg(long, default_value_t = 16, aliases = ["iodepth", "queue-depth", "outstanding"])]
    pub qd: u32,

    /// Threads per target
    #[arg(long, default_value_t = 1, aliases = ["numjobs"])]
    pub threads: u32,

    /// Test range; a missing file is created at this size and filled [default: 1G for new files,
    /// the whole file or device otherwise]
    #[arg(long, value_parser = size_arg, aliases = ["filesize"])]
    pub size: Option<u64>,

    /// Measured time (e.g. 30s, 5m)
    #[arg(long, default_value = "10s", value_parser = duration_arg, aliases = ["runtime"])]
    pub duration: f64,

    /// Time before measuring starts, excluded from the figures
    #[arg(long, default_value = "2s", value_parser = duration_arg,
          aliases = ["ramp_time", "ramp-time"])]
    pub warmup: f64,

    /// Time after measuring ends, I/O still running, excluded from the figures
    #[arg(long, default_value = "0s", value_parser = duration_arg)]
    pub cooldown: f64,

    /// Seed for random offsets and data: the same seed gives the same offsets
    #[arg(long, default_value_t = 0x10CAFE)]
    pub seed: u64,

    /// Alignment of random offsets [default: the block size]
    #[arg(long, value_parser = size_arg)]
    pub align: Option<u64>,

    /// Limit the whole test to this many I/Os per second (spread over all threads)
    #[arg(long, value_parser = rate_arg)]
    pub rate_iops: Option<f64>,

    /// Limit the whole test to this many MB/s (10^6 bytes)
    #[arg(long, value_parser = rate_arg)]
    pub rate_mbps: Option<f64>,

    /// Open with O_DSYNC: each write completes only once durable
    #[arg(long)]
    pub write_through: bool,

    /// fsync after every N writes per thread
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub fsync_every: u32,

    /// Use the page cache instead of O_DIRECT
    #[arg(long)]
    pub buffered: bool,

    /// I/O engine: auto (io_uring, else psync), io_uring, io_uring_unregistered (no registered
    /// file or buffers, as fio by default) or psync
    #[arg(long, default_value = "auto", value_parser = engine_arg)]
    pub engine: EngineChoice,

    /// io_uring submission: auto (both tried in the warm-up, the faster kept), batch (the I/Os
    /// freed by one reap together, in the call that waits: least CPU) or each (every I/O at
    /// once, with its own system call, as fio does by default)
    #[arg(long, value_enum, default_value_t = SubmitArg::Auto)]
    pub submit: SubmitArg,

    /// Permit writes to files and devices iocap did not create (destroys their contents)
    #[arg(long)]
    pub allow_overwrite: bool,

    /// Output format; json and csv go to stdout alone
    #[arg(long, visible_alias = "format", value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    #[command(flatten)]
    pub data: DataShapeArgs,

    #[command(flatten)]
    pub sure: SureArgs,

    #[command(flatten)]
    pub save: SaveArgs,
}

/// `--submit`: when io_uring I/Os reach the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SubmitArg {
    /// Try both in the warm-up, alternating in 100 ms slices, and keep the faster
    Auto,
    /// The I/Os freed by one reap together, in the io_uring_enter that waits
    Batch,
    /// Each I/O at once, with its own io_uring_enter (fio's iodepth_batch_submit=1)
    Each,
}

impl SubmitArg {
    pub fn mode(self) -> SubmitMode {
        match self {
            SubmitArg::Auto => SubmitMode::Auto,
            SubmitArg::Batch => SubmitMode::Batch,
            SubmitArg::Each => SubmitMode::Each,
        }
    }
}

impl RunArgs {
    pub fn to_spec(&self) -> Result<JobSpec> {
        let write_pct = match (self.rw, self.write_pct) {
            (RwMode::Read | RwMode::RandRead, None) => 0,
            (RwMode::Write | RwMode::RandWrite, None) => 100,
            (RwMode::Rw | RwMode::RandRw, None) => 50,
            (RwMode::Rw | RwMode::RandRw, Some(p)) => p,
            (m, Some(_)) => bail!(
                "--write-pct needs a mixed workload (--rw rw or randrw), not {}",
                m.name()
            ),
        };
        let paths = if self.targets.is_empty() {
            vec![DEFAULT_TARGET.to_string()]
        } else {
            self.targets.clone()
        };
        // a mix: buffers hold the largest size, random offsets align to the smallest
        let split = self.bs_split.clone().map(|m| m.0).unwrap_or_default();
        let bs = split.iter().map(|b| b.bs_bytes).max().unwrap_or(self.bs);
        let min_bs = split.iter().map(|b| b.bs_bytes).min().unwrap_or(self.bs);
        let size_name = if split.is_empty() {
            iocap_model::format_bytes(self.bs)
        } else {
            split
                .iter()
                .map(|b| format!("{}:{}", iocap_model::format_bytes(b.bs_bytes), b.weight))
                .collect::<Vec<_>>()
                .join(",")
        };
        let spec = JobSpec {
            name: format!("{} {size_name}", self.rw.name()),
            targets: paths
                .into_iter()
                .map(|p| TargetSpec {
                    size_bytes: self.size,
                    ..TargetSpec::new(p)
                })
                .collect(),
            rw: self.rw,
            write_pct,
            bs_bytes: bs,
            qd: self.qd,
            threads: self.threads,
            size_bytes: self.size.unwrap_or(1 << 30),
            duration_s: self.duration,
            warmup_s: self.warmup,
            cooldown_s: self.cooldown,
            seed: self.seed,
            align_bytes: self.align.unwrap_or(min_bs),
            rate_iops: self.rate_iops,
            rate_mb_s: self.rate_mbps,
            direct: !self.buffered,
            write_through: self.write_through,
            fsync_every: self.fsync_every,
            engine: self.engine,
            allow_overwrite: self.allow_overwrite,
            bs_split: split,
            burst: self.burst,
            submit: self.submit.mode(),
            until_stable: None,
            compressible_pct: 0,
            dedupe_pct: 0,
        };
        let mut spec = spec;
        self.sure.apply(&mut spec);
        self.data.apply(&mut spec);
        spec.validate()?;
        Ok(spec)
    }
}

pub fn run(args: RunArgs) -> Result<Exit> {
    let spec = args.to_spec()?;
    args.save.check()?;
    let say = args.output == OutputFormat::Text;
    let r = session("run", Some(&args.sure), &args.save, |s| {
        for tests in s.repeated(std::slice::from_ref(&spec), 1, say)? {
            s.run.tests.extend(tests);
        }
        s.check_each_class();
        Ok(())
    })?;
    let code = finish(&r, args.output, || {
        let mut text = r
            .tests
            .iter()
            .map(iocap_report::text::render_test)
            .collect::<Vec<_>>()
            .join("\n");
        if !r.repeats.is_empty() {
            text.push('\n');
            text.push_str(&iocap_report::text::render_repeats(&r.repeats));
        }
        text
    });
    args.save.keep(std::slice::from_ref(&r))?;
    Ok(code)
}

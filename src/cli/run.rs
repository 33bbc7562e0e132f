//! `iocap run`: flags in the style of fio and DiskSpd, turned into a [`JobSpec`].

use anyhow::Result;
use clap::Args;
use iocap_console::{claim, flags::Keeping};
use iocap_model::{
    test_name, write_pct_of, Burst, JobSpec, RunCommand, RwMode, TargetSpec, DEFAULT_TARGET,
};
use iocap_session::Announce;

use super::execute::{session, Finish};
use super::Exit;
use iocap_flags::{
    bs_split_arg, burst_arg, duration_arg, rate_arg, rw_arg, size_arg, CommonArgs, DataAndSure,
    EngineArgs, Mix, RateProcessArg, TimingArgs,
};

/// `--engine`'s help in `iocap run`: this system's engines.
#[cfg(not(windows))]
const ENGINE_HELP: &str = "I/O engine: auto (io_uring, else psync), io_uring, \
    io_uring_unregistered (no registered file or buffers, as fio by default) or psync";
#[cfg(windows)]
const ENGINE_HELP: &str = "I/O engine: auto (iocp), iocp (overlapped I/O on I/O completion \
    ports, as DiskSpd) or sync (a blocking handle per outstanding I/O)";

#[derive(Args, Debug)]
#[command(
    mut_arg("duration", |a| a.help("Measured time (e.g. 30s, 5m)").alias("runtime")),
    mut_arg("warmup", |a| a
        .help("Time before measuring starts, excluded from the figures")
        .aliases(["ramp_time", "ramp-time"])),
    mut_arg("engine", |a| a.help(ENGINE_HELP)),
    mut_arg("submit", |a| a.help(
        "io_uring submission: auto (both tried in the warm-up, the faster kept), batch (the \
         I/Os freed by one reap together, in the call that waits: least CPU) or each (every \
         I/O at once, with its own system call, as fio does by default)")),
    mut_arg("output", |a| a.help("Output format; json and csv go to stdout alone")),
)]
pub struct RunArgs {
    /// Files or block devices to test together; a directory means DIR/iocap.testfile.
    /// Default: ./iocap.testfile
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
    /// Workload (rw mixes sequential reads and writes, randrw random ones)
    #[arg(long, default_value = "randread", value_parser = rw_arg(), aliases = ["readwrite"])]
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
    #[command(flatten)]
    pub timing: TimingArgs,
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
    /// How throttled I/Os are spaced: linear (evenly) or poisson (independent arrivals)
    #[arg(long, value_enum, default_value_t = RateProcessArg::Linear)]
    pub rate_process: RateProcessArg,
    /// Open with O_DSYNC: each write completes only once durable
    #[arg(long)]
    pub write_through: bool,
    /// fsync after every N writes per thread
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub fsync_every: u32,
    /// Use the page cache instead of O_DIRECT
    #[arg(long)]
    pub buffered: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub common: CommonArgs<DataAndSure>,
}

impl RunArgs {
    pub fn to_spec(&self) -> Result<JobSpec> {
        let write_pct = write_pct_of(self.rw, self.write_pct).map_err(anyhow::Error::msg)?;
        let paths = if self.targets.is_empty() {
            vec![DEFAULT_TARGET.to_string()]
        } else {
            self.targets.clone()
        };
        // a mix: buffers hold the largest size, random offsets align to the smallest
        let split = self.bs_split.clone().map(|m| m.0).unwrap_or_default();
        let bs = split.iter().map(|b| b.bs_bytes).max().unwrap_or(self.bs);
        let min_bs = split.iter().map(|b| b.bs_bytes).min().unwrap_or(self.bs);
        let mut spec = JobSpec {
            name: test_name(self.rw, self.bs, &split),
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
            duration_s: self.timing.duration.duration,
            warmup_s: self.timing.warmup.warmup,
            cooldown_s: self.cooldown,
            seed: self.seed,
            align_bytes: self.align.unwrap_or(min_bs),
            rate_iops: self.rate_iops,
            rate_mb_s: self.rate_mbps,
            rate_process: self.rate_process.process(),
            direct: !self.buffered,
            write_through: self.write_through,
            fsync_every: self.fsync_every,
            allow_overwrite: self.common.safety.allow_overwrite,
            bs_split: split,
            burst: self.burst,
            ..JobSpec::default()
        };
        self.engine.apply(&mut spec);
        self.common.extra.apply(&mut spec);
        spec.validate()?;
        Ok(spec)
    }
}

pub fn run(args: RunArgs) -> Result<Exit> {
    let spec = args.to_spec()?;
    let c = &args.common;
    c.save.claim(claim::tests([&spec]))?;
    let say = if c.output.is_text() {
        Announce::EachRun
    } else {
        Announce::Quiet
    };
    let r = session(RunCommand::Run, Some(&c.extra.sure), &c.save, |s| {
        for tests in s.repeated(std::slice::from_ref(&spec), 1, say)? {
            s.run.tests.extend(tests);
        }
        s.check_each_class();
        Ok(())
    })?;
    c.finish(&r, || iocap_report::text::single_run_text(&r))
}

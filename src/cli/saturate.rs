//! `iocap saturate`: raise the outstanding I/O step by step (1, 2, 4, ...) until throughput stops
//! rising while latency keeps climbing (the knee), or latency passes a ceiling; then run
//! throttled points at 10 to 100 % of the maximum for a load–latency curve. Answers "how far can
//! this storage be pushed", and "how many IOPS at my latency target" (CALIBRATE_IO's question).

use anyhow::Result;
use clap::Args;
use iocap_assess::SaturateConfig;
use iocap_console::{claim, flags::Keeping};
use iocap_model::{JobSpec, RunCommand, RwMode, TargetSpec};
use iocap_session::{BucketSpec, SaturateSpec, BUCKET_CHUNK_S};

use super::execute::{run_text, session, Finish};
use super::Exit;
use iocap_flags::{
    duration_arg, duration_list_arg, rw_arg, size_arg, size_list_arg, us_arg, CommonArgs,
    DataAndSure, DurationList, EngineArgs, SizeList, StepDurationArg, WarmupArg,
};

#[derive(Args, Debug)]
#[command(mut_arg("warmup", |a| a.help("Unmeasured time before each step")))]
pub struct SaturateArgs {
    /// Files or block devices, tested together at each step [default: ./iocap.testfile]
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
    /// Workload
    #[arg(long, default_value = "randread", value_parser = rw_arg())]
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
    #[command(flatten)]
    pub step: StepDurationArg,
    #[command(flatten)]
    pub warmup: WarmupArg,
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
    /// Block sizes swept past the knee, to tell a cap from the device's own limit (none:
    /// skip)
    #[arg(long, value_name = "SIZES", default_value = "4K,16K,64K", value_parser = size_list_arg)]
    pub sizes: SizeList,
    /// Skip timing the device's part of each request after the sweep (block tracepoints: root)
    #[arg(long)]
    pub no_device_time: bool,
    /// First measure a burst bucket: full speed until the rate falls and holds, then the
    /// refill probes; the steps then meet the baseline
    #[arg(long)]
    pub bucket: bool,
    /// The queue depth of the bucket's drain and probes
    #[arg(long, value_name = "QD", default_value_t = 32)]
    pub bucket_qd: u32,
    /// The longest the bucket's drain runs
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = duration_arg)]
    pub bucket_max: f64,
    /// The idle pauses of the refill probes, in order (none: skip)
    #[arg(long, value_name = "DURATIONS", default_value = "10s,30s",
          value_parser = duration_list_arg)]
    pub refill: DurationList,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub common: CommonArgs<DataAndSure>,
}

fn base_spec(a: &SaturateArgs) -> JobSpec {
    let mut spec = JobSpec {
        targets: TargetSpec::each_or_default(&a.targets),
        rw: a.rw,
        write_pct: a.rw.write_pct(a.write_pct),
        bs_bytes: a.bs,
        align_bytes: a.bs,
        threads: a.threads,
        size_bytes: a.size,
        duration_s: a.step.step_duration,
        warmup_s: a.warmup.warmup,
        allow_overwrite: a.common.safety.allow_overwrite,
        ..JobSpec::default()
    };
    a.engine.apply(&mut spec);
    a.common.extra.apply(&mut spec);
    spec
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
    let c = &a.common;
    c.save.claim(claim::tests([&base]))?;
    let spec = SaturateSpec {
        base,
        cfg,
        throttled: !a.no_throttled,
        sizes: a.sizes.0,
        bucket: a.bucket.then_some(BucketSpec {
            qd: a.bucket_qd,
            chunk_s: BUCKET_CHUNK_S,
            max_s: a.bucket_max,
            idle_s: a.refill.0,
        }),
        device_time: !a.no_device_time,
    };
    spec.check()?;
    let run = session(RunCommand::Saturate, Some(&c.extra.sure), &c.save, |s| {
        iocap_session::saturate(s, &spec)
    })?;
    c.finish(&run, || run_text(&run))
}

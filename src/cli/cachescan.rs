//! `iocap cachescan`: find the caches below the OS by measurement (a working-set sweep of
//! O_DIRECT random reads, and a read-after-write check), so that a test file can be made
//! larger than every cache in the path. The sweep lives in `iocap_session` (preflight runs a
//! short one to size its files), its rules in `iocap_assess::cachescan`.

use anyhow::{Context, Result};
use clap::Args;
use iocap_console::{claim, flags::Keeping};
use iocap_model::{RunCommand, DEFAULT_TARGET};
use iocap_session::{read_spec, ScanConfig};

use super::execute::{run_text, session, Finish};
use super::Exit;
use iocap_flags::{duration_arg, size_arg, CommonArgs, EngineArg, NoExtra, StepDurationArg};

#[derive(Args, Debug)]
#[command(
    mut_arg("step_duration", |a| a
        .help("Measured time of each working set, at qd 32 and again at qd 1")
        .default_value("2s")),
    mut_arg("engine", |a| a.help(iocap_flags::ENGINE_HELP)),
    mut_arg("allow_overwrite", |a| a.help(
        "Permit the read-after-write check on a file iocap did not create (overwrites pages)")),
)]
pub struct CachescanArgs {
    /// File or block device to read [default: ./iocap.testfile]
    #[arg(value_name = "TARGET")]
    pub target: Option<String>,
    /// Size of a test file that does not exist yet
    #[arg(long, default_value = "4G", value_parser = size_arg)]
    pub size: u64,
    /// The largest working set to try [default: the target's size]
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    pub max: Option<u64>,
    /// Size of each random read
    #[arg(long, default_value = "8K", value_parser = size_arg)]
    pub bs: u64,
    #[command(flatten)]
    pub step: StepDurationArg,
    /// Stop the sweep before a step that would end past this much time (e.g. 2m)
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub budget: Option<f64>,
    /// Skip the read-after-write check (it writes pages of the test file)
    #[arg(long)]
    pub no_write_check: bool,
    #[command(flatten)]
    pub engine: EngineArg,
    #[command(flatten)]
    pub common: CommonArgs<NoExtra>,
}

impl CachescanArgs {
    fn config(&self) -> ScanConfig {
        ScanConfig {
            target: self.target.clone().unwrap_or_else(|| DEFAULT_TARGET.into()),
            size_bytes: self.size,
            max_bytes: self.max,
            bs_bytes: self.bs,
            step_s: self.step.step_duration,
            budget_s: self.budget,
            write_check: !self.no_write_check,
            engine: self.engine.engine,
            allow_overwrite: self.common.safety.allow_overwrite,
        }
    }
}

pub fn cachescan(a: CachescanArgs) -> Result<Exit> {
    let c = a.config();
    let spec = read_spec(&c, "cachescan".into(), c.max_bytes, 32);
    spec.validate().context("cachescan")?;
    a.common.save.claim(claim::tests([&spec]))?;
    let run = session(RunCommand::Cachescan, None, &a.common.save, |s| {
        iocap_session::cachescan(s, &c)
    })?;
    a.common.finish(&run, || run_text(&run))
}

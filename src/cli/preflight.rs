//! `iocap preflight`: the job users come for. One command tests what a database will do to its
//! volumes (page reads raised to the knee, checkpoint writes, durable log writes at queue depth
//! 1, read-ahead scans, a backup that reads data while writing the backup volume) and answers
//! with a capacity table and a verdict per line, in plain words. `--quick` takes about two
//! minutes; the full mode measures long enough for array caches to settle. The sequence lives in
//! `iocap_session::preflight`; here the flags become its config.

use anyhow::Result;
use clap::Args;
use iocap_console::{
    claim,
    flags::{Keeping, Placing},
};
use iocap_model::RunCommand;
use iocap_session::{PreflightConfig, PreflightRequest};

use super::execute::{finish, run_text, session};
use super::Exit;
use iocap_flags::{size_arg, FailOn, OutputArg, RoleDirs, SafetyArgs, SaveArgs, SureArgs};

#[derive(Args, Debug)]
pub struct PreflightArgs {
    #[command(flatten)]
    pub roles: RoleDirs,
    /// Database family: sqlserver, postgres, mysql or oracle (or a profile TOML file)
    #[arg(long, default_value = "sqlserver")]
    pub profile: String,
    /// About two minutes instead of the full assessment (about ten)
    #[arg(long)]
    pub quick: bool,
    /// Size of test files that do not exist yet; skips the cache scan [default: 4 times the
    /// largest cache the scan finds, at least 1G quick, 8G full]
    #[arg(long, value_parser = size_arg)]
    pub size: Option<u64>,
    /// What the storage should deliver (TOML: links = "2 x 16Gb FC", random_read_8k_iops,
    /// random_write_8k_iops, sequential_mb_s, log_mb_s)
    #[arg(long, value_name = "FILE")]
    pub expect: Option<String>,
    /// Latency guidelines to hold the results against, overriding the defaults (TOML)
    #[arg(long, value_name = "FILE")]
    pub guidelines: Option<String>,
    /// The largest cache in the path (controller, array), to warn when a test file fits in it;
    /// skips the cache scan
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    pub cache_size: Option<u64>,
    /// The largest working set of the cache scan that sizes the test files (run unless --size
    /// or --cache-size is given) [default: 1G quick, 8G full]
    #[arg(long, value_name = "SIZE", value_parser = size_arg)]
    pub scan_max: Option<u64>,
    /// flash or rotational, for every role [default: from sysfs, else flash]
    #[arg(long, value_name = "CLASS")]
    pub device_class: Option<String>,
    #[command(flatten)]
    pub safety: SafetyArgs,
    /// Step and test durations, STEP:TEST (e.g. 1s:2s), for tests of iocap itself
    #[arg(long, hide = true, value_name = "STEP:TEST")]
    pub timing: Option<String>,
    /// Exit with 1 when a line of the capacity table is at least this bad
    #[arg(long, value_enum, value_name = "VERDICT")]
    pub fail_on: Option<FailOn>,
    #[command(flatten)]
    pub output: OutputArg,
    #[command(flatten)]
    pub sure: SureArgs,
    #[command(flatten)]
    pub save: SaveArgs,
}

fn config(a: &PreflightArgs) -> Result<PreflightConfig> {
    let request = PreflightRequest {
        profile: a.profile.clone(),
        guidelines: a.guidelines.clone(),
        expect: a.expect.clone(),
        device_class: a.device_class.clone(),
        quick: a.quick,
        size_bytes: a.size,
        cache_size_bytes: a.cache_size,
        scan_max_bytes: a.scan_max,
        timing: a.timing.clone(),
        allow_overwrite: a.safety.allow_overwrite,
    };
    let (places, sure) = (a.roles.places()?, a.sure.clone());
    request.config(
        Box::new(move |r| places.target(r)),
        Box::new(move |s| sure.apply(s)),
    )
}

pub fn preflight(a: PreflightArgs) -> Result<Exit> {
    let c = config(&a)?;
    // every workload is checked before the first runs
    c.check(&super::ranks::engine())?;
    a.save.claim(claim::saving())?;
    let run = session(RunCommand::Preflight, Some(&a.sure), &a.save, |s| {
        iocap_session::preflight(s, &c)
    })?;
    let code = finish(&run, a.output.output, || run_text(&run));
    a.save.keep(std::slice::from_ref(&run))?;
    let rows = run.preflight.iter().flat_map(|p| &p.rows);
    let check_failed = FailOn::trips(a.fail_on, rows.map(|r| r.verdict.severity()));
    Ok(if code == Exit::Ok && check_failed {
        Exit::CheckFailed
    } else {
        code
    })
}

//! `iocap scaleup VOL...`: each volume alone, then 1, 2, 4, 8 ... together, with the aggregate
//! against the sum of the same volumes alone. Practitioners expect near-linear scale-up; a
//! volume that does much worse than its peers, or a group far below linear, points at a shared
//! bottleneck (a controller, a link, a queue).

use anyhow::{bail, Result};
use clap::Args;
use iocap_console::{claim, flags::Keeping};
use iocap_model::{JobSpec, Role, RunCommand, RwMode, TargetSpec, DEFAULT_TARGET};
use iocap_session::{RolePlaces, ScaleupSpec};

use super::execute::{run_text, session, Finish};
use super::Exit;
use iocap_flags::{rw_arg, size_arg, CommonArgs, EngineArgs, NoExtra, TimingArgs};

#[derive(Args, Debug)]
pub struct ScaleupArgs {
    /// Volumes: directories (a test file is made in each), files or block devices; with
    /// --hosts, the one target every host tests (may hold {host} and {rank})
    #[arg(required_unless_present = "hosts", value_name = "VOL")]
    pub volumes: Vec<String>,
    /// Scale across hosts instead of volumes: each MPI rank alone, then 2, 4 ... ranks
    /// together (run under mpirun or srun; docs/mpi.md)
    #[arg(long)]
    pub hosts: bool,
    #[arg(long, default_value = "randread", value_parser = rw_arg())]
    pub rw: RwMode,
    #[arg(long, default_value = "8K", value_parser = size_arg)]
    pub bs: u64,
    /// Outstanding I/Os per volume
    #[arg(long, default_value_t = 32)]
    pub qd: u32,
    /// Size of test files that do not exist yet
    #[arg(long, default_value = "1G", value_parser = size_arg)]
    pub size: u64,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub common: CommonArgs<NoExtra>,
}

pub fn scaleup(a: ScaleupArgs) -> Result<Exit> {
    let paths: Vec<String> = a
        .volumes
        .iter()
        .map(|v| {
            RolePlaces {
                data: Some(v.into()),
                ..Default::default()
            }
            .target(Role::Data)
        })
        .collect();
    let mut spec = ScaleupSpec {
        paths,
        base: JobSpec {
            rw: a.rw,
            write_pct: a.rw.write_pct(30),
            bs_bytes: a.bs,
            align_bytes: a.bs,
            qd: a.qd,
            size_bytes: a.size,
            duration_s: a.timing.duration.duration,
            warmup_s: a.timing.warmup.warmup,
            allow_overwrite: a.common.safety.allow_overwrite,
            ..JobSpec::default()
        },
    };
    a.engine.apply(&mut spec.base);
    if !a.hosts && spec.paths.len() < 2 {
        bail!("scaleup needs two or more volumes (or --hosts, under mpirun)");
    }
    if a.hosts && spec.paths.len() > 1 {
        bail!("scaleup --hosts takes one target, which every host tests");
    }
    if !a.hosts {
        spec.check()?;
    }
    let c = &a.common;
    c.save.claim(claim::targets(&spec.paths))?;
    let run = session(RunCommand::Scaleup, None, &c.save, |s| {
        if a.hosts {
            // the target as given: {host} and {rank} may name a file or a directory per rank
            let target = a.volumes.first().cloned();
            let base = JobSpec {
                targets: vec![TargetSpec::new(
                    target.unwrap_or_else(|| DEFAULT_TARGET.into()),
                )],
                ..spec.base.clone()
            };
            iocap_session::scaleup_hosts(s, &base)
        } else {
            iocap_session::scaleup(s, &spec)
        }
    })?;
    c.finish(&run, || run_text(&run))
}

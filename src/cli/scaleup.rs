//! `iocap scaleup VOL...`: each volume alone, then 1, 2, 4, 8 ... together, with the aggregate
//! against the sum of the same volumes alone. Practitioners expect near-linear scale-up; a
//! volume that does much worse than its peers, or a group far below linear, points at a shared
//! bottleneck (a controller, a link, a queue).

use anyhow::{bail, Result};
use clap::Args;
use iocap_assess::{group_sizes, scaleup as assess_scaleup};
use iocap_model::{format_bytes, EngineChoice, JobSpec, RwMode, TargetSpec};

use super::args::{duration_arg, engine_arg, rw_arg, size_arg};
use super::execute::{finish, new_run, run_one, run_text};
use super::roles::RoleDirs;
use super::run::SubmitArg;
use super::save::SaveArgs;
use super::signals::interrupted;
use super::{Exit, OutputFormat};

#[derive(Args, Debug)]
pub struct ScaleupArgs {
    /// Volumes: directories (a test file is made in each), files or block devices
    #[arg(required = true, num_args = 2.., value_name = "VOL")]
    pub volumes: Vec<String>,
    #[arg(long, default_value = "randread", value_parser = rw_arg)]
    pub rw: RwMode,
    #[arg(long, default_value = "8K", value_parser = size_arg)]
    pub bs: u64,
    /// Outstanding I/Os per volume
    #[arg(long, default_value_t = 32)]
    pub qd: u32,
    /// Size of test files that do not exist yet
    #[arg(long, default_value = "1G", value_parser = size_arg)]
    pub size: u64,
    /// Measured time of each test
    #[arg(long, default_value = "10s", value_parser = duration_arg)]
    pub duration: f64,
    #[arg(long, default_value = "2s", value_parser = duration_arg)]
    pub warmup: f64,
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
    pub save: SaveArgs,
}

pub fn scaleup(a: ScaleupArgs) -> Result<Exit> {
    let paths: Vec<String> = a
        .volumes
        .iter()
        .map(|v| {
            RoleDirs {
                data: Some(v.into()),
                ..Default::default()
            }
            .target("data")
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = paths.iter().find(|p| !seen.insert(*p)) {
        bail!("{dup} is given twice: each volume once");
    }
    let what = format!("{} {}", a.rw.name(), format_bytes(a.bs));
    let spec_for = |targets: &[String], name: String| JobSpec {
        name,
        targets: targets.iter().map(TargetSpec::new).collect(),
        rw: a.rw,
        write_pct: a.rw.write_pct(30),
        bs_bytes: a.bs,
        align_bytes: a.bs,
        qd: a.qd,
        size_bytes: a.size,
        duration_s: a.duration,
        warmup_s: a.warmup,
        engine: a.engine,
        submit: a.submit.mode(),
        allow_overwrite: a.allow_overwrite,
        ..JobSpec::default()
    };
    for p in &paths {
        spec_for(std::slice::from_ref(p), String::new()).validate()?;
    }
    a.save.check()?;
    let mut run = new_run("scaleup");
    a.save.stamp(&mut run);
    let mut alone_idx = Vec::new();
    for p in &paths {
        if interrupted() {
            break;
        }
        let spec = spec_for(std::slice::from_ref(p), format!("{what} {p} alone"));
        super::progress::set_label(&spec.name);
        let out = run_one(&spec)?;
        alone_idx.push((p.clone(), run.tests.len() as u32));
        run.tests.push(out.result);
    }
    let mut together_idx = Vec::new();
    for n in group_sizes(paths.len()).into_iter().filter(|n| *n > 1) {
        if interrupted() || run.tests.iter().any(|t| t.error.is_some()) {
            break;
        }
        let group = &paths[..n];
        let spec = spec_for(group, format!("{what} {n} volumes together"));
        super::progress::set_label(&spec.name);
        let out = run_one(&spec)?;
        together_idx.push((group.to_vec(), run.tests.len() as u32));
        run.tests.push(out.result);
    }
    let alone: Vec<_> = alone_idx
        .iter()
        .map(|(p, i)| (p.clone(), &run.tests[*i as usize], *i))
        .collect();
    let together: Vec<_> = together_idx
        .iter()
        .map(|(g, i)| (g.clone(), &run.tests[*i as usize], *i))
        .collect();
    run.scaleup = Some(assess_scaleup(&alone, &together));
    super::audit::record_config(&mut run);
    let code = finish(&run, a.output, || run_text(&run));
    a.save.keep(std::slice::from_ref(&run))?;
    Ok(code)
}

//! `iocap verify`: does the storage give back what was written, and keep what it acknowledged?
//! Flags in, an [`iocap_verify::VerifyConfig`] or [`iocap_verify::CheckConfig`] out; the
//! result is a run like any other (saved, shown, exported), with its findings in `verify`.

use iocap_console::{claim, flags::Keeping};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;
use iocap_model::Payload;
use iocap_model::{format_bytes, RunCommand, Verify};
use iocap_report::fmt::note_line;
use iocap_verify::{target_path, CheckConfig, VerifyConfig, VerifyError};

use super::execute::new_run;
use super::{print_stdout, Exit};
use iocap_console::interrupt::INTERRUPTED;
use iocap_flags::{
    size_arg, verify_output, DurationArg, EngineArg, OutputArg, SafetyArgs, SaveArgs,
};

/// `--engine`'s help in `iocap verify`: this system's engines.
#[cfg(not(windows))]
const ENGINE_HELP: &str = "I/O engine: auto (io_uring, else psync), io_uring (threads rings of \
    qd I/Os) or psync (threads × qd synchronous threads)";
#[cfg(windows)]
const ENGINE_HELP: &str = "I/O engine: auto (iocp), iocp (threads completion ports of qd I/Os) \
    or sync (threads × qd synchronous threads)";

#[derive(Args, Debug)]
#[command(
    mut_arg("duration", |a| a.help(
        "Time of the concurrent phase, between the initial fill and the final pass")),
    mut_arg("allow_overwrite", |a| a.help(
        "Permit rewriting a file iocap did not create (destroys its contents)")),
    mut_arg("engine", |a| a.help(ENGINE_HELP)),
    mut_arg("output", verify_output),
)]
pub struct VerifyArgs {
    /// The file to verify (created by iocap); a directory means DIR/iocap-verify.testfile.
    /// With --check: the file to check [default: the one the journal names]
    #[arg(value_name = "TARGET")]
    pub target: Option<String>,
    #[command(flatten)]
    pub duration: DurationArg,
    /// Size of the verify file
    #[arg(long, default_value = "256M", value_parser = size_arg)]
    pub size: u64,
    /// Threads; each keeps --qd I/Os in flight
    #[arg(long, default_value_t = 2)]
    pub threads: u32,
    /// In-flight I/Os per thread (with psync or sync, each a thread of its own)
    #[arg(long, default_value_t = 4)]
    pub qd: u32,
    /// Seed of the page contents
    #[arg(long, default_value_t = 0x10CAFE)]
    pub seed: u64,
    /// Page size: a power of two from 4K to 64K
    #[arg(long, default_value = "8K", value_parser = size_arg)]
    pub page_size: u64,
    /// Record every acknowledged (durable) write in FILE, a new file, for a later --check
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Check the file against the journal's acknowledged writes instead of running (after a
    /// crash or power cut); needs --journal
    #[arg(long, requires = "journal")]
    pub check: bool,
    /// With --check: the write unit the storage keeps whole; a page torn between acknowledged
    /// and newer writes at this boundary is accepted
    #[arg(long, default_value = "4K", value_parser = size_arg)]
    pub atomic_unit: u64,
    /// Where to write expected and actual bytes of failed pages [default: TARGET.dumps]
    #[arg(long, value_name = "DIR")]
    pub dump_dir: Option<PathBuf>,
    #[command(flatten)]
    pub safety: SafetyArgs,
    #[command(flatten)]
    pub engine: EngineArg,
    /// Use the page cache instead of O_DIRECT (Windows: FILE_FLAG_NO_BUFFERING; reads may then
    /// come from memory)
    #[arg(long)]
    pub buffered: bool,
    #[command(flatten)]
    pub output: OutputArg,
    #[command(flatten)]
    pub save: SaveArgs,
}

pub fn verify(args: VerifyArgs) -> Result<Exit> {
    if !args.check && args.size < args.page_size.saturating_mul(16) {
        bail!(
            "--size {} holds fewer than 16 pages of {}",
            format_bytes(args.size),
            format_bytes(args.page_size)
        );
    }
    let file = target_path(args.target.as_deref().map(Path::new));
    let file = (!args.check || args.target.is_some()).then_some(file.as_path());
    args.save
        .claim(claim::verify(file, args.journal.as_deref(), args.check))?;
    let mut run = new_run(RunCommand::Verify);
    let res = if args.check {
        iocap_verify::check(&check_config(&args), &INTERRUPTED).map(|o| o.verify)
    } else {
        let cfg = run_config(&args);
        cfg.validate()?;
        if args.output.is_text() {
            eprintln!(
                "{}",
                note_line(&format!(
                    "verifying {} ({}): fill, {:.1} s of mixed I/O, then every page once more",
                    cfg.target.display(),
                    format_bytes(cfg.size_bytes),
                    args.duration.duration
                ))
            );
        }
        iocap_verify::run(&cfg, &INTERRUPTED).map(|o| o.verify)
    };
    let v = match res {
        Ok(v) => v,
        Err(VerifyError::Interrupted(what)) => {
            let line = format!("interrupted while filling {what}; nothing was verified");
            eprintln!("{}", note_line(&line));
            return Ok(Exit::Interrupted);
        }
        Err(e) => return Err(e.into()),
    };
    let code = exit_code(&v);
    if v.interrupted {
        run.interrupted_by = Some(
            iocap_console::interrupt::stopped_by()
                .unwrap_or("stop")
                .into(),
        );
    }
    run.set(Payload::Verify(v));
    args.save.stamp(&mut run);
    if args.output.is_text() {
        // PARTIAL first when interrupted, as every run's view
        print_stdout(&iocap_report::run_text(&run));
    } else {
        print_stdout(&iocap_report::json(&run));
    }
    args.save.keep(std::slice::from_ref(&run))?;
    Ok(code)
}

fn check_config(args: &VerifyArgs) -> CheckConfig {
    let journal = args.journal.clone().expect("clap requires --journal");
    CheckConfig {
        target: args
            .target
            .as_deref()
            .map(|t| target_path(Some(Path::new(t)))),
        atomic_unit: args.atomic_unit as usize,
        dump_dir: args.dump_dir.clone(),
        direct: !args.buffered,
        ..CheckConfig::new(journal)
    }
}

fn run_config(args: &VerifyArgs) -> VerifyConfig {
    VerifyConfig {
        target: target_path(args.target.as_deref().map(Path::new)),
        size_bytes: args.size,
        page_bytes: args.page_size as usize,
        threads: args.threads,
        qd: args.qd,
        seed: args.seed,
        duration: Duration::from_secs_f64(args.duration.duration),
        direct: !args.buffered,
        journal: args.journal.clone(),
        dump_dir: args.dump_dir.clone(),
        allow_overwrite: args.safety.allow_overwrite,
        engine: args.engine.engine,
    }
}

fn exit_code(v: &Verify) -> Exit {
    if v.interrupted {
        Exit::Interrupted
    } else if v.passed {
        Exit::Ok
    } else {
        Exit::CheckFailed
    }
}

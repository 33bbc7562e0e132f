//! `iocap fsync`: the ways of making a log write durable, compared at queue depth 1 per write
//! size, as pg_test_fsync does (see docs/fsync.md).

use std::io::IsTerminal;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use iocap_fsync::{Method, Offsets, Plan, Profile, DEFAULT_SIZES, QUICK_SIZES};

use super::args::duration_arg;
use super::execute::{finish, new_run};
use super::flags::{OutputArg, OutputFormat, SafetyArgs};
use super::save::SaveArgs;
use super::signals::INTERRUPTED;
use super::Exit;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProfileArg {
    /// wal_sync_method
    Postgres,
    /// FUA or forced flush on Linux
    Sqlserver,
    /// innodb_flush_method
    Mysql,
    /// filesystemio_options
    Oracle,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OffsetsArg {
    /// Rewrite offset 0 every time, as pg_test_fsync does
    Same,
    /// Walk through the 16 MiB file, wrapping at its end
    Cycle,
}

/// A parsed `--sizes` (a newtype: clap would take a bare Vec for a repeated flag).
#[derive(Debug, Clone)]
pub struct Sizes(pub Vec<u64>);

fn sizes_arg(s: &str) -> Result<Sizes, String> {
    iocap_fsync::parse_sizes(s).map(Sizes)
}

/// A parsed `--methods`, in the order given.
#[derive(Debug, Clone)]
pub struct Methods(pub Vec<Method>);

fn methods_arg(s: &str) -> Result<Methods, String> {
    iocap_fsync::parse_methods(s).map(Methods)
}

#[derive(Args, Debug)]
#[command(
    mut_arg("allow_overwrite", |a| a.help(
        "Permit writes to a file or device iocap did not create (destroys its contents)")),
    mut_arg("output", |a| a.help("Output format; json goes to stdout alone")),
)]
pub struct FsyncArgs {
    /// An existing directory (DIR/iocap-fsync.testfile is created), test file, or block device
    #[arg(value_name = "TARGET", default_value = ".")]
    pub target: String,

    /// Write sizes, 512 B to 64K, comma-separated [default: 512,4K,8K,16K,64K; --quick: 8K,16K]
    #[arg(long, value_name = "SIZES", value_parser = sizes_arg)]
    pub sizes: Option<Sizes>,

    /// Methods to measure, in this order, comma-separated [default: all seven: fsync, fdatasync,
    /// o_dsync, o_direct_o_dsync, o_sync, o_direct_o_sync, rwf_dsync]
    #[arg(long, value_name = "METHODS", value_parser = methods_arg)]
    pub methods: Option<Methods>,

    /// Measured time per method and size [default: 2s; --quick: 1s]
    #[arg(long, value_parser = duration_arg)]
    pub duration: Option<f64>,

    /// 1 s per point, 8K and 16K only
    #[arg(long)]
    pub quick: bool,

    /// Where each write goes: same (offset 0, as pg_test_fsync) or cycle
    #[arg(long, value_enum, default_value_t = OffsetsArg::Same)]
    pub offsets: OffsetsArg,

    /// The database family to recommend settings for
    #[arg(long, value_enum, default_value_t = ProfileArg::Postgres)]
    pub profile: ProfileArg,

    #[command(flatten)]
    pub safety: SafetyArgs,

    #[command(flatten)]
    pub output: OutputArg,

    #[command(flatten)]
    pub save: SaveArgs,
}

pub fn fsync(args: FsyncArgs) -> Result<Exit> {
    if args.output.output == OutputFormat::Csv {
        bail!("iocap fsync prints text or json; --output csv is not offered");
    }
    if std::fs::symlink_metadata(&args.target).is_err() {
        bail!(
            "{}: no such directory, file or device; give the directory the test file goes in \
             (it is created there as {}), or a test file or device that exists",
            args.target,
            iocap_fsync::DEFAULT_FILE
        );
    }
    let duration_s = args.duration.unwrap_or(if args.quick { 1.0 } else { 2.0 });
    if !(duration_s > 0.0 && duration_s <= 3600.0) {
        bail!("--duration must be more than 0 s and at most an hour per point");
    }
    let sizes = args.sizes.clone().map(|s| s.0).unwrap_or_else(|| {
        if args.quick {
            QUICK_SIZES.to_vec()
        } else {
            DEFAULT_SIZES.to_vec()
        }
    });
    let plan = Plan {
        target: args.target.clone().into(),
        sizes,
        methods: args
            .methods
            .clone()
            .map_or_else(|| Method::ALL.to_vec(), |m| m.0),
        duration_s,
        offsets: match args.offsets {
            OffsetsArg::Same => Offsets::Same,
            OffsetsArg::Cycle => Offsets::Cycle,
        },
        profile: match args.profile {
            ProfileArg::Postgres => Profile::Postgres,
            ProfileArg::Sqlserver => Profile::Sqlserver,
            ProfileArg::Mysql => Profile::Mysql,
            ProfileArg::Oracle => Profile::Oracle,
        },
        allow_overwrite: args.safety.allow_overwrite,
    };
    args.save.check()?;
    let mut run = new_run("fsync");
    let live = std::io::stderr().is_terminal();
    let total = plan.sizes.len() * plan.methods.len();
    let mut n = 0;
    let outcome = iocap_fsync::run(&plan, &INTERRUPTED, &mut |m, size| {
        n += 1;
        if live {
            eprint!(
                "\r\x1b[2Kiocap fsync: {} {} ({n}/{total})",
                m.label(),
                iocap_model::format_bytes(size)
            );
        }
    });
    if live {
        eprint!("\r\x1b[2K");
    }
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) if super::signals::interrupted() => {
            eprintln!("iocap: interrupted before anything was measured: {e}");
            return Ok(Exit::Interrupted);
        }
        Err(e) => return Err(e.into()),
    };
    args.save.stamp(&mut run);
    run.fsync = Some(outcome.report);
    let r = &run;
    let mut code = finish(r, args.output.output, || {
        r.fsync
            .as_ref()
            .map(iocap_report::fsync::render)
            .unwrap_or_default()
    });
    if outcome.interrupted {
        eprintln!("iocap: interrupted; the points measured until then are shown");
        code = Exit::Interrupted;
    }
    args.save.keep(std::slice::from_ref(r))?;
    Ok(code)
}

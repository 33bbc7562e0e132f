//! `iocap fsync`: the ways of making a log write durable, compared at queue depth 1 per write
//! size, as pg_test_fsync does (see docs/fsync.md). The flags become an
//! [`iocap_fsync::Request`], which fills in the defaults.

use anyhow::{bail, Result};
use clap::Args;
use iocap_console::{claim, flags::Keeping};
use iocap_fsync::{DbFamily, Method, Offsets, Request};
use iocap_model::Payload;
use iocap_model::RunCommand;

use super::execute::{finish, new_run, run_text};
use super::Exit;
use iocap_console::interrupt::INTERRUPTED;
use iocap_flags::{choices, duration_arg, CommonArgs, NoExtra, OutputFormat};

/// `--profile`: the family, with the setting each one's recommendation is about.
#[cfg(not(windows))]
const FAMILIES: &[(&str, &str)] = &[
    ("postgres", "wal_sync_method"),
    ("sqlserver", "FUA or forced flush on Linux"),
    ("mysql", "innodb_flush_method"),
    ("oracle", "filesystemio_options"),
];
#[cfg(windows)]
const FAMILIES: &[(&str, &str)] = &[
    ("postgres", "wal_sync_method"),
    ("sqlserver", "its log's NO_BUFFERING|WRITE_THROUGH writes"),
    ("mysql", "the redo log's FlushFileBuffers"),
    ("oracle", "its unbuffered redo writes"),
];

/// `--methods`' help: this system's methods, named from the list the measurement uses.
fn methods_help() -> String {
    let ids: Vec<&str> = iocap_fsync::method::native()
        .iter()
        .map(|m| m.id())
        .collect();
    format!(
        "Methods to measure, in this order, comma-separated [default: all {}: {}]",
        ids.len(),
        ids.join(", ")
    )
}

/// `--offsets`.
const OFFSETS: &[(&str, &str)] = &[
    ("same", "Rewrite offset 0 every time, as pg_test_fsync does"),
    ("cycle", "Walk through the 16 MiB file, wrapping at its end"),
];

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
    #[arg(long, value_name = "METHODS", value_parser = methods_arg, help = methods_help())]
    pub methods: Option<Methods>,
    /// Measured time per method and size, and at least 16 writes [default: 2s;
    /// --quick: 1s]
    #[arg(long, value_parser = duration_arg)]
    pub duration: Option<f64>,
    /// 1 s per point, 8K and 16K only
    #[arg(long)]
    pub quick: bool,
    /// Where each write goes: same (offset 0, as pg_test_fsync) or cycle
    #[arg(long, value_parser = choices(OFFSETS, Offsets::parse), default_value = "same")]
    pub offsets: Offsets,
    /// The database family to recommend settings for
    #[arg(long, value_parser = choices(FAMILIES, DbFamily::parse), default_value = "postgres")]
    pub profile: DbFamily,
    #[command(flatten)]
    pub common: CommonArgs<NoExtra>,
}

pub fn fsync(args: FsyncArgs) -> Result<Exit> {
    let c = &args.common;
    if c.output.output == OutputFormat::Csv {
        bail!("iocap fsync prints text or json; --output csv is not offered");
    }
    let plan = Request {
        target: args.target.clone(),
        sizes: args.sizes.clone().map(|s| s.0),
        methods: args.methods.clone().map(|m| m.0),
        duration_s: args.duration,
        quick: args.quick,
        offsets: args.offsets,
        profile: args.profile,
        allow_overwrite: c.safety.allow_overwrite,
    }
    .plan()?;
    c.save
        .claim(claim::target(&iocap_fsync::resolve_target(&plan.target)))?;
    let mut run = new_run(RunCommand::Fsync);
    let total = plan.sizes.len() * plan.methods.len();
    let mut line = iocap_console::progress::PointLine::new("iocap fsync", total);
    let outcome = iocap_fsync::run(&plan, &INTERRUPTED, &mut |m, size| {
        line.point(&format!(
            "{} {}",
            m.label(),
            iocap_model::format_bytes(size)
        ))
    });
    drop(line);
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) if iocap_console::interrupt::interrupted() => {
            let e = iocap_report::fmt::printable(&e.to_string()).into_owned();
            eprintln!("iocap: interrupted before anything was measured: {e}");
            return Ok(Exit::Interrupted);
        }
        Err(e) => return Err(e.into()),
    };
    c.save.stamp(&mut run);
    run.set(Payload::Fsync(outcome.report));
    let r = &run;
    let mut code = finish(r, c.output.output, || run_text(r));
    if outcome.interrupted {
        eprintln!("iocap: interrupted; the points measured until then are shown");
        code = Exit::Interrupted;
    }
    c.save.keep(std::slice::from_ref(r))?;
    Ok(code)
}

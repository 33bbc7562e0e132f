//! The command line: one module per command, each turning its flags into a config, calling a
//! library (a session of `iocap-session` for the measuring commands, the store, the views of
//! `iocap-report`) and printing. The flags several commands share are declared once in
//! `iocap-flags`; the terminal's progress, Ctrl-C, the store and the files written for the user
//! are `iocap-console`'s. [`execute`] runs a session on this process's executor and prints its
//! run; [`ranks`] is the place of this process in a multi-host run.

mod audit;
mod baseline;
mod cachescan;
mod capture;
mod compare;
mod cost;
mod diskspd;
mod execute;
mod export;
mod fill;
mod fsync;
mod history;
mod install;
mod monitor;
mod platform;
mod preflight;
mod ranks;
mod replay;
mod run;
mod saturate;
mod scaleup;
mod sqlio;
mod suite;
mod trace;
mod verify;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Exit codes: 0 ok, 1 a check failed, 2 usage or operational error, 130 interrupted (Ctrl-C or
/// SIGTERM, the fill of a test file included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok = 0,
    CheckFailed = 1,
    Error = 2,
    Interrupted = 130,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}

#[derive(Parser)]
#[command(
    name = "iocap",
    version = install::VERSION,
    disable_version_flag = true,
    override_usage = "iocap <COMMAND>\n       iocap --version [--verbose]",
    args_conflicts_with_subcommands = true,
    about = "Measure and validate the storage under a database server",
    long_about = "iocap measures what the storage under a database server can do: IOPS, MB/s \
and latency percentiles for database-shaped I/O, on files or block devices, with io_uring or \
plain pread/pwrite. It never writes to data it did not create unless told to.",
    // where to start, right after the description (clap's default puts before_help first)
    help_template = "{about-with-newline}\n{before-help}{usage-heading} {usage}\n\n{all-args}{after-help}",
    before_help = "Start here: iocap preflight --quick --data DIR (about two minutes): what the \
storage under DIR can do for a database, with verdicts.",
    after_help = "Exit codes: 0 ok, 1 a check failed, 2 usage or operational error, 130 interrupted.",
    args_override_self = true,
    max_term_width = 80
)]
struct Cli {
    #[command(flatten)]
    version: install::VersionFlags,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run one I/O test (default: 8K random reads on ./iocap.testfile)
    Run(Box<run::RunArgs>),
    /// Run a test given in SQLIO's flags (-kR -s10 -frandom -o8 -b8 -LS -Fparam.txt)
    #[command(disable_help_flag = true)]
    Sqlio {
        /// SQLIO flags, as SQLIO takes them
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run every SQLIO call of a Windows batch file (.bat/.cmd), in order
    SqlioBatch(sqlio::BatchArgs),
    /// Run a test given in DiskSpd's flags (-b8K -d60 -o8 -t4 -r -w30 -Sh -L -c10G FILE)
    #[command(disable_help_flag = true)]
    Diskspd {
        /// DiskSpd flags and targets, as DiskSpd takes them
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// List saved runs, newest first (filters: --host --label --tag --target --since --until)
    History(history::HistoryArgs),
    /// Show a saved run as it looked right after it ran
    Show(history::ShowArgs),
    /// Compare runs side by side and flag regressions (BASE RUN..., or --baseline RUN)
    Compare(compare::CompareArgs),
    /// Set, show or clear the baseline run of a host and target
    Baseline(baseline::BaselineArgs),
    /// Export saved runs as JSON, CSV or Markdown
    Export(export::ExportArgs),
    /// Write a self-contained HTML report of saved runs
    Report(export::ReportArgs),
    /// Delete saved runs
    Delete(history::DeleteArgs),
    /// Delete saved runs older than an age (baseline runs are kept)
    Prune(history::PruneArgs),
    /// What this storage can do for a database: a capacity table with verdicts (--quick: 2 min)
    Preflight(Box<preflight::PreflightArgs>),
    /// Raise the queue depth until throughput stops rising: the knee, and IOPS at a latency target
    Saturate(Box<saturate::SaturateArgs>),
    /// Each volume alone, then 1, 2, 4 ... together: aggregate and efficiency against linear
    Scaleup(Box<scaleup::ScaleupArgs>),
    /// Find the caches below the OS: read working sets doubling from 16 MiB, see where
    /// latency rises and IOPS fall; and whether a write cache keeps recent writes
    Cachescan(Box<cachescan::CachescanArgs>),
    /// List, show or run a suite of tests (built-in: quick, sqlio-classic, oltp, dss, edge-matrix)
    Suite(suite::SuiteArgs),
    /// Check the host's configuration under PATHs: alignment, scheduler, queues, cache, CPU power
    Audit(audit::AuditArgs),
    /// Log-flush methods compared at queue depth 1 per write size, like pg_test_fsync
    Fsync(Box<fsync::FsyncArgs>),
    /// The kernel's disk counters live, like iostat -x 1 (r/s, w/s, await, aqu-sz, %util)
    Monitor(monitor::MonitorArgs),
    /// Verify data integrity: pages written and read like a database's, each read checked; with
    /// --journal, whether acknowledged writes survive a crash (--check)
    Verify(Box<verify::VerifyArgs>),
    /// CPU per I/O over engines, block sizes and cache modes; IOPS per core, cores for a target
    Cost(Box<cost::CostArgs>),
    /// Record what a device is sent (eBPF; root): a trace file, and the workload described
    Capture(Box<capture::CaptureArgs>),
    /// Describe a trace (iocap's, blktrace's, fio's iolog): mix, sizes, randomness, queue
    /// depth, bursts, flushes, latency, working set
    #[command(visible_alias = "characterize")]
    Characterise(Box<capture::CharacteriseArgs>),
    /// Convert a trace (iocap's, blktrace's, fio's iolog) to iocap's file, fio's iolog or CSV
    Convert(trace::ConvertArgs),
    /// Replay a trace on a target at its recorded times (or faster): latency, queue depth and
    /// schedule lag beside the recording's
    Replay(Box<replay::ReplayArgs>),
    /// Print a shell completion script (bash, zsh, fish, powershell)
    Completions(install::CompletionsArgs),
    /// Print the man page (roff) of iocap or of a subcommand, or write them all (--dir)
    Man(install::ManArgs),
    /// Fill a store with constructed runs (for benchmarks and tests)
    #[command(hide = true)]
    StoreFill(fill::FillArgs),
}

/// Writes to stdout; a closed pipe (`iocap ... | head`) ends quietly instead of failing.
pub fn print_stdout(s: &str) {
    if !ranks::is_root() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if out
        .write_all(s.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        std::process::exit(0);
    }
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            if let Some(plain) = iocap_flags::plain_error(&e) {
                eprintln!("{plain}");
                return Exit::Error.into();
            }
            let code = if e.use_stderr() {
                Exit::Error
            } else {
                Exit::Ok
            };
            let _ = e.print();
            return code.into();
        }
    };
    let Some(command) = cli.command else {
        if cli.version.version {
            return install::print_version(&cli.version).into();
        }
        // the help, where to start first (clap's error would list every command on one line)
        eprint!("{}", Cli::command().render_help());
        return Exit::Error.into();
    };
    iocap_console::interrupt::install();
    iocap_console::set_place(ranks::rank(), ranks::size());
    iocap_report::set_width(iocap_report::terminal::columns());
    exit_code(dispatch(command))
}

/// The command's own function.
fn dispatch(command: Command) -> anyhow::Result<Exit> {
    match command {
        Command::Run(args) => run::run(*args),
        Command::Sqlio { args } => sqlio::run(&args),
        Command::SqlioBatch(args) => sqlio::run_batch(args),
        Command::Diskspd { args } => diskspd::run(&args),
        Command::History(a) => history::history(a),
        Command::Show(a) => history::show(a),
        Command::Compare(a) => compare::compare(a),
        Command::Baseline(a) => {
            ranks::one_host_only("baseline").and_then(|_| baseline::baseline(a))
        }
        Command::Export(a) => export::export(a),
        Command::Report(a) => export::report(a),
        Command::Delete(a) => ranks::one_host_only("delete").and_then(|_| history::delete(a)),
        Command::Prune(a) => ranks::one_host_only("prune").and_then(|_| history::prune(a)),
        Command::StoreFill(a) => fill::fill(a),
        Command::Suite(a) => suite::suite(a),
        Command::Monitor(a) => ranks::one_host_only("monitor").and_then(|_| monitor::monitor(a)),
        Command::Fsync(a) => ranks::one_host_only("fsync").and_then(|_| fsync::fsync(*a)),
        Command::Audit(a) => ranks::one_host_only("audit").and_then(|_| audit::audit(a)),
        Command::Preflight(a) => preflight::preflight(*a),
        Command::Saturate(a) => saturate::saturate(*a),
        Command::Scaleup(a) => scaleup::scaleup(*a),
        Command::Cachescan(a) => cachescan::cachescan(*a),
        Command::Verify(a) => ranks::one_host_only("verify").and_then(|_| verify::verify(*a)),
        Command::Cost(a) => ranks::one_host_only("cost").and_then(|_| cost::cost(*a)),
        Command::Capture(a) => ranks::one_host_only("capture").and_then(|_| capture::capture(*a)),
        Command::Characterise(a) => capture::characterise(*a),
        Command::Convert(a) => trace::convert(a),
        Command::Replay(a) => ranks::one_host_only("replay").and_then(|_| replay::replay(*a)),
        Command::Completions(a) => install::completions(a),
        Command::Man(a) => install::man(a),
    }
}

/// The process's exit code for what the command returned; an error is printed, prefixed with
/// the rank that met it under MPI.
fn exit_code(res: anyhow::Result<Exit>) -> ExitCode {
    match res {
        Ok(code) => code.into(),
        Err(e) => {
            if let Some(prefix) = ranks::error_prefix(&e) {
                eprintln!(
                    "{}",
                    iocap_report::fmt::error_text(e.as_ref()).replacen(
                        "iocap: ",
                        &format!("iocap: {prefix}"),
                        1
                    )
                );
            }
            // what failed after Ctrl-C or SIGTERM (the fill of a test file) failed for it
            if iocap_console::interrupt::interrupted() {
                return Exit::Interrupted.into();
            }
            Exit::Error.into()
        }
    }
}

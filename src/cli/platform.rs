//! What differs at the command line on Windows: the commands that exist only on Linux (they
//! parse whatever follows them and say so, with exit 2), and what `--version --verbose` says of
//! the engines (Ctrl-C through the console's handler is `iocap_console::interrupt`'s).

/// The refusal of a Linux-only command on this system.
#[cfg(not(target_os = "linux"))]
pub fn linux_only(command: &str, why: &str) -> anyhow::Result<super::Exit> {
    anyhow::bail!(
        "`iocap {command}` exists only on Linux: {why}. On Windows, iocap runs run, sqlio, \
         sqlio-batch, diskspd, preflight, saturate, scaleup, cachescan, verify, suites and the \
         store's commands (docs/windows.md)"
    )
}

/// A stand-in for a Linux-only command's module: its `Args` take anything, its function says
/// the command is Linux's.
#[cfg(not(target_os = "linux"))]
macro_rules! linux_only_command {
    ($module:ident, $args:ident, $func:ident, $why:literal) => {
        pub mod $module {
            /// Linux only: everything after the command is accepted and ignored
            #[derive(clap::Args, Debug)]
            #[command(disable_help_flag = true)]
            pub struct $args {
                #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
                rest: Vec<String>,
            }

            pub fn $func(_: $args) -> anyhow::Result<crate::cli::Exit> {
                super::linux_only(stringify!($module), $why)
            }
        }
    };
}

#[cfg(not(target_os = "linux"))]
linux_only_command!(
    monitor,
    MonitorArgs,
    monitor,
    "it samples Linux's /proc/diskstats (on Windows, perfmon's PhysicalDisk counters)"
);
#[cfg(not(target_os = "linux"))]
linux_only_command!(
    cost,
    CostArgs,
    cost,
    "its cache modes use posix_fadvise and mincore, and its model is fitted on /proc/stat"
);
#[cfg(not(target_os = "linux"))]
linux_only_command!(
    fsync,
    FsyncArgs,
    fsync,
    "its methods are Linux's flags and calls (O_DSYNC, fdatasync, RWF_DSYNC)"
);

/// What `--version --verbose` says of the asynchronous engine.
#[cfg(not(target_os = "linux"))]
pub fn engines() -> String {
    "iocp (I/O completion ports) and sync; io_uring is Linux's".into()
}

//! What packagers and users installing iocap need: `--version` (with `--verbose`, the build's
//! facts and this kernel's io_uring support), shell completions and man pages, all generated
//! from the same clap definition as the parser so they cannot drift from it.

use std::path::PathBuf;

use anyhow::Result;
use clap::{ArgAction, Args, CommandFactory, ValueEnum};
use iocap_console::man;

use super::{print_stdout, Cli, Exit};

/// `0.1.0 (1f56bd8 2026-11-25)`: the commit and build date come from build.rs.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("IOCAP_GIT_COMMIT"),
    " ",
    env!("IOCAP_BUILD_DATE"),
    ")"
);

/// `--version` handled by iocap instead of clap, so that `--version --verbose` works (clap's own
/// flag prints and exits before it sees `--verbose`).
#[derive(Args, Debug)]
pub struct VersionFlags {
    /// Print the version, commit and build date
    #[arg(short = 'V', long = "version", action = ArgAction::SetTrue)]
    pub version: bool,
    /// With --version: features, target, rustc and io_uring support
    #[arg(long, requires = "version")]
    pub verbose: bool,
}

pub fn print_version(flags: &VersionFlags) -> Exit {
    let mut s = format!("iocap {VERSION}\n");
    if flags.verbose {
        s += &format!("features: {}\n", env!("IOCAP_FEATURES"));
        s += &format!("target:   {}\n", env!("IOCAP_TARGET"));
        s += &format!("rustc:    {}\n", env!("IOCAP_RUSTC"));
        #[cfg(target_os = "linux")]
        {
            let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease");
            let kernel = kernel.as_deref().map(str::trim).unwrap_or("unknown");
            s += &format!("kernel:   {kernel}\n");
            s += &format!("io_uring: {}\n", iocap_engine::backend::io_uring_support());
        }
        #[cfg(not(target_os = "linux"))]
        {
            s += &format!("os:       {}\n", iocap_platform::host::host_info().kernel);
            s += &format!("engines:  {}\n", super::platform::engines());
        }
    }
    print_stdout(&s);
    Exit::Ok
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete in
    pub shell: Shell,
}

pub fn completions(a: CompletionsArgs) -> Result<Exit> {
    use clap_complete::Shell as S;
    let shell = match a.shell {
        Shell::Bash => S::Bash,
        Shell::Zsh => S::Zsh,
        Shell::Fish => S::Fish,
        Shell::Powershell => S::PowerShell,
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "iocap", &mut out);
    print_stdout(&String::from_utf8_lossy(&out));
    Ok(Exit::Ok)
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// A subcommand's page instead of iocap(1): `run` gives iocap-run(1), `suite run`
    /// iocap-suite-run(1)
    #[arg(value_name = "SUBCOMMAND", conflicts_with = "dir")]
    pub subcommand: Vec<String>,
    /// Write iocap.1 and a page per subcommand into DIR, which must be new or empty
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn man(a: ManArgs) -> Result<Exit> {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let src = man::Source {
        version: env!("CARGO_PKG_VERSION"),
        date: env!("IOCAP_BUILD_DATE"),
    };
    let out = match a.dir {
        Some(dir) => man::write_pages(&root, &dir, src)?,
        None => man::render(man::find(&root, &a.subcommand)?, src)?,
    };
    print_stdout(&out);
    Ok(Exit::Ok)
}

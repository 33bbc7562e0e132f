//! What packagers and users installing iocap need: `--version` (with `--verbose`, the build's
//! facts and this kernel's io_uring support), shell completions and man pages, all generated
//! from the same clap definition as the parser so they cannot drift from it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{ArgAction, Args, CommandFactory, ValueEnum};

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
            s += &format!("io_uring: {}\n", iocap_engine::host::io_uring_support());
        }
        #[cfg(not(target_os = "linux"))]
        {
            s += &format!("os:       {}\n", iocap_engine::host::host_info().kernel);
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
    if let Some(dir) = a.dir {
        return write_pages(&root, &dir);
    }
    let mut cmd = &root;
    for (i, name) in a.subcommand.iter().enumerate() {
        cmd = visible(cmd)
            .find(|c| c.get_name() == name)
            .with_context(|| {
                let path = a.subcommand[..=i].join(" ");
                format!("no subcommand `{path}`; `iocap --help` lists them")
            })?;
    }
    print_stdout(&String::from_utf8_lossy(&render(cmd)?));
    Ok(Exit::Ok)
}

fn visible(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands().filter(|c| !c.is_hide_set())
}

/// The page of `cmd`, titled by its display name (`iocap-suite-run`).
fn render(cmd: &clap::Command) -> Result<Vec<u8>> {
    let name = cmd.get_display_name().unwrap_or(cmd.get_name());
    let page = clap_mangen::Man::new(cmd.clone())
        .title(name.to_uppercase())
        .date(env!("IOCAP_BUILD_DATE"))
        .source(format!("iocap {}", env!("CARGO_PKG_VERSION")))
        .manual("iocap manual");
    let mut out = Vec::new();
    page.render(&mut out).context("rendering a man page")?;
    // the title line first, as in every man page (roff puts a string definition before it)
    let text = String::from_utf8_lossy(&out);
    let (th, rest): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with(".TH "));
    Ok((th.into_iter().chain(rest).collect::<Vec<_>>().join("\n") + "\n").into_bytes())
}

/// Every visible command, depth first: iocap, iocap-run, ..., iocap-suite, iocap-suite-list.
fn all_pages<'a>(cmd: &'a clap::Command, out: &mut Vec<&'a clap::Command>) {
    out.push(cmd);
    for sub in visible(cmd) {
        all_pages(sub, out);
    }
}

fn write_pages(root: &clap::Command, dir: &Path) -> Result<Exit> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(
                    "{} is not empty; `iocap man --dir` writes into a new or empty directory",
                    dir.display()
                );
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?,
        Err(e) => bail!("cannot use {} as a directory: {e}", dir.display()),
    }
    let mut pages = Vec::new();
    all_pages(root, &mut pages);
    let mut said = String::new();
    for cmd in pages {
        let name = cmd.get_display_name().unwrap_or(cmd.get_name());
        let path = dir.join(format!("{name}.1"));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        f.write_all(&render(cmd)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        said += &format!("wrote {}\n", path.display());
    }
    print_stdout(&said);
    Ok(Exit::Ok)
}

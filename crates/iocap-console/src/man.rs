//! Man pages rendered from the clap definition the parser uses, so they cannot drift from it:
//! one page a visible command (`iocap`, `iocap-run`, `iocap-suite-run`, ...), printed or
//! written into a new directory.

use std::path::Path;

use anyhow::{Context, Result};

use crate::files::Existing;

/// What a page says of where it comes from: the version (`0.1.0`) and the build date.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub version: &'a str,
    pub date: &'a str,
}

/// The commands under `cmd` that `--help` lists.
fn visible(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands().filter(|c| !c.is_hide_set())
}

/// The command named by `path` under `root` (`["suite", "run"]`), or an error naming the part
/// that does not exist.
pub fn find<'a>(root: &'a clap::Command, path: &[String]) -> Result<&'a clap::Command> {
    let mut cmd = root;
    for (i, name) in path.iter().enumerate() {
        cmd = visible(cmd)
            .find(|c| c.get_name() == name)
            .with_context(|| {
                let path = path[..=i].join(" ");
                format!("no subcommand `{path}`; `iocap --help` lists them")
            })?;
    }
    Ok(cmd)
}

/// The page of `cmd` in roff, titled by its display name (`iocap-suite-run`).
pub fn render(cmd: &clap::Command, src: Source) -> Result<String> {
    let name = cmd.get_display_name().unwrap_or(cmd.get_name());
    let page = clap_mangen::Man::new(cmd.clone())
        .title(name.to_uppercase())
        .date(src.date)
        .source(format!("iocap {}", src.version))
        .manual("iocap manual");
    let mut out = Vec::new();
    page.render(&mut out).context("rendering a man page")?;
    // the title line first, as in every man page (roff puts a string definition before it)
    let text = String::from_utf8_lossy(&out);
    let (th, rest): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with(".TH "));
    Ok(th.into_iter().chain(rest).collect::<Vec<_>>().join("\n") + "\n")
}

/// Every visible command, depth first: iocap, iocap-run, ..., iocap-suite, iocap-suite-list.
fn all_pages<'a>(cmd: &'a clap::Command, out: &mut Vec<&'a clap::Command>) {
    out.push(cmd);
    for sub in visible(cmd) {
        all_pages(sub, out);
    }
}

/// Writes a page for `root` and every visible command under it into `dir`, which must be new
/// or empty; what it wrote, a line a file.
pub fn write_pages(root: &clap::Command, dir: &Path, src: Source) -> Result<String> {
    crate::files::new_or_empty_dir(dir, "`iocap man --dir`")?;
    let mut pages = Vec::new();
    all_pages(root, &mut pages);
    let mut said = String::new();
    for cmd in pages {
        let name = cmd.get_display_name().unwrap_or(cmd.get_name());
        let path = dir.join(format!("{name}.1"));
        crate::files::write_new_file(&path, &render(cmd, src)?, Existing::Refuse)?;
        said += &format!("wrote {}\n", path.display());
    }
    Ok(said)
}

//! A command's claim on the paths it touches: made once, from what it reads and what it writes,
//! before anything is written (issue 35). It refuses:
//! - an output that is one of the command's inputs, however it is named: the same path, a
//!   symbolic link to it, a hard link of it, `./x` for `x` (what exists is compared by device
//!   and inode, what does not yet by its canonical path). `characterise T --as-profile T
//!   --force` wrote the profile over the trace it read, `convert sda -o sda.blktrace.1 --force`
//!   one of blktrace's files found from the base name, `replay T T --allow-overwrite` the trace;
//! - two outputs that are one file (`capture -o s.iotrace --as-profile s.iotrace --force` wrote
//!   the profile over the trace just recorded);
//! - up front, an output file that [`crate::files`] would refuse when it came to open it: a
//!   symbolic link (dangling or not), anything but a regular file, an existing file without
//!   `--force`. A long capture or a long read then never ends in a refusal.
//!
//! Outputs are then opened only through the claim ([`Claim::create`], [`Claim::write`]), which
//! checks the path once more against the inputs (capture's default trace name is made later)
//! and opens it as `files` does: `O_NOFOLLOW`, never through a link, in one wording. A target
//! the engine writes under its own rules (replay's) is claimed for the overlap only: the engine
//! opens it. The result store (`--db`) is checked by [`store`]: a dangling link there is
//! refused, as an output's is, instead of a store being made where it points.
//!
//! A test's target, verify's file and fsync's are claimed by the engine's own
//! `iocap_engine::Claim` (the lock, and the id every later open must find again); this claim
//! keeps outputs off them as off any input.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::files::{self, Existing};

/// What a claimed path is to the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    /// Read.
    Input,
    /// A file written for the user through [`Claim::create`]: a trace, a profile, an export.
    Output,
    /// A test target, opened and written by the engine under its own rules.
    Target,
}

/// One path of the claim: how the user named it and what it is on disk.
#[derive(Debug, Clone)]
struct Named {
    /// The flag or argument that named it (`--as-profile`, `-o`, `TARGET`, `the trace`).
    role: String,
    path: PathBuf,
    used: Use,
    /// Device and inode of what is there (through links), if anything is.
    id: Option<(u64, u64)>,
    /// The path with every link and `..` resolved (its directory's, where it does not exist).
    canon: Option<PathBuf>,
}

impl Named {
    fn new(role: &str, path: &Path, used: Use) -> Self {
        Self {
            role: role.to_string(),
            path: path.to_path_buf(),
            used,
            id: identity(path),
            canon: canonical(path),
        }
    }

    /// Whether `self` and `other` are one file: the same device and inode, or, where either
    /// does not exist yet, the same canonical path.
    fn same(&self, other: &Named) -> bool {
        match (self.id, other.id) {
            (Some(a), Some(b)) => a == b,
            _ => self.canon.is_some() && self.canon == other.canon,
        }
    }

    /// `-o x.csv` or `the trace in.log`, as an error names it.
    fn shown(&self) -> String {
        format!("{} {}", self.role, self.path.display())
    }
}

/// What a command reads and writes, checked together; outputs are opened only through it.
#[derive(Debug, Clone)]
pub struct Claim {
    paths: Vec<Named>,
    existing: Existing,
}

impl Claim {
    /// A claim whose output files are replaced when they exist as `existing` says (`--force`).
    pub fn new(existing: Existing) -> Self {
        Self {
            paths: Vec::new(),
            existing,
        }
    }

    /// The files the command reads, named by `role` (`the trace`).
    pub fn reads<P: AsRef<Path>>(mut self, role: &str, paths: &[P]) -> Self {
        for p in paths {
            self.paths.push(Named::new(role, p.as_ref(), Use::Input));
        }
        self
    }

    /// An output file the command writes for the user, named by `role` (`-o`); `None` when
    /// the flag was not given.
    pub fn writes(mut self, role: &str, path: Option<&Path>) -> Self {
        if let Some(p) = path {
            self.paths.push(Named::new(role, p, Use::Output));
        }
        self
    }

    /// A target the engine writes under its own rules (`TARGET`).
    pub fn target(mut self, role: &str, path: &Path) -> Self {
        self.paths.push(Named::new(role, path, Use::Target));
        self
    }

    /// Checks the claim: no output is an input or another output, and every output file can be
    /// written as `files` would write it. Nothing is opened or written.
    pub fn check(self) -> Result<Self> {
        for (k, out) in self.paths.iter().enumerate() {
            if out.used == Use::Input {
                continue;
            }
            for (j, other) in self.paths.iter().enumerate() {
                if j == k || !out.same(other) {
                    continue;
                }
                if other.used == Use::Input {
                    bail!(among_inputs(out, other));
                }
                if j < k {
                    bail!(
                        "{} is the same file as {}; each output of a command is a file of its \
                         own (give another name)",
                        out.shown(),
                        other.shown()
                    );
                }
            }
            if out.used == Use::Output {
                files::check_output(&out.path, self.existing)?;
            }
        }
        Ok(self)
    }

    /// Opens the output `p` (claimed, or made by the command since, as capture's default trace
    /// name is): never one of the inputs, never through a link, a regular file replaced only
    /// as the claim's `existing` says.
    pub fn create(&self, p: &Path) -> Result<File> {
        let out = self
            .paths
            .iter()
            .find(|n| n.used == Use::Output && n.path == p)
            .map_or_else(|| Named::new("the output", p, Use::Output), Clone::clone);
        if let Some(input) = self
            .paths
            .iter()
            .find(|n| n.used == Use::Input && out.same(n))
        {
            bail!(among_inputs(&out, input));
        }
        files::create_new_file(p, self.existing)
    }

    /// Writes `text` to the output `p`, opened as [`Self::create`] opens it.
    pub fn write(&self, p: &Path, text: &str) -> Result<()> {
        use std::io::Write;
        let mut f = self.create(p)?;
        f.write_all(text.as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))
    }
}

/// The refusal of an output that is one of the inputs, naming both.
fn among_inputs(out: &Named, input: &Named) -> String {
    let how = if input.path == out.path {
        String::new()
    } else {
        ", the same file by another name".into()
    };
    format!(
        "{} is {} being read ({}{how}); iocap never writes over what a command reads, not \
         even with --force or --allow-overwrite (give another name)",
        out.shown(),
        input.role,
        input.path.display()
    )
}

/// The result store's file (`--db`, `IOCAP_DB`, the default): a symbolic link that points
/// nowhere is refused, since SQLite would create the store where it points, somewhere the user
/// did not name; a link to an existing store is followed (a store kept elsewhere).
pub fn store(p: &Path) -> Result<()> {
    files::refuse_dangling(p)
}

/// Device and inode of what `p` names, through links; `None` where nothing is (or, off Unix,
/// always: the canonical path decides there).
fn identity(p: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        None
    }
}

/// `p` with its links and `..` resolved; where it does not exist, its directory's resolved and
/// its name after it.
fn canonical(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = std::fs::canonicalize(p) {
        return Some(c);
    }
    let name = p.file_name()?;
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::canonicalize(dir).ok().map(|d| d.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(d: &Path, input: &str, out: &str, force: bool) -> Result<Claim> {
        Claim::new(Existing::replace_if(force))
            .reads("the trace", &[d.join(input)])
            .writes("-o", Some(&d.join(out)))
            .check()
    }

    #[test]
    fn an_output_that_is_an_input_by_any_name_is_refused_naming_both() {
        let d = tempfile::tempdir().unwrap();
        let d = d.path();
        std::fs::write(d.join("in.log"), "the trace").unwrap();
        std::fs::hard_link(d.join("in.log"), d.join("hard.log")).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        for out in ["in.log", "hard.log", "sub/../in.log"] {
            let e = claim(d, "in.log", out, true).unwrap_err().to_string();
            assert!(
                e.contains(&format!("-o {}", d.join(out).display()))
                    && e.contains("is the trace being read")
                    && e.contains(&d.join("in.log").display().to_string()),
                "{out}: {e}"
            );
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.join("in.log"), d.join("link.log")).unwrap();
            let e = claim(d, "in.log", "link.log", true).unwrap_err();
            assert!(
                e.to_string().contains("the same file by another name"),
                "{e}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(d.join("in.log")).unwrap(),
            "the trace"
        );
        // a new name, and an existing one with --force, are claimed
        let c = claim(d, "in.log", "new.csv", false).unwrap();
        c.write(&d.join("new.csv"), "ours").unwrap();
        claim(d, "in.log", "new.csv", true).unwrap();
        let e = claim(d, "in.log", "new.csv", false).unwrap_err();
        assert!(e.to_string().contains("already exists"), "{e}");
    }

    #[test]
    fn two_outputs_that_are_one_file_are_refused_before_either_exists() {
        let d = tempfile::tempdir().unwrap();
        let d = d.path();
        let e = Claim::new(Existing::Replace)
            .writes("-o", Some(&d.join("s.iotrace")))
            .writes("--as-profile", Some(&d.join("./s.iotrace")))
            .check()
            .unwrap_err();
        assert!(
            e.to_string().contains("--as-profile")
                && e.to_string().contains("is the same file as -o"),
            "{e}"
        );
        assert!(!d.join("s.iotrace").exists());
    }

    #[test]
    fn a_path_made_later_is_checked_when_it_is_opened() {
        let d = tempfile::tempdir().unwrap();
        let input = d.path().join("in.log");
        std::fs::write(&input, "the trace").unwrap();
        let c = Claim::new(Existing::Replace)
            .reads("the trace", &[&input])
            .check()
            .unwrap();
        let e = c.create(&input).unwrap_err();
        assert!(e.to_string().contains("the output"), "{e}");
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "the trace");
    }

    #[cfg(unix)]
    #[test]
    fn a_store_behind_a_dangling_link_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let link = d.path().join("r.db");
        std::os::unix::fs::symlink(d.path().join("elsewhere.db"), &link).unwrap();
        let e = store(&link).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        std::fs::write(d.path().join("elsewhere.db"), "").unwrap();
        store(&link).unwrap();
        store(&d.path().join("new.db")).unwrap();
    }
}

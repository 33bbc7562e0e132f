//! A command's claim: the one way iocap writes (issue 35). It covers every path the command
//! touches, by role: what it reads (inputs), the files it writes for the user (outputs: `-o`,
//! `--as-profile`, `--html`, a trace), the targets it tests, fills or rewrites, the result
//! store it saves into (`--db`) and a journal (`verify --journal`). It is made once per
//! command, from its inputs and outputs, before anything is written ([`Claim::check`]), and it
//! refuses:
//! - a written path that is one of the command's inputs, however it is named: the same path, a
//!   symbolic link to it, a hard link of it, `./x` for `x` (what exists is compared by device
//!   and inode, what does not yet by its canonical path). `characterise T --as-profile T
//!   --force` wrote the profile over the trace it read, `convert sda -o sda.blktrace.1 --force`
//!   one of blktrace's files found from the base name, `replay T T --allow-overwrite` the trace;
//! - two written paths that are one file: two outputs (`capture -o s.iotrace --as-profile
//!   s.iotrace --force` wrote the profile over the trace just recorded), or a target and the
//!   store, an output or the journal (`run X --db X` tested the store, `run X --html X`);
//!   several targets may name one file (two workloads on it share its hold);
//! - up front, an output file that its open would refuse ([`output`]): a symbolic link
//!   (dangling or not), anything but a regular file, an existing file without `--force`; and a
//!   store behind a symbolic link that points nowhere, where SQLite would create it. A long
//!   capture or a long test then never ends in a refusal.
//!
//! What it hands out is the only writable handle on each path:
//! - an output is opened only through the claim ([`Claim::create`], [`Claim::write`]), which
//!   checks the path once more against the inputs (capture's default trace name is made later)
//!   and opens it `O_NOFOLLOW`, never through a link, in one wording ([`output::open`]);
//! - a target is held ([`Held`]): the engine, verify, fsync, cost and replay take a hold on each
//!   target from the descriptor the safety checks were made on, which takes the lock
//!   (`lock`) and keeps the identity every later open must find again;
//! - the store is opened by the store's own code, once the claim has kept it off every other
//!   path; a journal by verify's, under its rules (a new file).
//!
//! Errors are [`ClaimError`]s, in the words users see; the engine and the console carry them in
//! their own error types unchanged.

mod held;
mod lock;
pub mod output;

use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

pub use held::{changed, Held};
pub use output::Existing;

/// Why a claim refused a path, or could not be made.
#[derive(Debug)]
pub enum ClaimError {
    /// Refused to keep what the user has, or what the command reads, from being written.
    Refused(String),
    /// The claim cannot be made on this path (it could not be stat'ed or locked).
    Invalid(String),
    /// An I/O error, with what was being done when it came.
    Io { context: String, source: io::Error },
}

impl ClaimError {
    /// For `map_err`: the I/O error met while doing `context`.
    pub fn io(context: impl Into<String>) -> impl FnOnce(io::Error) -> Self {
        let context = context.into();
        move |source| Self::Io { context, source }
    }
}

impl fmt::Display for ClaimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused(s) | Self::Invalid(s) => f.write_str(s),
            Self::Io { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl std::error::Error for ClaimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What a claimed path is to the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    /// Read.
    Input,
    /// A file written for the user through [`Claim::create`]: a trace, a profile, an export;
    /// an existing one replaced as it says, `None` where no flag lets it be (`--html`).
    Output(Option<Existing>),
    /// A test target, opened and written by the engine under its own rules ([`Held`]).
    Target,
    /// The result store, opened and written by the store.
    Store,
    /// A journal, a new file written by its command under its own rules.
    Journal,
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

/// Every path a command touches, by role, checked together; outputs are opened only through
/// it (see the module's comment).
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

    fn with(mut self, role: &str, path: Option<&Path>, used: Use) -> Self {
        if let Some(p) = path {
            self.paths.push(Named::new(role, p, used));
        }
        self
    }

    /// The files the command reads, named by `role` (`the trace`).
    pub fn reads<P: AsRef<Path>>(self, role: &str, paths: &[P]) -> Self {
        paths
            .iter()
            .fold(self, |c, p| c.with(role, Some(p.as_ref()), Use::Input))
    }

    /// An output file the command writes for the user, named by `role` (`-o`), replaced when
    /// it exists as the claim's `existing` says; `None` when the flag was not given.
    pub fn writes(self, role: &str, path: Option<&Path>) -> Self {
        let existing = self.existing;
        self.with(role, path, Use::Output(Some(existing)))
    }

    /// An output file that is always a new one (`--html`): no flag lets it replace a file.
    pub fn writes_new(self, role: &str, path: Option<&Path>) -> Self {
        self.with(role, path, Use::Output(None))
    }

    /// The targets the engine tests or writes under its own rules (`TARGET`), each the file
    /// the engine opens (a directory's test file, not the directory).
    pub fn targets<P: AsRef<Path>>(self, role: &str, paths: &[P]) -> Self {
        paths
            .iter()
            .fold(self, |c, p| c.with(role, Some(p.as_ref()), Use::Target))
    }

    /// The result store's file the command saves into, where it is a file.
    pub fn store(self, path: Option<&Path>) -> Self {
        self.with("the result store", path, Use::Store)
    }

    /// A journal the command writes as a new file under its own rules (`--journal`).
    pub fn journal(self, role: &str, path: Option<&Path>) -> Self {
        self.with(role, path, Use::Journal)
    }

    /// Checks the claim: nothing written is an input or another written path, and every
    /// output file can be written as its open would write it. Nothing is opened or written.
    pub fn check(self) -> Result<Self, ClaimError> {
        for (k, out) in self.paths.iter().enumerate() {
            if out.used == Use::Input {
                continue;
            }
            for (j, other) in self.paths.iter().enumerate() {
                if j == k || !out.same(other) {
                    continue;
                }
                if other.used == Use::Input {
                    return Err(ClaimError::Refused(among_inputs(out, other)));
                }
                // each pair of written paths once; targets may share a file
                if j < k && !(out.used == Use::Target && other.used == Use::Target) {
                    return Err(ClaimError::Refused(written_twice(other, out)));
                }
            }
        }
        // then what is on disk, once no two roles are one file
        for out in &self.paths {
            match out.used {
                Use::Output(Some(existing)) => output::check(&out.path, existing)?,
                Use::Output(None) => output::refuse_existing(&out.path)?,
                Use::Store => output::refuse_dangling(&out.path)?,
                _ => {}
            }
        }
        Ok(self)
    }

    /// Opens the output `p` (claimed, or made by the command since, as capture's default trace
    /// name is): never one of the inputs, never through a link, a regular file replaced only
    /// as the claim says.
    pub fn create(&self, p: &Path) -> Result<File, ClaimError> {
        let existing = self.existing;
        let out = self
            .paths
            .iter()
            .find(|n| matches!(n.used, Use::Output(_)) && n.path == p)
            .map_or_else(
                || Named::new("the output", p, Use::Output(Some(existing))),
                Clone::clone,
            );
        if let Some(input) = self
            .paths
            .iter()
            .find(|n| n.used == Use::Input && out.same(n))
        {
            return Err(ClaimError::Refused(among_inputs(&out, input)));
        }
        let existing = match out.used {
            Use::Output(Some(e)) => e,
            _ => Existing::Refuse,
        };
        output::open(p, existing)
    }

    /// Writes `text` to the output `p`, opened as [`Self::create`] opens it.
    pub fn write(&self, p: &Path, text: &str) -> Result<(), ClaimError> {
        use std::io::Write;
        let mut f = self.create(p)?;
        f.write_all(text.as_bytes())
            .map_err(ClaimError::io(format!("cannot write {}", p.display())))
    }
}

/// The refusal of a written path that is one of the inputs, naming both.
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

/// The refusal of two written paths that are one file (`first` claimed before `second`),
/// naming both: a target is named first.
fn written_twice(first: &Named, second: &Named) -> String {
    let (t, o) = match (first.used, second.used) {
        (_, Use::Target) => (second, first),
        (Use::Target, _) => (first, second),
        _ => {
            return format!(
                "{} is the same file as {}; each output of a command is a file of its own \
                 (give another name)",
                second.shown(),
                first.shown()
            )
        }
    };
    format!(
        "{} is the same file as {}; iocap never tests a file it writes results, reports or a \
         journal to (give another name)",
        t.shown(),
        o.shown()
    )
}

/// Which file `p` names, through links (device and inode; on Windows the volume's serial
/// number and the file index, so a hard link is found there too); `None` where nothing is, or
/// what is there cannot be opened to ask (the canonical path decides then).
fn identity(p: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let f = crate::sys::target::open_read(p).ok()?;
        crate::sys::target::file_id(&f, iocap_model::TargetKind::File).ok()
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

    fn claim(d: &Path, input: &str, out: &str, force: bool) -> Result<Claim, ClaimError> {
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

    #[test]
    fn a_target_that_is_the_store_an_output_or_the_journal_is_refused_naming_both() {
        let d = tempfile::tempdir().unwrap();
        let d = d.path();
        std::fs::write(d.join("old.dat"), "the user's").unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        for (target, other) in [
            ("t.dat", "t.dat"),
            ("old.dat", "./old.dat"),
            ("sub/../t.dat", "t.dat"),
        ] {
            let target = d.join(target);
            let other = d.join(other);
            let claims = [
                (
                    "the result store",
                    Claim::new(Existing::Refuse)
                        .targets("TARGET", &[&target])
                        .store(Some(&other)),
                ),
                (
                    "--html",
                    Claim::new(Existing::Refuse)
                        .writes_new("--html", Some(&other))
                        .targets("TARGET", &[&target]),
                ),
                (
                    "--journal",
                    Claim::new(Existing::Refuse)
                        .targets("TARGET", &[&target])
                        .journal("--journal", Some(&other)),
                ),
            ];
            for (role, c) in claims {
                let e = c.check().unwrap_err().to_string();
                let want = format!(
                    "TARGET {} is the same file as {role} {}",
                    target.display(),
                    other.display()
                );
                assert!(
                    e.starts_with(&want) && e.contains("never tests a file it writes"),
                    "{e}"
                );
            }
        }
        assert!(!d.join("t.dat").exists());
        assert_eq!(
            std::fs::read_to_string(d.join("old.dat")).unwrap(),
            "the user's"
        );
        // two targets naming one file share it; the store and an output apart from them are
        // claimed
        Claim::new(Existing::Refuse)
            .targets("TARGET", &[d.join("t.dat"), d.join("./t.dat")])
            .store(Some(&d.join("r.db")))
            .writes_new("--html", Some(&d.join("r.html")))
            .check()
            .unwrap();
        // the store is never written over an input either
        let e = Claim::new(Existing::Refuse)
            .reads("the trace", &[d.join("old.dat")])
            .store(Some(&d.join("old.dat")))
            .check()
            .unwrap_err();
        assert!(e.to_string().contains("the result store"), "{e}");
        assert!(e.to_string().contains("is the trace being read"), "{e}");
    }

    #[test]
    fn an_output_that_must_be_new_is_refused_when_it_exists_even_unforced_claims_replace() {
        let d = tempfile::tempdir().unwrap();
        let html = d.path().join("r.html");
        std::fs::write(&html, "mine").unwrap();
        let e = Claim::new(Existing::Replace)
            .writes_new("--html", Some(&html))
            .check()
            .unwrap_err();
        assert!(e.to_string().contains("already exists"), "{e}");
        assert_eq!(std::fs::read_to_string(&html).unwrap(), "mine");
    }

    #[cfg(unix)]
    #[test]
    fn a_store_behind_a_dangling_link_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let link = d.path().join("r.db");
        std::os::unix::fs::symlink(d.path().join("elsewhere.db"), &link).unwrap();
        let e = Claim::new(Existing::Refuse)
            .store(Some(&link))
            .check()
            .unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        std::fs::write(d.path().join("elsewhere.db"), "").unwrap();
        for p in [link, d.path().join("new.db")] {
            Claim::new(Existing::Refuse)
                .store(Some(&p))
                .check()
                .unwrap();
        }
    }
}

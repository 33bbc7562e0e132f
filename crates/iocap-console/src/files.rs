//! The files iocap writes for the user (an HTML report, an export, man pages): always new
//! files, never over one the user has unless they said `--force`. Every `-o`, `--output` and
//! `--html` file, and every trace, goes through [`create_new_file`] ([`write_new_file`] for a
//! text written at once; a command that reads files as well opens its outputs through its
//! [`crate::claim::Claim`], which refuses an output that is one of its inputs, then here), so
//! this is where the rules are kept:
//! - a symbolic link is never written through, not even with `--force` (docs/safety.md, rule 3):
//!   `-o LINK --force` would replace the file the link points to, somewhere the user did not
//!   name. It is refused naming the link, before opening and again by `O_NOFOLLOW` at the open,
//!   so a link planted in between is caught too;
//! - `--force` replaces a regular file only: a FIFO, a device or a directory under that name
//!   is refused by its kind (a FIFO would also block the open until a reader came).

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// Refuses a path that already exists: iocap never writes over a file the user has. A
/// symbolic link counts as existing, even when it points nowhere.
pub fn refuse_existing(p: &Path) -> Result<()> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Err(symlink(p)),
        Ok(_) => bail!(
            "{} already exists; iocap does not overwrite files (remove it, or give another name)",
            p.display()
        ),
        Err(_) => Ok(()),
    }
}

/// The refusal of a symbolic link as an output file.
fn symlink(p: &Path) -> anyhow::Error {
    let to = std::fs::read_link(p)
        .map(|t| format!(" (to {})", t.display()))
        .unwrap_or_default();
    anyhow::anyhow!(
        "{} is a symbolic link{to}; iocap never writes through a symbolic link, --force or \
         not (give the real path, or remove the link)",
        p.display()
    )
}

/// Refuses a symbolic link at `p` that points nowhere: whatever opened `p` to create a file
/// would create it where the link points, somewhere the user did not name. For a path where a
/// link to an existing file is followed (the result store).
pub fn refuse_dangling(p: &Path) -> Result<()> {
    let link = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    if link && std::fs::metadata(p).is_err() {
        let to = std::fs::read_link(p)
            .map(|t| format!(" (to {}, where nothing is)", t.display()))
            .unwrap_or_default();
        bail!(
            "{} is a symbolic link{to}; iocap never creates a file through a symbolic link \
             (give the real path, or remove the link)",
            p.display()
        );
    }
    Ok(())
}

/// What `--force` may not replace at `p`: a symbolic link, or anything but a regular file.
fn refuse_unreplaceable(p: &Path) -> Result<()> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Err(symlink(p)),
        Ok(m) if !m.is_file() => bail!(
            "{} is a {}, not a file; iocap replaces only a regular file, even with --force",
            p.display(),
            iocap_model::file_kind(&m.file_type())
        ),
        _ => Ok(()),
    }
}

/// Whether [`create_new_file`] would open `p` as `existing` says, decided without opening it:
/// a symbolic link, anything but a regular file, and (without `--force`) an existing file are
/// refused in the words the open would use. For a command that checks its outputs before a
/// long read or capture ([`crate::claim::Claim`]); the open checks again.
pub fn check_output(p: &Path, existing: Existing) -> Result<()> {
    refuse_unreplaceable(p)?;
    if existing == Existing::Refuse && std::fs::symlink_metadata(p).is_ok() {
        return Err(already_exists(p));
    }
    Ok(())
}

/// The refusal of an existing file without `--force`.
fn already_exists(p: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "{} already exists; iocap does not overwrite files (remove it, give another name, or \
         add --force)",
        p.display()
    )
}

/// What [`write_new_file`] and [`create_new_file`] do with a regular file already at the path
/// (a symbolic link or anything else is refused either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Refuse it: iocap does not overwrite files.
    Refuse,
    /// Replace it (`--force`).
    Replace,
}

impl Existing {
    /// `Replace` with `--force`, else `Refuse`.
    pub fn replace_if(force: bool) -> Self {
        if force {
            Existing::Replace
        } else {
            Existing::Refuse
        }
    }
}

/// Writes `text` to a new file, or over an existing regular file as `existing` says.
pub fn write_new_file(p: &Path, text: &str, existing: Existing) -> Result<()> {
    let mut f = create_new_file(p, existing)?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", p.display()))
}

/// Opens a new file for writing, or an existing regular file, emptied, as `existing` says.
/// For what iocap writes as it goes (a trace).
pub fn create_new_file(p: &Path, existing: Existing) -> Result<std::fs::File> {
    refuse_unreplaceable(p)?;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true);
    if existing == Existing::Replace {
        opts.create(true).truncate(true);
    } else {
        opts.create_new(true);
    }
    // O_NOFOLLOW: a link planted after the check fails the open (ELOOP) instead of being
    // followed; O_NONBLOCK: a FIFO planted there fails it (ENXIO) instead of blocking it.
    // Neither changes how a regular file is written.
    #[cfg(target_os = "linux")]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut opts,
        libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
    );
    opts.open(p).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            already_exists(p)
        } else if is_symlink_refused(&e) {
            symlink(p)
        } else {
            anyhow::anyhow!("cannot create {}: {e}", p.display())
        }
    })
}

/// Whether the open failed on a symbolic link (O_NOFOLLOW's ELOOP).
fn is_symlink_refused(e: &std::io::Error) -> bool {
    #[cfg(target_os = "linux")]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    // elsewhere the check before the open is the guard
    #[cfg(not(target_os = "linux"))]
    {
        let _ = e;
        false
    }
}

/// Makes `dir` ready to be written into: created when missing, refused when it holds anything.
pub fn new_or_empty_dir(dir: &Path, what: &str) -> Result<()> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(
                    "{} is not empty; {what} writes into a new or empty directory",
                    dir.display()
                );
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
        }
        Err(e) => bail!("cannot use {} as a directory: {e}", dir.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_file_is_kept_unless_forced() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.html");
        std::fs::write(&p, "the user's").unwrap();
        let e = write_new_file(&p, "ours", Existing::Refuse).unwrap_err();
        assert!(e.to_string().contains("already exists"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "the user's");
        assert!(refuse_existing(&p).is_err());
        write_new_file(&p, "ours", Existing::Replace).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "ours");
    }

    #[test]
    fn a_directory_with_anything_in_it_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let new = d.path().join("man");
        new_or_empty_dir(&new, "man --dir").unwrap();
        assert!(new.is_dir());
        std::fs::write(new.join("x"), "").unwrap();
        let e = new_or_empty_dir(&new, "man --dir").unwrap_err();
        assert!(e.to_string().contains("is not empty"), "{e}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_symlink_or_a_fifo_is_never_written_even_with_force() {
        let d = tempfile::tempdir().unwrap();
        let theirs = d.path().join("theirs.txt");
        std::fs::write(&theirs, "the user's").unwrap();
        let link = d.path().join("out.html");
        std::os::unix::fs::symlink(&theirs, &link).unwrap();
        for existing in [Existing::Refuse, Existing::Replace] {
            let e = write_new_file(&link, "ours", existing).unwrap_err();
            assert!(e.to_string().contains("is a symbolic link"), "{e}");
        }
        assert!(refuse_existing(&link).is_err());
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "the user's");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        let fifo = d.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = write_new_file(&fifo, "ours", Existing::Replace).unwrap_err();
        assert!(e.to_string().contains("is a FIFO"), "{e}");
    }
}

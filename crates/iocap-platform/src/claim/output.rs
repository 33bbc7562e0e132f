//! How the claim opens a file written for the user (an HTML report, an export, a trace, a
//! profile, a man page): always a new file, never one the user has unless they said `--force`,
//! and so:
//! - a symbolic link is never written through, not even with `--force` (docs/safety.md, rule 3):
//!   `-o LINK --force` would replace the file the link points to, somewhere the user did not
//!   name. It is refused naming the link, before opening and again at the open (`O_NOFOLLOW`,
//!   [`crate::target::output_flags`]), so a link planted in between is caught too;
//! - `--force` replaces a regular file only: a FIFO, a device or a directory under that name
//!   is refused by its kind (a FIFO would also block the open until a reader came).
//!
//! [`check`] decides what [`open`] would do without opening, for a claim made before a long
//! read or capture; `iocap-console`'s `files` writes through [`open`].

use std::fs::{File, OpenOptions};
use std::path::Path;

use super::ClaimError;

/// What an output's open does with a regular file already at its path (a symbolic link or
/// anything else is refused either way).
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

/// Refuses a path that already exists: for an output no flag lets iocap replace (`--html`). A
/// symbolic link counts as existing, even when it points nowhere.
pub fn refuse_existing(p: &Path) -> Result<(), ClaimError> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Err(symlink(p)),
        Ok(_) => Err(ClaimError::Refused(format!(
            "{} already exists; iocap does not overwrite files (remove it, or give another name)",
            p.display()
        ))),
        Err(_) => Ok(()),
    }
}

/// Refuses a symbolic link at `p` that points nowhere: whatever opened `p` to create a file
/// would create it where the link points, somewhere the user did not name. For a path where a
/// link to an existing file is followed (the result store).
pub fn refuse_dangling(p: &Path) -> Result<(), ClaimError> {
    let link = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    if link && std::fs::metadata(p).is_err() {
        let to = std::fs::read_link(p)
            .map(|t| format!(" (to {}, where nothing is)", t.display()))
            .unwrap_or_default();
        return Err(ClaimError::Refused(format!(
            "{} is a symbolic link{to}; iocap never creates a file through a symbolic link \
             (give the real path, or remove the link)",
            p.display()
        )));
    }
    Ok(())
}

/// Whether [`open`] would open `p` as `existing` says, decided without opening it: a symbolic
/// link, anything but a regular file, and (without `--force`) an existing file are refused in
/// the words the open would use. The open checks again.
pub fn check(p: &Path, existing: Existing) -> Result<(), ClaimError> {
    refuse_unreplaceable(p)?;
    if existing == Existing::Refuse && std::fs::symlink_metadata(p).is_ok() {
        return Err(already_exists(p));
    }
    Ok(())
}

/// Opens a new file for writing, or an existing regular file, emptied, as `existing` says.
pub fn open(p: &Path, existing: Existing) -> Result<File, ClaimError> {
    refuse_unreplaceable(p)?;
    let mut opts = OpenOptions::new();
    opts.write(true);
    if existing == Existing::Replace {
        opts.create(true).truncate(true);
    } else {
        opts.create_new(true);
    }
    crate::target::output_flags(&mut opts).open(p).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            already_exists(p)
        } else if crate::target::is_link_refused(&e) {
            symlink(p)
        } else {
            ClaimError::io(format!("cannot create {}", p.display()))(e)
        }
    })
}

/// What `--force` may not replace at `p`: a symbolic link, or anything but a regular file.
fn refuse_unreplaceable(p: &Path) -> Result<(), ClaimError> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Err(symlink(p)),
        Ok(m) if !m.is_file() => Err(ClaimError::Refused(format!(
            "{} is a {}, not a file; iocap replaces only a regular file, even with --force",
            p.display(),
            iocap_model::file_kind(&m.file_type())
        ))),
        _ => Ok(()),
    }
}

/// The refusal of a symbolic link as an output file.
fn symlink(p: &Path) -> ClaimError {
    let to = std::fs::read_link(p)
        .map(|t| format!(" (to {})", t.display()))
        .unwrap_or_default();
    ClaimError::Refused(format!(
        "{} is a symbolic link{to}; iocap never writes through a symbolic link, --force or \
         not (give the real path, or remove the link)",
        p.display()
    ))
}

/// The refusal of an existing file without `--force`.
fn already_exists(p: &Path) -> ClaimError {
    ClaimError::Refused(format!(
        "{} already exists; iocap does not overwrite files (remove it, give another name, or \
         add --force)",
        p.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_file_is_kept_unless_forced() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.html");
        std::fs::write(&p, "the user's").unwrap();
        let e = open(&p, Existing::Refuse).unwrap_err();
        assert!(e.to_string().contains("already exists"), "{e}");
        assert!(check(&p, Existing::Refuse).is_err());
        assert!(refuse_existing(&p).is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "the user's");
        check(&p, Existing::Replace).unwrap();
        open(&p, Existing::Replace).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_symlink_or_a_fifo_is_never_opened_even_with_force() {
        let d = tempfile::tempdir().unwrap();
        let theirs = d.path().join("theirs.txt");
        std::fs::write(&theirs, "the user's").unwrap();
        let link = d.path().join("out.html");
        std::os::unix::fs::symlink(&theirs, &link).unwrap();
        for existing in [Existing::Refuse, Existing::Replace] {
            let e = open(&link, existing).unwrap_err();
            assert!(e.to_string().contains("is a symbolic link"), "{e}");
        }
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "the user's");
        let fifo = d.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open(&fifo, Existing::Replace).unwrap_err();
        assert!(e.to_string().contains("is a FIFO"), "{e}");
    }
}

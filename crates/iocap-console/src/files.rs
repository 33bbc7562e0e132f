//! The files iocap writes for the user (an HTML report, an export, man pages): always new
//! files, never over one the user has unless they said `--force`.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// Refuses a path that already exists: iocap never writes over a file the user has.
pub fn refuse_existing(p: &Path) -> Result<()> {
    if p.exists() {
        bail!(
            "{} already exists; iocap does not overwrite files (remove it, or give another name)",
            p.display()
        );
    }
    Ok(())
}

/// Writes `text` to a new file (or over an existing one only with `force`).
pub fn write_new_file(p: &Path, text: &str, force: bool) -> Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true);
    if force {
        opts.create(true).truncate(true);
    } else {
        opts.create_new(true);
    }
    let mut f = opts.open(p).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::anyhow!(
                "{} already exists; iocap does not overwrite files (remove it, give another \
                 name, or add --force)",
                p.display()
            )
        } else {
            anyhow::anyhow!("cannot create {}: {e}", p.display())
        }
    })?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", p.display()))
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
        let e = write_new_file(&p, "ours", false).unwrap_err();
        assert!(e.to_string().contains("already exists"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "the user's");
        assert!(refuse_existing(&p).is_err());
        write_new_file(&p, "ours", true).unwrap();
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
}

//! The files iocap writes for the user (an HTML report, an export, man pages): always new
//! files, never over one the user has unless they said `--force`, never through a symbolic
//! link, never anything but a regular file. The rules and the open are the claim's
//! (`iocap_platform::claim::output`, docs/safety.md rule 3); a command that reads files as well
//! opens its outputs through its [`crate::claim::Claim`], which refuses an output that is one
//! of its inputs. What is here writes a text at once ([`write_new_file`]) and makes a directory
//! ready to be written into ([`new_or_empty_dir`]).

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use iocap_platform::claim::output;

pub use iocap_platform::claim::Existing;

/// Writes `text` to a new file, or over an existing regular file as `existing` says.
pub fn write_new_file(p: &Path, text: &str, existing: Existing) -> Result<()> {
    let mut f = create_new_file(p, existing)?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", p.display()))
}

/// Opens a new file for writing, or an existing regular file, emptied, as `existing` says
/// (the claim's open: `O_NOFOLLOW`, a FIFO refused by its kind).
pub fn create_new_file(p: &Path, existing: Existing) -> Result<std::fs::File> {
    Ok(output::open(p, existing)?)
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

    /// The rules are the claim's (`claim::output`'s tests); this writes the text through them.
    #[test]
    fn the_text_is_written_once_and_kept_unless_forced() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.html");
        write_new_file(&p, "ours", Existing::Refuse).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "ours");
        let e = write_new_file(&p, "again", Existing::Refuse).unwrap_err();
        assert!(e.to_string().contains("already exists"), "{e}");
        write_new_file(&p, "again", Existing::Replace).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "again");
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

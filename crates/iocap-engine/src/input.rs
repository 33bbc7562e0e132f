//! The files iocap reads because a user named them (a suite or profile, a SQLIO param or batch
//! file, a verify journal): only a regular file is read. A FIFO's read-only open waits for a
//! writer, and Rust retries an open that a signal interrupts, so `suite show FIFO` used to hang
//! with Ctrl-C and SIGTERM swallowed; a directory or a device is no input either. The kind is
//! judged with a stat before the open, the open does not wait (O_NONBLOCK: a FIFO swapped in
//! after the stat returns at once), and the descriptor is judged again. One reader, so every
//! command refuses such a path the same way (test targets: `safety::not_a_target`).

use std::io::{self, Read};
use std::path::Path;

/// The bytes of the regular file at `path` (a link to one is followed), or an error that names
/// what else it is.
pub fn read_bytes(path: &Path) -> io::Result<Vec<u8>> {
    regular(path, &std::fs::metadata(path)?)?;
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(target_os = "linux")]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NONBLOCK);
    let mut f = opts.open(path)?;
    regular(path, &f.metadata()?)?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The text of the regular file at `path` (see [`read_bytes`]); not UTF-8 is an error.
pub fn read_text(path: &Path) -> io::Result<String> {
    String::from_utf8(read_bytes(path)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

fn regular(path: &Path, m: &std::fs::Metadata) -> io::Result<()> {
    if m.is_file() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a {}, not a file",
            path.display(),
            iocap_model::file_kind(&m.file_type())
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_and_anything_else_named() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("s.toml");
        std::fs::write(&f, "name = 'x'").unwrap();
        assert_eq!(read_text(&f).unwrap(), "name = 'x'");
        let e = read_text(d.path()).unwrap_err().to_string();
        assert!(e.ends_with("is a directory, not a file"), "{e}");
        assert!(read_text(&d.path().join("missing")).is_err());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("pipe");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&p).unwrap_err().to_string();
        assert!(e.contains("is a FIFO (named pipe), not a file"), "{e}");
    }
}

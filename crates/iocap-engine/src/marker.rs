//! How iocap recognises a test file it created itself.
//!
//! A created file carries the extended attribute `user.iocap` = `iocap-testfile v1 state=<filling
//! |complete> size=<bytes>`. File systems without user xattrs get a sidecar `<file>.iocap` holding
//! the same text plus the file's device and inode, so a different file put in its place is not
//! mistaken for ours. The marker is checked on an open descriptor, never on a path, so a file
//! swapped in after the check is not the file that was checked.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const XATTR: &[u8] = b"user.iocap\0";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    pub complete: bool,
    pub size: u64,
}

fn sidecar(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".iocap");
    PathBuf::from(s)
}

fn parse(text: &str, dev_ino: Option<(u64, u64)>) -> Option<Marker> {
    let mut words = text.split_whitespace();
    if words.next()? != "iocap-testfile" || words.next()? != "v1" {
        return None;
    }
    let (mut complete, mut size, mut dev, mut ino) = (None, None, None, None);
    for w in words {
        let (k, v) = w.split_once('=')?;
        match k {
            "state" => complete = Some(v == "complete"),
            "size" => size = v.parse().ok(),
            "dev" => dev = v.parse::<u64>().ok(),
            "ino" => ino = v.parse::<u64>().ok(),
            _ => {}
        }
    }
    if let Some((d, i)) = dev_ino {
        if dev != Some(d) || ino != Some(i) {
            return None;
        }
    }
    Some(Marker {
        complete: complete?,
        size: size?,
    })
}

/// The marker of the open file `f` (found at `path`), if iocap created it.
pub fn read(f: &File, path: &Path) -> Option<Marker> {
    let mut buf = [0u8; 256];
    // SAFETY: the name is NUL-terminated and `buf` is writable for its length.
    let n = unsafe {
        libc::fgetxattr(
            f.as_raw_fd(),
            XATTR.as_ptr().cast(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n > 0 {
        return parse(std::str::from_utf8(&buf[..n as usize]).ok()?, None);
    }
    let meta = f.metadata().ok()?;
    let text = std::fs::read_to_string(sidecar(path)).ok()?;
    parse(&text, Some((meta.dev(), meta.ino())))
}

/// Records that iocap created `f` at `path`, in the given state.
pub fn write(f: &File, path: &Path, m: Marker) -> io::Result<()> {
    let state = if m.complete { "complete" } else { "filling" };
    let text = format!("iocap-testfile v1 state={state} size={}", m.size);
    // SAFETY: the name is NUL-terminated; the value pointer and length describe `text`.
    let rc = unsafe {
        libc::fsetxattr(
            f.as_raw_fd(),
            XATTR.as_ptr().cast(),
            text.as_ptr().cast(),
            text.len(),
            0,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let meta = f.metadata()?;
    // O_NOFOLLOW: a symlink planted under the sidecar's name is not written through
    let mut side = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(sidecar(path))?;
    std::io::Write::write_all(
        &mut side,
        format!("{text} dev={} ino={}\n", meta.dev(), meta.ino()).as_bytes(),
    )
}

/// Removes a sidecar left by a file iocap created and then removed.
pub fn remove_sidecar(path: &Path) {
    let _ = std::fs::remove_file(sidecar(path));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t");
        let f = File::create(&p).unwrap();
        assert_eq!(read(&f, &p), None);
        let m = Marker {
            complete: true,
            size: 4096,
        };
        write(&f, &p, m).unwrap();
        assert_eq!(read(&f, &p), Some(m));
        // another file at another path is not ours
        let q = dir.path().join("u");
        let g = File::create(&q).unwrap();
        assert_eq!(read(&g, &q), None);
    }

    #[test]
    fn sidecar_is_bound_to_the_inode() {
        assert_eq!(
            parse(
                "iocap-testfile v1 state=complete size=10 dev=1 ino=2",
                Some((1, 2))
            ),
            Some(Marker {
                complete: true,
                size: 10
            })
        );
        assert_eq!(
            parse(
                "iocap-testfile v1 state=complete size=10 dev=1 ino=2",
                Some((1, 3))
            ),
            None
        );
        assert_eq!(parse("something else", None), None);
    }
}

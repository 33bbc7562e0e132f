//! How iocap recognises a test file it created itself.
//!
//! A created file carries the extended attribute `user.iocap` = `iocap-testfile v1 state=<filling
//! |complete> size=<bytes>`. File systems without user xattrs get a sidecar `<file>.iocap` holding
//! the same text plus the file's device and inode, so a different file put in its place is not
//! mistaken for ours. The marker is checked on an open descriptor, never on a path, so a file
//! swapped in after the check is not the file that was checked.
//!
//! On Windows the marker is the NTFS alternate data stream `<file>:iocap` holding the same text,
//! used where the volume says it has named streams (`FILE_NAMED_STREAMS`) and the stream opened
//! is part of the very file already open (same volume serial and file index); elsewhere (FAT,
//! exFAT, Wine's drives) the sidecar, bound to the volume serial and file index as Linux binds it
//! to the device and inode.

use std::fs::File;
use std::io;
#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;
#[cfg(target_os = "linux")]
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
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
    if let Some(text) = plat::read_attr(f, path) {
        return parse(&text, None);
    }
    let text = std::fs::read_to_string(sidecar(path)).ok()?;
    parse(&text, Some(plat::dev_ino(f).ok()?))
}

/// The identity of the open file `f` the sidecar binds its marker to: its device and inode
/// (Windows: its volume serial number and file index). Two descriptors with the same identity
/// are the same file.
pub fn identity(f: &File) -> io::Result<(u64, u64)> {
    plat::dev_ino(f)
}

/// Records that iocap created `f` at `path`, in the given state.
pub fn write(f: &File, path: &Path, m: Marker) -> io::Result<()> {
    let state = if m.complete { "complete" } else { "filling" };
    let text = format!("iocap-testfile v1 state={state} size={}", m.size);
    if plat::write_attr(f, path, &text) {
        return Ok(());
    }
    let (dev, ino) = plat::dev_ino(f)?;
    let mut side = plat::open_sidecar(&sidecar(path))?;
    std::io::Write::write_all(
        &mut side,
        format!("{text} dev={dev} ino={ino}\n").as_bytes(),
    )
}

#[cfg(target_os = "linux")]
mod plat {
    use super::*;

    /// The xattr's text, if `f` has one.
    pub fn read_attr(f: &File, _path: &Path) -> Option<String> {
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
        (n > 0).then(|| String::from_utf8_lossy(&buf[..n as usize]).into_owned())
    }

    /// Sets the xattr; false where the file system has no user xattrs.
    pub fn write_attr(f: &File, _path: &Path, text: &str) -> bool {
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
        rc == 0
    }

    /// The device and inode the sidecar binds the marker to.
    pub fn dev_ino(f: &File) -> io::Result<(u64, u64)> {
        let meta = f.metadata()?;
        Ok((meta.dev(), meta.ino()))
    }

    /// The sidecar, created or truncated; O_NOFOLLOW: a symlink planted under its name is not
    /// written through.
    pub fn open_sidecar(p: &Path) -> io::Result<File> {
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(p)
    }
}

#[cfg(windows)]
mod plat {
    use std::os::windows::fs::OpenOptionsExt;

    use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT;

    use super::*;
    use iocap_platform::win;

    /// GetVolumeInformation's flag for a file system with named streams (winnt.h).
    const FILE_NAMED_STREAMS: u32 = 0x0004_0000;

    /// The stream `<path>:iocap`, opened as asked, when the volume of `f` has named streams and
    /// the stream belongs to `f` itself.
    fn stream(f: &File, path: &Path, opts: &mut std::fs::OpenOptions) -> Option<File> {
        let (_, flags) = win::fs_of(f)?;
        if flags & FILE_NAMED_STREAMS == 0 {
            return None;
        }
        let mut name = path.as_os_str().to_owned();
        name.push(":iocap");
        let s = opts
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
            .open(name)
            .ok()?;
        let same = |a: &File, b: &File| matches!((win::file_id(a), win::file_id(b)), (Ok(x), Ok(y)) if x.0 == y.0 && x.1 == y.1);
        same(f, &s).then_some(s)
    }

    /// The stream's text, if `f` has one.
    pub fn read_attr(f: &File, path: &Path) -> Option<String> {
        let mut s = stream(f, path, std::fs::OpenOptions::new().read(true))?;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut s, &mut text).ok()?;
        (!text.is_empty()).then_some(text)
    }

    /// Writes the stream; false where the volume has no named streams.
    pub fn write_attr(f: &File, path: &Path, text: &str) -> bool {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        match stream(f, path, &mut opts) {
            Some(mut s) => std::io::Write::write_all(&mut s, text.as_bytes()).is_ok(),
            None => false,
        }
    }

    /// The volume serial number and file index the sidecar binds the marker to.
    pub fn dev_ino(f: &File) -> io::Result<(u64, u64)> {
        let (serial, index, _) = win::file_id(f)?;
        Ok((u64::from(serial), index))
    }

    /// The sidecar, created or truncated, never through a reparse point planted under its name.
    pub fn open_sidecar(p: &Path) -> io::Result<File> {
        if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(io::Error::other(format!(
                "{} is a symbolic link; not writing through it",
                p.display()
            )));
        }
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
            .open(p)
    }
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

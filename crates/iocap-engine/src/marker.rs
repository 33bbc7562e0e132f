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
//! to the device and inode. The system calls are `iocap_platform::filetag`'s.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use iocap_platform::filetag as plat;

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

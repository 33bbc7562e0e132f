//! Shared set-up for the mount tests: a temp dir holding `backing/` and `mnt/`, mounted.
#![allow(dead_code)]

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use iocap_faultfs::FaultFs;
use tempfile::TempDir;

/// A mounted FaultFs over a fresh temp dir, or None (after a skip note) when FUSE cannot be
/// mounted here and `CI` is unset. Field order matters: the mount is dropped before the dir.
pub struct Mounted {
    pub fs: FaultFs,
    pub dir: TempDir,
}

pub fn mount(test: &str) -> Option<Mounted> {
    if !iocap_faultfs::fuse_or_skip(test) {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let backing = dir.path().join("backing");
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&backing).unwrap();
    std::fs::create_dir(&mnt).unwrap();
    let fs = FaultFs::mount(&backing, &mnt).unwrap();
    Some(Mounted { fs, dir })
}

impl Mounted {
    /// Create `name` through the mount, filled with `len` bytes of `fill`, and open it r/w.
    pub fn file(&self, name: &str, len: usize, fill: u8) -> File {
        let f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(self.fs.mountpoint().join(name))
            .unwrap();
        f.write_all_at(&vec![fill; len], 0).unwrap();
        f
    }

    /// Bytes `[offset, offset + len)` of the backing file (what really reached "the disk").
    pub fn backing(&self, name: &str, offset: u64, len: usize) -> Vec<u8> {
        let f = File::open(self.fs.backing().join(name)).unwrap();
        let mut buf = vec![0u8; len];
        f.read_exact_at(&mut buf, offset).unwrap();
        buf
    }
}

/// Whether `path` is a mount point of this process's mount namespace.
pub fn is_mounted(path: &Path) -> bool {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let p = path.to_str().unwrap();
    info.lines().any(|l| l.split(' ').nth(4) == Some(p))
}

pub fn read(f: &File, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    f.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

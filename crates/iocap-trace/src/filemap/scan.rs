//! Reading where files lie: every regular file under the directories named, its extents from
//! FIEMAP (FS_IOC_FIEMAP), moved from its file system's device to the whole disk the block
//! layer's requests name.
//!
//! What it never does: write, sync or follow a link. FIEMAP is asked without
//! FIEMAP_FLAG_SYNC, which would flush the file (I/O of iocap's own in the middle of a
//! capture): extents still in delayed allocation have no place yet and are read again at the
//! next scan. Files on a stacked device (device-mapper, md) or a file system with no device of
//! its own (btrfs, network and FUSE file systems) are skipped, with the reason in
//! [`FileMap::skipped`]: their requests reach the disks below through a mapping this does not
//! read.
//!
//! [`Scanner::scan`] is incremental: it walks the directories each time, and asks FIEMAP again
//! only for the files that are new, changed size or time, or had extents without a place.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use iocap_model::workload::StreamRole;

use super::{FileMap, MappedDir, MappedFile};

/// Files walked at most per scan (a directory tree larger than that is mapped in part, and the
/// map says so).
pub const MAX_FILES: usize = 200_000;

/// A directory to map, and the role the user gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirSpec {
    pub path: PathBuf,
    pub role: Option<StreamRole>,
}

impl DirSpec {
    /// `DIR` or `ROLE=DIR` (`log=/pg/wal`): a role name from the stream roles.
    pub fn parse(s: &str) -> Result<DirSpec, String> {
        if let Some((role, dir)) = s.split_once('=') {
            if let Some(r) = StreamRole::parse(role) {
                return Ok(DirSpec {
                    path: dir.into(),
                    role: Some(r),
                });
            }
            if !Path::new(s).exists() {
                let names: Vec<&str> = StreamRole::ALL.iter().map(|r| r.name()).collect();
                return Err(format!(
                    "'{role}' is not a role ({}); give DIR or ROLE=DIR",
                    names.join(", ")
                ));
            }
        }
        Ok(DirSpec {
            path: s.into(),
            role: None,
        })
    }
}

/// What was known of a file at the last scan.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Seen {
    size: u64,
    mtime_ns: i128,
    ino: u64,
    whole: bool,
}

/// Maps the directories, again and again, reporting only what changed.
pub struct Scanner {
    dirs: Vec<DirSpec>,
    seen: HashMap<PathBuf, Seen>,
    /// The disk (and the partition's start on it) of each file system device met.
    disks: HashMap<u64, Result<(crate::DevId, u64), String>>,
    first: bool,
}

impl Scanner {
    /// Checks that each directory exists and is one.
    pub fn new(dirs: Vec<DirSpec>) -> Result<Scanner, String> {
        for d in &dirs {
            match std::fs::metadata(&d.path) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(format!("--files {}: not a directory", d.path.display())),
                Err(e) => return Err(format!("--files {}: {e}", d.path.display())),
            }
        }
        Ok(Scanner {
            dirs,
            seen: HashMap::new(),
            disks: HashMap::new(),
            first: true,
        })
    }

    /// The files that are new or changed since the last scan (every file the first time),
    /// with the directories on the first map.
    pub fn scan(&mut self) -> FileMap {
        let mut map = FileMap::default();
        if std::mem::take(&mut self.first) {
            map.dirs = self
                .dirs
                .iter()
                .map(|d| MappedDir {
                    path: d.path.display().to_string(),
                    role: d.role,
                })
                .collect();
        }
        let mut files = Vec::new();
        for d in &self.dirs {
            walk(&d.path, d.role, &mut files);
        }
        if files.len() > MAX_FILES {
            files.truncate(MAX_FILES);
            map.skipped
                .push(format!("more than {MAX_FILES} files: the rest unmapped"));
        }
        for (path, role) in files {
            self.visit(&path, role, &mut map);
        }
        map
    }

    fn visit(&mut self, path: &Path, role: Option<StreamRole>, map: &mut FileMap) {
        let Ok(m) = std::fs::symlink_metadata(path) else {
            return;
        };
        let now = seen_of(&m);
        if self.seen.get(path).is_some_and(|s| s.whole && *s == now) {
            return;
        }
        let disk = self
            .disks
            .entry(dev_of(&m))
            .or_insert_with(|| disk_of(dev_of(&m)))
            .clone();
        let (dev, shift) = match disk {
            Ok(d) => d,
            Err(why) => {
                self.seen.insert(path.into(), now);
                if map.skipped.len() < 16 && !map.skipped.iter().any(|s| s.ends_with(&why)) {
                    map.skipped.push(format!("{}: {why}", path.display()));
                }
                return;
            }
        };
        match fiemap::extents(path) {
            Ok((extents, whole)) => {
                self.seen.insert(path.into(), Seen { whole, ..now });
                map.files.push(MappedFile {
                    path: path.display().to_string(),
                    dev,
                    role,
                    extents: join(extents.iter().map(|&[s, l]| [s + shift, l])),
                });
            }
            Err(e) => {
                self.seen.insert(path.into(), now);
                if map.skipped.len() < 16 {
                    map.skipped.push(format!("{}: {e}", path.display()));
                }
            }
        }
    }
}

/// The regular files under `dir` (links are not followed), up to one more than [`MAX_FILES`].
fn walk(dir: &Path, role: Option<StreamRole>, out: &mut Vec<(PathBuf, Option<StreamRole>)>) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file() {
                out.push((e.path(), role));
                if out.len() > MAX_FILES {
                    return;
                }
            }
        }
    }
}

/// Sorted extents with adjacent ones joined.
fn join(extents: impl Iterator<Item = [u64; 2]>) -> Vec<[u64; 2]> {
    let mut v: Vec<[u64; 2]> = extents.filter(|e| e[1] > 0).collect();
    v.sort_unstable();
    let mut out: Vec<[u64; 2]> = Vec::with_capacity(v.len());
    for e in v {
        match out.last_mut() {
            Some(l) if l[0] + l[1] == e[0] => l[1] += e[1],
            _ => out.push(e),
        }
    }
    out
}

#[cfg(unix)]
fn seen_of(m: &std::fs::Metadata) -> Seen {
    use std::os::unix::fs::MetadataExt;
    Seen {
        size: m.len(),
        mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        ino: m.ino(),
        whole: true,
    }
}

#[cfg(not(unix))]
fn seen_of(m: &std::fs::Metadata) -> Seen {
    Seen {
        size: m.len(),
        mtime_ns: 0,
        ino: 0,
        whole: true,
    }
}

#[cfg(unix)]
fn dev_of(m: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::dev(m)
}

#[cfg(not(unix))]
fn dev_of(_: &std::fs::Metadata) -> u64 {
    0
}

/// The whole disk under a file system's device number, and the byte offset of the device on
/// it (a partition's start; 0 for a whole disk), from /sys/dev/block.
#[cfg(target_os = "linux")]
fn disk_of(st_dev: u64) -> Result<(crate::DevId, u64), String> {
    let (major, minor) = (libc::major(st_dev), libc::minor(st_dev));
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    if major == 0 {
        return Err(format!(
            "its file system has no block device of its own ({major}:{minor}: btrfs, tmpfs, \
             FUSE or a network file system)"
        ));
    }
    let real = std::fs::canonicalize(&sys).map_err(|e| format!("{}: {e}", sys.display()))?;
    let stacked = std::fs::read_dir(real.join("slaves"))
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    let name = real
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    if stacked {
        return Err(format!(
            "on a stacked device ({name}): its requests reach the disks below through a \
             mapping iocap does not read"
        ));
    }
    let dev = |p: &Path| -> Option<crate::DevId> {
        let t = std::fs::read_to_string(p.join("dev")).ok()?;
        let (a, b) = t.trim().split_once(':')?;
        Some(crate::DevId {
            major: a.parse().ok()?,
            minor: b.parse().ok()?,
        })
    };
    if real.join("partition").exists() {
        let start: u64 = std::fs::read_to_string(real.join("start"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| format!("{name}: its partition start cannot be read"))?;
        let parent = real.parent().ok_or("a partition without a disk")?;
        let disk = dev(parent).ok_or_else(|| format!("{name}: its disk cannot be read"))?;
        Ok((disk, start * 512))
    } else {
        let d = dev(&real).unwrap_or(crate::DevId { major, minor });
        Ok((d, 0))
    }
}

#[cfg(not(target_os = "linux"))]
fn disk_of(_: u64) -> Result<(crate::DevId, u64), String> {
    Err("file extents are read on Linux only (FIEMAP)".into())
}

#[cfg(target_os = "linux")]
mod fiemap {
    //! FS_IOC_FIEMAP, 512 extents a call.
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::Path;

    const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
    const LAST: u32 = 0x1;
    /// UNKNOWN, DELALLOC, DATA_INLINE, DATA_TAIL: no place of its own on the disk yet.
    const NO_PLACE: u32 = 0x2 | 0x4 | 0x200 | 0x400;
    const PER_CALL: usize = 512;

    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Extent {
        logical: u64,
        physical: u64,
        length: u64,
        reserved64: [u64; 2],
        flags: u32,
        reserved: [u32; 3],
    }

    #[repr(C)]
    struct Request {
        start: u64,
        length: u64,
        flags: u32,
        mapped: u32,
        count: u32,
        reserved: u32,
        extents: [Extent; PER_CALL],
    }

    /// The file's extents (`[physical, length]` on its file system's device) and whether
    /// every one had a place.
    pub fn extents(path: &Path) -> std::io::Result<(Vec<[u64; 2]>, bool)> {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOATIME)
            .open(path)
            .or_else(|_| {
                // O_NOATIME is refused on a file the caller does not own
                std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                    .open(path)
            })?;
        let mut out = Vec::new();
        let mut whole = true;
        let mut req = Box::new(Request {
            start: 0,
            length: u64::MAX,
            flags: 0,
            mapped: 0,
            count: PER_CALL as u32,
            reserved: 0,
            extents: [Extent::default(); PER_CALL],
        });
        loop {
            req.mapped = 0;
            // SAFETY: `req` is a `struct fiemap` with room for `count` extents, as the ioctl
            // expects; the kernel writes at most `count` extents into it, and `f` is open.
            let rc = unsafe { libc::ioctl(f.as_raw_fd(), FS_IOC_FIEMAP, &mut *req) };
            if rc != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let n = (req.mapped as usize).min(PER_CALL);
            if n == 0 {
                break;
            }
            let mut last = false;
            for e in &req.extents[..n] {
                if e.flags & NO_PLACE != 0 {
                    whole = false;
                } else {
                    out.push([e.physical, e.length]);
                }
                last |= e.flags & LAST != 0;
            }
            let e = req.extents[n - 1];
            if last {
                break;
            }
            req.start = e.logical + e.length;
            req.length = u64::MAX - req.start;
        }
        Ok((out, whole))
    }
}

#[cfg(not(target_os = "linux"))]
mod fiemap {
    pub fn extents(_: &std::path::Path) -> std::io::Result<(Vec<[u64; 2]>, bool)> {
        Err(std::io::Error::other("FIEMAP is Linux's"))
    }
}

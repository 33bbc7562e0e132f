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
//! The system's calls (FIEMAP, sysfs, a file's inode and time) are the platform's
//! (`iocap_platform::extents`); Windows has none, so there every file is skipped with why.
//!
//! [`Scanner::scan`] is incremental: it walks the directories each time, and asks FIEMAP again
//! only for the files that are new, changed size or time, or had extents without a place.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use iocap_model::workload::StreamRole;
use iocap_platform::extents;

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
        let st_dev = extents::stamp(&m).dev;
        let disk = self
            .disks
            .entry(st_dev)
            .or_insert_with(|| disk_of(st_dev))
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
        match extents::extents(path) {
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

/// What tells the file at `m` changed at the next scan (the platform's stamp: nothing but the
/// size on Windows).
fn seen_of(m: &std::fs::Metadata) -> Seen {
    let s = extents::stamp(m);
    Seen {
        size: m.len(),
        mtime_ns: s.mtime_ns,
        ino: s.ino,
        whole: true,
    }
}

/// The whole disk under a file system's device number, and the byte offset of the device on
/// it (the platform's reading of /sys/dev/block; an error on Windows).
fn disk_of(st_dev: u64) -> Result<(crate::DevId, u64), String> {
    extents::disk_of(st_dev).map(|((major, minor), start)| (crate::DevId { major, minor }, start))
}

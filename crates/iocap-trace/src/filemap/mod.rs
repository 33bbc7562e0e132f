//! Which file each request fell in: the extents of the files under the directories a user
//! names (`capture --files DIR`), read with FIEMAP, kept in the trace, and looked up per
//! request when the trace is described. A database's processes share one name (`postgres`),
//! so who issued a request cannot tell its WAL from its tables; where the bytes lie can.
//!
//! - [`FileMap`]: what a trace keeps (JSON in the trace file's map chunks). A capture writes the
//!   whole map at its start, then the files that appeared or changed each second, then at its
//!   end; [`FileMap::merge`] lays later snapshots over earlier ones.
//! - [`FileIndex`]: the lookup from a device and a byte offset to a file, by binary search over
//!   the extents sorted by start (a few million extents fit in tens of MB).
//! - [`role_of_path`]: a file's role by the rules docs/capture.md states (pg_wal is the log, ...).
//! - [`scan`]: reading the extents (Linux's FIEMAP; elsewhere a scan says it cannot).

pub mod scan;

use std::collections::HashMap;

use iocap_model::workload::StreamRole;
use serde::{Deserialize, Serialize};

use crate::record::DevId;

/// Files and where their bytes lie on the disks the records name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileMap {
    /// The directories walked, each with the role the user gave it (`log=DIR`), if any.
    pub dirs: Vec<MappedDir>,
    pub files: Vec<MappedFile>,
    /// Files that could not be mapped, and why (the first few of each cause).
    pub skipped: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MappedDir {
    pub path: String,
    /// The role every file under it has, when the user said so; else each file's by its path.
    pub role: Option<StreamRole>,
}

/// One file's extents.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MappedFile {
    pub path: String,
    /// The whole disk its extents are on (a partition's file lies on its disk, shifted by the
    /// partition's start), as the records name it.
    #[serde(with = "crate::meta::dev_text")]
    pub dev: DevId,
    /// Set when the user gave the file's directory a role.
    #[serde(default)]
    pub role: Option<StreamRole>,
    /// `[start, length]` in bytes on the disk, sorted, adjacent ones joined.
    pub extents: Vec<[u64; 2]>,
}

impl MappedFile {
    /// Its role: the one given, else by its path.
    pub fn role(&self) -> StreamRole {
        self.role.unwrap_or_else(|| role_of_path(&self.path))
    }
}

impl FileMap {
    /// Lays `newer` over this map: a file it names again takes its new extents (a file grows,
    /// or is rewritten elsewhere), new files and directories are added.
    pub fn merge(&mut self, newer: FileMap) {
        let mut at: HashMap<String, usize> = self
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.clone(), i))
            .collect();
        for f in newer.files {
            match at.get(&f.path) {
                Some(&i) => self.files[i] = f,
                None => {
                    at.insert(f.path.clone(), self.files.len());
                    self.files.push(f);
                }
            }
        }
        for d in newer.dirs {
            if !self.dirs.contains(&d) {
                self.dirs.push(d);
            }
        }
        for s in newer.skipped {
            if self.skipped.len() < 32 && !self.skipped.contains(&s) {
                self.skipped.push(s);
            }
        }
    }

    /// Extents over all files.
    pub fn extents(&self) -> u64 {
        self.files.iter().map(|f| f.extents.len() as u64).sum()
    }

    /// The map as a map chunk's payload.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a file map serialises")
    }

    /// A map chunk's payload read back; `None` for one this version cannot read.
    pub fn from_json(bytes: &[u8]) -> Option<FileMap> {
        serde_json::from_slice(bytes).ok()
    }
}

/// A file's role by its path: the log (PostgreSQL's `pg_wal`/`pg_xlog`, InnoDB's
/// `ib_logfile*` and `#innodb_redo`, MariaDB's Aria log `aria_log.NNNNNNNN`, SQLite's `-wal`,
/// SQL Server's `.ldf`, iocap's own `iocap-log.testfile`), InnoDB's doublewrite files
/// (`.dblwr`, `ib_doublewrite`; MariaDB has none: its doublewrite buffer is pages 64-191 of
/// the system tablespace, `ibdata1`, which is data), temp files (`pgsql_tmp`, `ibtmp1`,
/// `#innodb_temp`, MySQL's `#sql` tables, `iocap-temp.testfile`), and data for every other
/// file.
pub fn role_of_path(path: &str) -> StreamRole {
    let parts: Vec<&str> = path.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    let name = parts.last().copied().unwrap_or("");
    let lower = name.to_ascii_lowercase();
    let dir_is = |names: &[&str]| {
        parts[..parts.len().saturating_sub(1)]
            .iter()
            .any(|p| names.contains(p))
    };
    if dir_is(&["pg_wal", "pg_xlog", "#innodb_redo"])
        || lower.starts_with("ib_logfile")
        || (lower.len() > 9
            && lower.starts_with("aria_log.")
            && lower[9..].bytes().all(|b| b.is_ascii_digit()))
        || lower.ends_with("-wal")
        || lower.ends_with(".ldf")
        || lower == "iocap-log.testfile"
    {
        StreamRole::Log
    } else if lower.ends_with(".dblwr") || lower.starts_with("ib_doublewrite") {
        StreamRole::Doublewrite
    } else if dir_is(&["pgsql_tmp", "#innodb_temp"])
        || lower.starts_with("ibtmp")
        || lower.starts_with("#sql")
        || lower == "iocap-temp.testfile"
    {
        StreamRole::Temp
    } else {
        StreamRole::Data
    }
}

/// From a device and a byte offset to the file there.
#[derive(Clone, Debug, Default)]
pub struct FileIndex {
    /// Per device: `(start, end, file)`, sorted by start.
    by_dev: HashMap<DevId, Vec<(u64, u64, u32)>>,
    /// The longest extent per device, so a lookup knows how far back an extent may start.
    longest: HashMap<DevId, u64>,
    /// Devices on which extents overlap (blocks of a deleted file reused by another).
    overlapping: std::collections::HashSet<DevId>,
    roles: Vec<StreamRole>,
}

impl FileIndex {
    pub fn new(map: &FileMap) -> FileIndex {
        let mut ix = FileIndex {
            roles: map.files.iter().map(MappedFile::role).collect(),
            ..FileIndex::default()
        };
        for (i, f) in map.files.iter().enumerate() {
            let v = ix.by_dev.entry(f.dev).or_default();
            for &[start, len] in &f.extents {
                v.push((start, start.saturating_add(len), i as u32));
                let l = ix.longest.entry(f.dev).or_default();
                *l = (*l).max(len);
            }
        }
        for (dev, v) in ix.by_dev.iter_mut() {
            v.sort_unstable();
            if v.windows(2).any(|w| w[1].0 < w[0].1) {
                ix.overlapping.insert(*dev);
            }
        }
        ix
    }

    /// Whether the map has any extent.
    pub fn is_empty(&self) -> bool {
        self.by_dev.values().all(Vec::is_empty)
    }

    /// The file holding the byte at `offset` on `dev` (where extents overlap, a file mapped
    /// later in the capture wins: its blocks were reused).
    pub fn file_at(&self, dev: DevId, offset: u64) -> Option<u32> {
        let v = self.by_dev.get(&dev)?;
        let end = v.partition_point(|e| e.0 <= offset);
        if !self.overlapping.contains(&dev) {
            let e = v[..end].last()?;
            return (offset < e.1).then_some(e.2);
        }
        let floor = offset.saturating_sub(self.longest.get(&dev).copied().unwrap_or(0));
        v[..end]
            .iter()
            .rev()
            .take_while(|e| e.0 >= floor)
            .filter(|e| offset < e.1)
            .map(|e| e.2)
            .max()
    }

    /// A mapped file's role.
    pub fn role(&self, file: u32) -> StreamRole {
        self.roles
            .get(file as usize)
            .copied()
            .unwrap_or(StreamRole::Other)
    }

    pub fn files(&self) -> usize {
        self.roles.len()
    }
}

#[cfg(test)]
mod tests;

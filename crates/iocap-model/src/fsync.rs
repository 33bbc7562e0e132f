//! What `iocap fsync` measured: the ways of making a log write durable compared at queue depth
//! 1, per write size (issue 7). Stored as [`crate::RunResult::fsync`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::LatencyUs;

/// One `iocap fsync` run: every (method, size) point, the device it ran on, what looked wrong
/// and what to set in the database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct FsyncReport {
    /// The test file (or block device) that was written.
    pub target: String,
    /// The block device holding the target (sysfs name), `null` when it cannot be told.
    #[serde(default)]
    pub device: Option<String>,
    /// The file system of the target (`ext4`, `xfs`, `tmpfs`); `null` for a block device.
    #[serde(default)]
    pub fs_type: Option<String>,
    /// The device's `queue/rotational` flag from sysfs; `null` when unknown.
    #[serde(default)]
    pub rotational: Option<bool>,
    /// The device's `queue/write_cache` from sysfs: `write back` (a volatile cache the kernel
    /// flushes) or `write through`; `null` when unknown.
    #[serde(default)]
    pub write_cache: Option<String>,
    /// The device's `queue/fua` from sysfs: whether it takes Forced Unit Access writes.
    #[serde(default)]
    pub fua: Option<bool>,
    /// The O_DIRECT alignment of the target; O_DIRECT sizes below it are skipped.
    pub logical_block_bytes: u64,
    /// Size of the test file; writes stay inside it.
    pub file_size_bytes: u64,
    /// Where each write goes: `same` (offset 0 every time, as pg_test_fsync) or `cycle`
    /// (walking through the file, wrapping at its end).
    pub offsets: String,
    /// Time asked for per point.
    pub duration_s: f64,
    /// The database family the recommendation is for: `postgres`, `sqlserver`, `mysql`,
    /// `oracle`.
    pub profile: String,
    pub points: Vec<FsyncPoint>,
    /// Implausibly fast durable writes for the device class, and other caveats.
    pub warnings: Vec<String>,
    /// One or two plain sentences for the profile's database, with the measured numbers.
    pub recommendation: String,
}

/// One method at one write size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct FsyncPoint {
    /// Linux: `fsync` (write + fsync), `fdatasync` (write + fdatasync), `o_dsync`,
    /// `o_direct_o_dsync`, `o_sync`, `o_direct_o_sync`, `rwf_dsync` (pwritev2 with RWF_DSYNC).
    /// Windows: `flush_file_buffers` (WriteFile + FlushFileBuffers), `write_through`
    /// (FILE_FLAG_WRITE_THROUGH), `no_buffering_write_through` (FILE_FLAG_NO_BUFFERING |
    /// FILE_FLAG_WRITE_THROUGH, overlapped). A method of a newer version is kept by its name.
    pub method: MethodId,
    pub size_bytes: u64,
    /// Durable writes completed (for `fsync`/`fdatasync`: write plus flush pairs).
    pub ops: u64,
    /// Measured time of this point, shorter if interrupted.
    pub duration_s: f64,
    /// `ops / duration_s`.
    pub ops_per_s: f64,
    /// Latency of each durable write (write and flush together) in microseconds; `null` when
    /// nothing was measured.
    #[serde(default)]
    pub lat_us: Option<LatencyUs>,
    /// Whether the method could run here; `false` with `reason` when the kernel or file system
    /// does not offer it or the size does not suit it.
    pub available: bool,
    #[serde(default)]
    pub reason: Option<String>,
}

/// One way to make a log write durable, as [`FsyncPoint::method`] names it. Every method writes
/// `size` bytes at queue depth 1 and returns only once the kernel says the data is on stable
/// storage (`iocap-fsync` issues them; the system calls are its business). Each system has its
/// own methods ([`FsyncMethod::LINUX`], [`FsyncMethod::WINDOWS`]); a result names those of the
/// system it was measured on, and every version reads both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FsyncMethod {
    /// `pwrite` then `fsync`: data and all metadata (PostgreSQL `fsync`, InnoDB `fsync`).
    Fsync,
    /// `pwrite` then `fdatasync`: data and the metadata needed to read it back (PostgreSQL's
    /// Linux default).
    Fdatasync,
    /// Opened `O_DSYNC`, then `pwrite`: each write returns once its data is durable
    /// (PostgreSQL `open_datasync` at the default wal_level).
    ODsync,
    /// Opened `O_DIRECT | O_DSYNC`: no page cache, the kernel sends a FUA write (or a write
    /// and a flush) per call (pg_test_fsync's `open_datasync`, Oracle `setall`, SQL Server FUA).
    ODirectODsync,
    /// Opened `O_SYNC`, then `pwrite`: like O_DSYNC plus the file's metadata (PostgreSQL
    /// `open_sync`, InnoDB `O_DSYNC`, which opens its log O_SYNC).
    OSync,
    /// Opened `O_DIRECT | O_SYNC`: pg_test_fsync's `open_sync`.
    ODirectOSync,
    /// `pwritev2` with `RWF_DSYNC`: O_DSYNC for one call, on a plain descriptor (Linux 4.7+).
    RwfDsync,
    /// Windows: `WriteFile` then `FlushFileBuffers`, the fsync of Windows (PostgreSQL `fsync`
    /// and `fsync_writethrough`, InnoDB's redo log flush).
    FlushFileBuffers,
    /// Windows: opened `FILE_FLAG_WRITE_THROUGH`, then `WriteFile`: each write returns once
    /// its data is durable (PostgreSQL `open_datasync`, the Windows default).
    WriteThrough,
    /// Windows: opened `FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH | FILE_FLAG_OVERLAPPED`,
    /// one `WriteFile` waited for with `GetOverlappedResult`: what SQL Server opens its log with.
    NoBufferingWriteThrough,
}

impl FsyncMethod {
    /// Every method of every system, in the order the tables show them.
    pub const ALL: [FsyncMethod; 10] = [
        FsyncMethod::Fsync,
        FsyncMethod::Fdatasync,
        FsyncMethod::ODsync,
        FsyncMethod::ODirectODsync,
        FsyncMethod::OSync,
        FsyncMethod::ODirectOSync,
        FsyncMethod::RwfDsync,
        FsyncMethod::FlushFileBuffers,
        FsyncMethod::WriteThrough,
        FsyncMethod::NoBufferingWriteThrough,
    ];

    /// Linux's methods, in table order: what `iocap fsync` measures there by default.
    pub const LINUX: [FsyncMethod; 7] = [
        FsyncMethod::Fsync,
        FsyncMethod::Fdatasync,
        FsyncMethod::ODsync,
        FsyncMethod::ODirectODsync,
        FsyncMethod::OSync,
        FsyncMethod::ODirectOSync,
        FsyncMethod::RwfDsync,
    ];

    /// Windows' methods, in table order: what `iocap fsync` measures there by default.
    pub const WINDOWS: [FsyncMethod; 3] = [
        FsyncMethod::FlushFileBuffers,
        FsyncMethod::WriteThrough,
        FsyncMethod::NoBufferingWriteThrough,
    ];

    /// The system whose calls the method is: `Linux` or `Windows`.
    pub fn system(self) -> &'static str {
        if FsyncMethod::WINDOWS.contains(&self) {
            "Windows"
        } else {
            "Linux"
        }
    }

    /// Whether the method bypasses the cache (O_DIRECT, FILE_FLAG_NO_BUFFERING), and so takes
    /// only sizes and offsets aligned to the target's sector or O_DIRECT alignment.
    pub fn direct(self) -> bool {
        matches!(
            self,
            FsyncMethod::ODirectODsync
                | FsyncMethod::ODirectOSync
                | FsyncMethod::NoBufferingWriteThrough
        )
    }

    /// The stable name in JSON (`FsyncPoint::method`).
    pub fn id(self) -> &'static str {
        match self {
            FsyncMethod::Fsync => "fsync",
            FsyncMethod::Fdatasync => "fdatasync",
            FsyncMethod::ODsync => "o_dsync",
            FsyncMethod::ODirectODsync => "o_direct_o_dsync",
            FsyncMethod::OSync => "o_sync",
            FsyncMethod::ODirectOSync => "o_direct_o_sync",
            FsyncMethod::RwfDsync => "rwf_dsync",
            FsyncMethod::FlushFileBuffers => "flush_file_buffers",
            FsyncMethod::WriteThrough => "write_through",
            FsyncMethod::NoBufferingWriteThrough => "no_buffering_write_through",
        }
    }

    /// The name people read.
    pub fn label(self) -> &'static str {
        match self {
            FsyncMethod::Fsync => "write + fsync",
            FsyncMethod::Fdatasync => "write + fdatasync",
            FsyncMethod::ODsync => "O_DSYNC",
            FsyncMethod::ODirectODsync => "O_DIRECT|O_DSYNC",
            FsyncMethod::OSync => "O_SYNC",
            FsyncMethod::ODirectOSync => "O_DIRECT|O_SYNC",
            FsyncMethod::RwfDsync => "pwritev2 RWF_DSYNC",
            FsyncMethod::FlushFileBuffers => "FlushFileBuffers",
            FsyncMethod::WriteThrough => "WRITE_THROUGH",
            FsyncMethod::NoBufferingWriteThrough => "NO_BUFFERING|WRITE_THROUGH",
        }
    }

    pub fn from_id(s: &str) -> Option<FsyncMethod> {
        FsyncMethod::ALL.into_iter().find(|m| m.id() == s)
    }
}

/// The method a point names ([`FsyncPoint::method`]): one this version knows, or the id of one
/// a newer version measured, kept as it is so that its run still loads from a shared store. In
/// the JSON and the schema it stays a plain string, the method's [`FsyncMethod::id`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(from = "String", into = "String")]
pub enum MethodId {
    Known(FsyncMethod),
    /// An id this version does not know.
    Other(String),
}

impl MethodId {
    /// The method, when this version knows it.
    pub fn known(&self) -> Option<FsyncMethod> {
        match self {
            MethodId::Known(m) => Some(*m),
            MethodId::Other(_) => None,
        }
    }

    /// The stable name in JSON.
    pub fn id(&self) -> &str {
        match self {
            MethodId::Known(m) => m.id(),
            MethodId::Other(id) => id,
        }
    }

    /// The name people read; an id this version does not know reads as it is.
    pub fn label(&self) -> &str {
        match self {
            MethodId::Known(m) => m.label(),
            MethodId::Other(id) => id,
        }
    }
}

impl Default for MethodId {
    fn default() -> Self {
        MethodId::Known(FsyncMethod::Fsync)
    }
}

impl From<FsyncMethod> for MethodId {
    fn from(m: FsyncMethod) -> Self {
        MethodId::Known(m)
    }
}

impl PartialEq<FsyncMethod> for MethodId {
    fn eq(&self, m: &FsyncMethod) -> bool {
        self.known() == Some(*m)
    }
}

impl From<String> for MethodId {
    fn from(id: String) -> Self {
        FsyncMethod::from_id(&id).map_or(MethodId::Other(id), MethodId::Known)
    }
}

impl From<MethodId> for String {
    fn from(m: MethodId) -> String {
        match m {
            MethodId::Known(m) => m.id().to_string(),
            MethodId::Other(id) => id,
        }
    }
}

impl std::fmt::Display for MethodId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// The write sizes of `points`, ascending, each once.
pub fn fsync_sizes(points: &[FsyncPoint]) -> Vec<u64> {
    let mut sizes: Vec<u64> = points.iter().map(|p| p.size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// For each measured size, in size order, the point `pick` chooses among that size's points
/// (none when it chooses none).
pub fn best_per_size<'a>(
    points: &'a [FsyncPoint],
    pick: impl Fn(Vec<&'a FsyncPoint>) -> Option<&'a FsyncPoint>,
) -> Vec<&'a FsyncPoint> {
    fsync_sizes(points)
        .into_iter()
        .filter_map(|s| pick(points.iter().filter(|p| p.size_bytes == s).collect()))
        .collect()
}

/// The fastest available method at each measured size, in size order.
pub fn fastest_per_size(points: &[FsyncPoint]) -> Vec<&FsyncPoint> {
    best_per_size(points, |at| {
        at.into_iter()
            .filter(|p| p.available && p.ops > 0)
            .max_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s))
    })
}

#[cfg(test)]
mod tests {
    use super::{FsyncMethod, MethodId};

    #[test]
    fn every_method_keeps_its_json_name_and_reads_back() {
        let ids: Vec<&str> = FsyncMethod::ALL.iter().map(|m| m.id()).collect();
        assert_eq!(
            ids,
            [
                "fsync",
                "fdatasync",
                "o_dsync",
                "o_direct_o_dsync",
                "o_sync",
                "o_direct_o_sync",
                "rwf_dsync",
                "flush_file_buffers",
                "write_through",
                "no_buffering_write_through",
            ]
        );
        for m in FsyncMethod::ALL {
            assert_eq!(FsyncMethod::from_id(m.id()), Some(m));
            let id = MethodId::from(m.id().to_string());
            assert_eq!((id.known(), id.label()), (Some(m), m.label()));
            assert_eq!(serde_json::to_value(&id).unwrap(), m.id());
        }
        // a method of a newer version loads and reads as its id
        let later: MethodId = serde_json::from_str("\"later_method\"").unwrap();
        assert_eq!(later, MethodId::Other("later_method".into()));
        assert_eq!((later.label(), later.known()), ("later_method", None));
        assert_eq!(serde_json::to_value(&later).unwrap(), "later_method");
    }

    #[test]
    fn each_system_lists_its_own_methods_and_together_they_are_all() {
        let both: Vec<FsyncMethod> = FsyncMethod::LINUX
            .into_iter()
            .chain(FsyncMethod::WINDOWS)
            .collect();
        assert_eq!(both, FsyncMethod::ALL.to_vec());
        assert!(FsyncMethod::LINUX.iter().all(|m| m.system() == "Linux"));
        assert!(FsyncMethod::WINDOWS.iter().all(|m| m.system() == "Windows"));
        let direct: Vec<&str> = FsyncMethod::ALL
            .iter()
            .filter(|m| m.direct())
            .map(|m| m.label())
            .collect();
        assert_eq!(
            direct,
            [
                "O_DIRECT|O_DSYNC",
                "O_DIRECT|O_SYNC",
                "NO_BUFFERING|WRITE_THROUGH"
            ]
        );
    }
}

//! The ways of making a log write durable, as system calls.

/// One way to make a write durable. Every method writes `size` bytes at queue depth 1 and
/// returns only once the kernel says the data is on stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
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
}

impl Method {
    /// Every method, in the order the tables show them.
    pub const ALL: [Method; 7] = [
        Method::Fsync,
        Method::Fdatasync,
        Method::ODsync,
        Method::ODirectODsync,
        Method::OSync,
        Method::ODirectOSync,
        Method::RwfDsync,
    ];

    /// The stable name in JSON (`FsyncPoint::method`).
    pub fn id(self) -> &'static str {
        match self {
            Method::Fsync => "fsync",
            Method::Fdatasync => "fdatasync",
            Method::ODsync => "o_dsync",
            Method::ODirectODsync => "o_direct_o_dsync",
            Method::OSync => "o_sync",
            Method::ODirectOSync => "o_direct_o_sync",
            Method::RwfDsync => "rwf_dsync",
        }
    }

    /// The name people read.
    pub fn label(self) -> &'static str {
        match self {
            Method::Fsync => "write + fsync",
            Method::Fdatasync => "write + fdatasync",
            Method::ODsync => "O_DSYNC",
            Method::ODirectODsync => "O_DIRECT|O_DSYNC",
            Method::OSync => "O_SYNC",
            Method::ODirectOSync => "O_DIRECT|O_SYNC",
            Method::RwfDsync => "pwritev2 RWF_DSYNC",
        }
    }

    pub fn from_id(s: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.id() == s)
    }

    /// Flags added to `O_RDWR` when the file is opened for this method.
    pub fn open_flags(self) -> libc::c_int {
        match self {
            Method::Fsync | Method::Fdatasync | Method::RwfDsync => 0,
            Method::ODsync => libc::O_DSYNC,
            Method::ODirectODsync => libc::O_DIRECT | libc::O_DSYNC,
            Method::OSync => libc::O_SYNC,
            Method::ODirectOSync => libc::O_DIRECT | libc::O_SYNC,
        }
    }

    /// Whether the method bypasses the page cache (and so needs aligned sizes).
    pub fn direct(self) -> bool {
        self.open_flags() & libc::O_DIRECT != 0
    }
}

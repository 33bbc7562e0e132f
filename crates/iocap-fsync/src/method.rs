//! The ways of making a log write durable, as system calls. The methods themselves, their ids
//! and labels are the model's ([`iocap_model::FsyncMethod`]): results name them.

pub use iocap_model::FsyncMethod as Method;

/// How a method opens its file.
pub trait OpenFlags {
    /// Flags added to `O_RDWR` when the file is opened for this method.
    fn open_flags(self) -> libc::c_int;

    /// Whether the method bypasses the page cache (and so needs aligned sizes).
    fn direct(self) -> bool;
}

impl OpenFlags for Method {
    fn open_flags(self) -> libc::c_int {
        match self {
            Method::Fsync | Method::Fdatasync | Method::RwfDsync => 0,
            Method::ODsync => libc::O_DSYNC,
            Method::ODirectODsync => libc::O_DIRECT | libc::O_DSYNC,
            Method::OSync => libc::O_SYNC,
            Method::ODirectOSync => libc::O_DIRECT | libc::O_SYNC,
        }
    }

    fn direct(self) -> bool {
        self.open_flags() & libc::O_DIRECT != 0
    }
}

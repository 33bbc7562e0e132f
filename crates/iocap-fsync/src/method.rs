//! The ways of making a log write durable, as system calls. The methods themselves, their ids
//! and labels are the model's ([`iocap_model::FsyncMethod`]): results name them. Each system
//! measures its own ([`native`]); the calls behind them are `measure_unix`'s and
//! `measure_windows`'s.

pub use iocap_model::FsyncMethod as Method;

/// The methods of the system this was built for, in table order: the default of `--methods`,
/// and the only ones `--methods` takes here.
pub fn native() -> &'static [Method] {
    if cfg!(windows) {
        &Method::WINDOWS
    } else {
        &Method::LINUX
    }
}

/// The system this was built for, as [`Method::system`] names it.
pub fn native_system() -> &'static str {
    if cfg!(windows) {
        "Windows"
    } else {
        "Linux"
    }
}

/// How a method opens its file on Linux.
#[cfg(target_os = "linux")]
pub trait OpenFlags {
    /// Flags added to `O_RDWR` when the file is opened for this method.
    fn open_flags(self) -> libc::c_int;
}

#[cfg(target_os = "linux")]
impl OpenFlags for Method {
    fn open_flags(self) -> libc::c_int {
        match self {
            Method::Fsync | Method::Fdatasync | Method::RwfDsync => 0,
            Method::ODsync => libc::O_DSYNC,
            Method::ODirectODsync => libc::O_DIRECT | libc::O_DSYNC,
            Method::OSync => libc::O_SYNC,
            Method::ODirectOSync => libc::O_DIRECT | libc::O_SYNC,
            // Windows' methods are never opened here: `measure::run` marks another system's
            // methods unavailable before it opens anything
            Method::FlushFileBuffers | Method::WriteThrough | Method::NoBufferingWriteThrough => 0,
        }
    }
}

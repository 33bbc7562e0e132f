//! The ways of making a log write durable, as system calls. The methods themselves, their ids
//! and labels are the model's ([`iocap_model::FsyncMethod`]): results name them. Each system
//! measures its own ([`native`]); the calls behind them are the platform's
//! (`iocap_platform::durable`).

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

//! What verify's file handling does differently on Linux and on Windows, in one place so the
//! rest of the crate is the same on both: how a file is opened without following a link
//! (`O_NOFOLLOW`; `FILE_FLAG_OPEN_REPARSE_POINT`), bypassing the cache (`O_DIRECT`;
//! `FILE_FLAG_NO_BUFFERING`), how a refusal of that shows (`EINVAL`; `ERROR_INVALID_PARAMETER`
//! at the first unaligned or unsupported I/O), and where a file id's randomness comes from. The
//! rules themselves (docs/safety.md), and what a link is, are the engine's (`safety`, `plat`).

#[cfg(target_os = "linux")]
mod imp {
    use std::fs::OpenOptions;
    use std::io;
    use std::os::unix::fs::OpenOptionsExt;

    /// Opens without following a final symlink (and without leaking into children); `direct`
    /// adds O_DIRECT.
    pub fn no_follow(o: &mut OpenOptions, direct: bool) -> &mut OpenOptions {
        let extra = if direct { libc::O_DIRECT } else { 0 };
        o.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | extra)
    }

    /// What a file system that does not take O_DIRECT answers.
    pub fn direct_refused_error() -> io::Error {
        io::Error::from_raw_os_error(libc::EINVAL)
    }

    pub fn is_direct_refused(e: &io::Error) -> bool {
        e.raw_os_error() == Some(libc::EINVAL)
    }

    /// 8 random bytes from the kernel, if it gives them.
    pub fn random_bytes() -> Option<u64> {
        let mut v = [0u8; 8];
        // SAFETY: writes at most 8 bytes into `v`, which lives through the call.
        let n = unsafe { libc::getrandom(v.as_mut_ptr().cast(), 8, 0) };
        (n == 8).then(|| u64::from_le_bytes(v))
    }
}

#[cfg(windows)]
mod imp {
    use std::fs::OpenOptions;
    use std::io;
    use std::os::windows::fs::OpenOptionsExt;

    use windows_sys::Win32::Foundation::ERROR_INVALID_PARAMETER;
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_FLAG_NO_BUFFERING, FILE_FLAG_OPEN_REPARSE_POINT,
    };

    /// Opens a reparse point itself rather than what it points to (Windows' O_NOFOLLOW);
    /// `direct` adds FILE_FLAG_NO_BUFFERING.
    pub fn no_follow(o: &mut OpenOptions, direct: bool) -> &mut OpenOptions {
        let extra = if direct { FILE_FLAG_NO_BUFFERING } else { 0 };
        o.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | extra)
    }

    /// What an unbuffered handle answers to an I/O the volume cannot do unbuffered.
    pub fn direct_refused_error() -> io::Error {
        io::Error::from_raw_os_error(ERROR_INVALID_PARAMETER as i32)
    }

    pub fn is_direct_refused(e: &io::Error) -> bool {
        e.raw_os_error() == Some(ERROR_INVALID_PARAMETER as i32)
    }

    /// 8 random bytes: std's hash keys are drawn from the system's generator (ProcessPrng) for
    /// each new `RandomState`, so the hash of a constant is as random as they are.
    pub fn random_bytes() -> Option<u64> {
        use std::hash::BuildHasher;
        Some(std::collections::hash_map::RandomState::new().hash_one(0u64))
    }
}

pub use imp::*;

/// O_DIRECT's name on this system, for what a warning says.
pub const DIRECT: &str = if cfg!(windows) {
    "FILE_FLAG_NO_BUFFERING"
} else {
    "O_DIRECT"
};

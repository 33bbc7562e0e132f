//! What verify does differently on Linux and on Windows beyond opening its files (the
//! no-follow and direct opens, and how a refusal of direct I/O shows, are the engine's:
//! `iocap_engine::safety::{no_follow, is_direct_refused}`): where a file id's randomness comes
//! from, and what direct I/O is called in a warning.

#[cfg(target_os = "linux")]
mod imp {
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

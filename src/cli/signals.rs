//! Ctrl-C: the first one asks the test to stop issuing, drain and report what it measured; the
//! handler is reset after it fires, so a second Ctrl-C ends the process at once.

use std::sync::atomic::{AtomicBool, Ordering};

pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

#[cfg(target_os = "linux")]
extern "C" fn on_sigint(_: libc::c_int) {
    // async-signal-safe: a single atomic store
    INTERRUPTED.store(true, Ordering::SeqCst);
}

#[cfg(windows)]
pub fn install() {
    super::platform::install_ctrl_handler(&INTERRUPTED);
}

#[cfg(target_os = "linux")]
pub fn install() {
    // SAFETY: installs a handler that only stores to an atomic; SA_RESETHAND restores the default
    // action after the first signal.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigint as *const () as usize;
        sa.sa_flags = libc::SA_RESETHAND;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Sleeps for `secs`, waking early on Ctrl-C; returns whether it was interrupted.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // its users are Linux-only commands
pub fn pause(secs: f64) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs.max(0.0));
    while std::time::Instant::now() < end {
        if interrupted() {
            return true;
        }
        let left = end.saturating_duration_since(std::time::Instant::now());
        std::thread::sleep(left.min(std::time::Duration::from_millis(100)));
    }
    interrupted()
}

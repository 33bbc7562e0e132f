//! Ctrl-C: the first one asks the test to stop issuing, drain and report what it measured; the
//! handler is reset after it fires, so a second Ctrl-C ends the process at once.

use std::sync::atomic::{AtomicBool, Ordering};

pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

#[cfg(target_os = "linux")]
extern "C" fn on_sigint(_: libc::c_int) {
    // async-signal-safe: a single atomic store
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Ctrl-C and Ctrl-Break (and closing the console): the first asks the test to stop, as SIGINT
/// does on Linux; the handler then forgets the flag, so a second one ends the process.
#[cfg(windows)]
pub fn install() {
    use std::sync::atomic::AtomicPtr;
    use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;

    static FLAG: AtomicPtr<AtomicBool> = AtomicPtr::new(std::ptr::null_mut());

    unsafe extern "system" fn on_ctrl(_kind: u32) -> windows_sys::core::BOOL {
        let f = FLAG.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if f.is_null() {
            // the second time: not handled, so the default handler ends the process
            return 0;
        }
        // SAFETY: `f` came from `&INTERRUPTED`, a static.
        unsafe { (*f).store(true, Ordering::SeqCst) };
        1
    }

    FLAG.store(&INTERRUPTED as *const _ as *mut _, Ordering::SeqCst);
    // SAFETY: registers a handler that only touches atomics; it runs on a thread the system
    // starts for it.
    unsafe { SetConsoleCtrlHandler(Some(on_ctrl), 1) };
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

//! Ctrl-C and SIGTERM: the first one asks the test to stop issuing, drain and report what it
//! measured; the handler is reset after it fires, so a second one ends the process at once.
//! Which signal (on Windows, which console event) came first is kept, so the result and every
//! view of it can name it ([`stopped_by`]): a run stopped by a service manager's SIGTERM is not
//! reported as Ctrl-C.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The first signal (Linux) or console event plus one (Windows, whose Ctrl-C event is 0) that
/// asked for a stop; 0 before any.
static FIRST: AtomicI32 = AtomicI32::new(0);

/// Keeps the first stop's code, then raises the flag. Async-signal-safe: two lock-free atomics.
#[cfg(target_os = "linux")]
fn record(code: i32) {
    let _ = FIRST.compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst);
    INTERRUPTED.store(true, Ordering::SeqCst);
}

#[cfg(target_os = "linux")]
extern "C" fn on_signal(sig: libc::c_int) {
    record(sig);
}

/// What asked this process to stop, by name (`SIGINT`, `SIGTERM`; on Windows `CTRL_C_EVENT`,
/// `CTRL_BREAK_EVENT`, `CTRL_CLOSE_EVENT`, ...); `None` while nothing has.
pub fn stopped_by() -> Option<&'static str> {
    name(FIRST.load(Ordering::SeqCst))
}

/// The name of a recorded stop code on this system.
fn name(code: i32) -> Option<&'static str> {
    if code == 0 {
        return None;
    }
    Some(if cfg!(windows) {
        // the console events (wincon.h) plus one
        match code - 1 {
            0 => "CTRL_C_EVENT",
            1 => "CTRL_BREAK_EVENT",
            2 => "CTRL_CLOSE_EVENT",
            5 => "CTRL_LOGOFF_EVENT",
            6 => "CTRL_SHUTDOWN_EVENT",
            _ => "a console event",
        }
    } else {
        // the numbers of Linux's signals
        match code {
            2 => "SIGINT",
            15 => "SIGTERM",
            _ => "a signal",
        }
    })
}

/// Ctrl-C and Ctrl-Break (and closing the console): the first asks the test to stop, as SIGINT
/// does on Linux; the handler then forgets the flag, so a second one ends the process.
#[cfg(windows)]
pub fn install() {
    use std::sync::atomic::AtomicPtr;
    use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;

    static FLAG: AtomicPtr<AtomicBool> = AtomicPtr::new(std::ptr::null_mut());

    unsafe extern "system" fn on_ctrl(kind: u32) -> windows_sys::core::BOOL {
        let f = FLAG.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if f.is_null() {
            // the second time: not handled, so the default handler ends the process
            return 0;
        }
        let _ = FIRST.compare_exchange(0, kind as i32 + 1, Ordering::SeqCst, Ordering::SeqCst);
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
        sa.sa_sigaction = on_signal as *const () as usize;
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

#[cfg(test)]
mod tests {
    #[test]
    fn stops_are_named_by_their_signal_or_event() {
        assert_eq!(super::name(0), None);
        if cfg!(windows) {
            assert_eq!(super::name(1), Some("CTRL_C_EVENT"));
            assert_eq!(super::name(2), Some("CTRL_BREAK_EVENT"));
            assert_eq!(super::name(3), Some("CTRL_CLOSE_EVENT"));
        } else {
            assert_eq!(super::name(2), Some("SIGINT"));
            assert_eq!(super::name(15), Some("SIGTERM"));
        }
    }
}

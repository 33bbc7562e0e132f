//! Linux's clock: CLOCK_MONOTONIC through the vDSO, absolute sleeps on it, and the thread's
//! timer slack.

/// Nanoseconds on CLOCK_MONOTONIC.
#[inline]
pub fn now_ns() -> u64 {
    monotonic(libc::clock_gettime)
}

/// What `call` (clock_gettime or clock_getres) says of CLOCK_MONOTONIC, in nanoseconds.
#[inline(always)]
fn monotonic(
    call: unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int,
) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { call(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until `deadline_ns` on CLOCK_MONOTONIC (absolute, so drift does not accumulate).
pub fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: `ts` is a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

/// Asks the kernel to wake this thread within a microsecond of its timers instead of the
/// default 50 µs slack, so that throttled I/O is paced with sub-millisecond precision.
pub fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only the calling thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong, 0, 0, 0) };
}

/// The clock's stated resolution in nanoseconds.
pub(crate) fn resolution_ns() -> u64 {
    monotonic(libc::clock_getres)
}

pub(crate) const CLOCK_NAME: &str = "CLOCK_MONOTONIC";

pub(crate) fn clocksource() -> Option<String> {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .ok()
        .map(|s| s.trim().to_string())
}

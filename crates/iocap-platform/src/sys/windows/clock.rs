//! Windows' clock: QueryPerformanceCounter scaled by its frequency (read once), and sleeps
//! that finish by yielding.

mod qpc {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    use windows_sys::Win32::System::Performance::{
        QueryPerformanceCounter, QueryPerformanceFrequency,
    };

    static FREQ: AtomicU64 = AtomicU64::new(0);

    /// Ticks per second of QueryPerformanceCounter; fixed at boot, read once.
    #[inline]
    pub fn freq() -> u64 {
        let f = FREQ.load(Relaxed);
        if f != 0 {
            return f;
        }
        let mut v = 0i64;
        // SAFETY: `v` is a valid, writable i64; the call cannot fail on XP and later.
        unsafe { QueryPerformanceFrequency(&mut v) };
        let f = (v as u64).max(1);
        FREQ.store(f, Relaxed);
        f
    }

    /// The counter, in ticks.
    #[inline]
    pub fn ticks() -> u64 {
        let mut v = 0i64;
        // SAFETY: `v` is a valid, writable i64; the call cannot fail on XP and later.
        unsafe { QueryPerformanceCounter(&mut v) };
        v as u64
    }

    /// `ticks` at `freq` ticks a second, in nanoseconds, without overflow.
    #[inline]
    pub fn to_ns(ticks: u64, freq: u64) -> u64 {
        (ticks / freq) * 1_000_000_000 + (ticks % freq) * 1_000_000_000 / freq
    }
}

/// Nanoseconds on QueryPerformanceCounter.
#[inline]
pub fn now_ns() -> u64 {
    qpc::to_ns(qpc::ticks(), qpc::freq())
}

/// Sleeps until `deadline_ns` on the engine's clock. Windows sleeps in whole timer ticks (1 to
/// 15.6 ms), so this sleeps to about a millisecond short and yields the rest of the way.
pub fn sleep_until(deadline_ns: u64) {
    loop {
        let now = now_ns();
        if now >= deadline_ns {
            return;
        }
        let left = deadline_ns - now;
        if left > 2_000_000 {
            std::thread::sleep(std::time::Duration::from_nanos(left - 1_000_000));
        } else {
            std::thread::yield_now();
        }
    }
}

/// Nothing to tighten on Windows: [`sleep_until`] finishes its waits by yielding.
pub fn tighten_timer_slack() {}

pub(crate) fn resolution_ns() -> u64 {
    (1_000_000_000 / qpc::freq()).max(1)
}

pub(crate) const CLOCK_NAME: &str = "QueryPerformanceCounter";

pub(crate) fn clocksource() -> Option<String> {
    Some(format!("QPC at {} Hz", qpc::freq()))
}

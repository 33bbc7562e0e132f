//! The one clock every latency is read from, in nanoseconds. On Linux it is CLOCK_MONOTONIC: with
//! a TSC clocksource a vDSO call of about 20 ns and no system call, so it may be read on the hot
//! path for every submitted batch and every reaped batch. On Windows it is
//! QueryPerformanceCounter (the same kind of call: user mode, no system call on an invariant
//! TSC), scaled by the frequency read once.

/// Nanoseconds on CLOCK_MONOTONIC.
#[cfg(target_os = "linux")]
#[inline]
pub fn now_ns() -> u64 {
    monotonic(libc::clock_gettime)
}

/// What `call` (clock_gettime or clock_getres) says of CLOCK_MONOTONIC, in nanoseconds.
#[cfg(target_os = "linux")]
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
#[cfg(target_os = "linux")]
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
#[cfg(target_os = "linux")]
pub fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only the calling thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong, 0, 0, 0) };
}

/// The clock's stated resolution in nanoseconds.
#[cfg(target_os = "linux")]
fn resolution_ns() -> u64 {
    monotonic(libc::clock_getres)
}

#[cfg(target_os = "linux")]
const CLOCK_NAME: &str = "CLOCK_MONOTONIC";

#[cfg(target_os = "linux")]
fn clocksource() -> Option<String> {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .ok()
        .map(|s| s.trim().to_string())
}

#[cfg(windows)]
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
#[cfg(windows)]
#[inline]
pub fn now_ns() -> u64 {
    qpc::to_ns(qpc::ticks(), qpc::freq())
}

/// Sleeps until `deadline_ns` on the engine's clock. Windows sleeps in whole timer ticks (1 to
/// 15.6 ms), so this sleeps to about a millisecond short and yields the rest of the way.
#[cfg(windows)]
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
#[cfg(windows)]
pub fn tighten_timer_slack() {}

#[cfg(windows)]
fn resolution_ns() -> u64 {
    (1_000_000_000 / qpc::freq()).max(1)
}

#[cfg(windows)]
const CLOCK_NAME: &str = "QueryPerformanceCounter";

#[cfg(windows)]
fn clocksource() -> Option<String> {
    Some(format!("QPC at {} Hz", qpc::freq()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_and_sleeps_accurately() {
        let a = now_ns();
        tighten_timer_slack();
        sleep_until(a + 2_000_000);
        let b = now_ns();
        assert!(b >= a + 2_000_000, "woke early: {} ns", b - a);
    }
}

/// How long [`self_check`] reads the clock at the start of a run.
pub const SELF_CHECK_NS: u64 = 20_000_000;

/// Reads the clock back to back for `duration_ns`, as `pg_test_timing` does: the cost of one
/// reading, the smallest and largest steps, a power-of-two histogram of the steps, and every
/// reading that went backwards. Also the kernel's stated resolution and clocksource.
pub fn self_check(duration_ns: u64) -> iocap_model::TimerCheck {
    let mut buckets = [0u64; 40];
    // steps under 1 µs to the nanosecond, for the median (a stall inflates the mean)
    let mut fine = [0u32; 1024];
    let (mut min_step, mut max_step, mut backwards, mut readings) = (u64::MAX, 0u64, 0u64, 0u64);
    let start = now_ns();
    let end = start.saturating_add(duration_ns);
    let mut prev = start;
    loop {
        let t = now_ns();
        readings += 1;
        if t < prev {
            backwards += 1;
        } else {
            let step = t - prev;
            if step > 0 {
                min_step = min_step.min(step);
            }
            max_step = max_step.max(step);
            if let Some(f) = fine.get_mut(step as usize) {
                *f = f.saturating_add(1);
            }
            let b = (64 - step.leading_zeros()) as usize;
            buckets[b.min(buckets.len() - 1)] += 1;
        }
        prev = t;
        if t >= end {
            break;
        }
    }
    let elapsed = prev.saturating_sub(start);
    let half = readings.saturating_sub(backwards) / 2;
    let mut seen = 0u64;
    let median_step_ns = fine
        .iter()
        .position(|c| {
            seen += u64::from(*c);
            seen > half
        })
        .map_or(max_step, |p| p as u64);
    let steps = buckets
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(b, c)| iocap_model::TimerBucket {
            from_ns: if b == 0 { 0 } else { 1u64 << (b - 1) },
            below_ns: 1u64 << b,
            count: *c,
        })
        .collect();
    iocap_model::TimerCheck {
        clock: CLOCK_NAME.into(),
        clocksource: clocksource(),
        duration_s: elapsed as f64 / 1e9,
        readings,
        overhead_ns: if readings > 0 {
            elapsed as f64 / readings as f64
        } else {
            0.0
        },
        median_step_ns,
        resolution_ns: resolution_ns(),
        min_step_ns: if min_step == u64::MAX { 0 } else { min_step },
        max_step_ns: max_step,
        backwards,
        steps,
    }
}

#[cfg(test)]
mod self_check_tests {
    use super::*;

    #[test]
    fn the_clock_is_cheap_fine_and_never_goes_backwards() {
        let c = self_check(5_000_000);
        assert!(c.readings > 1000, "{c:?}");
        assert_eq!(c.backwards, 0, "{c:?}");
        assert!(c.duration_s >= 0.005, "{c:?}");
        // the histogram holds every step
        let counted: u64 = c.steps.iter().map(|b| b.count).sum();
        assert_eq!(counted + c.backwards, c.readings);
        assert!(c.overhead_ns > 0.0 && c.overhead_ns < 100_000.0, "{c:?}");
        assert!(c.min_step_ns <= c.median_step_ns && c.median_step_ns <= c.max_step_ns);
        assert!(c.resolution_ns >= 1);
        for b in &c.steps {
            assert!(b.from_ns < b.below_ns && b.count > 0);
        }
    }
}

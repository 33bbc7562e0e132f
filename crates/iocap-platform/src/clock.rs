//! The one clock every latency is read from, in nanoseconds. On Linux it is CLOCK_MONOTONIC: with
//! a TSC clocksource a vDSO call of about 20 ns and no system call, so it may be read on the hot
//! path for every submitted batch and every reaped batch. On Windows it is
//! QueryPerformanceCounter (the same kind of call: user mode, no system call on an invariant
//! TSC), scaled by the frequency read once.
//!
//! Each system's reading and sleeping is in `sys/<system>/clock.rs`; the timer self-check
//! below is the same on both. [`now_ns`] is `#[inline]`, so the engine's hot loop inlines it
//! across the crate boundary as it did when the clock was the engine's.

pub use crate::sys::clock::{now_ns, sleep_until, tighten_timer_slack};

use crate::sys::clock::{clocksource, resolution_ns, CLOCK_NAME};

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

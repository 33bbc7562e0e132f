//! The replay's own side of the comparison, and the verdict: whether it kept to the recorded
//! times (lag p99 under 1 ms), said with the lag either way, never a silent slow-down.

use iocap_model::replay::{Lag, ReplaySide, ReplayVerdict};

use crate::schedule::Timing;
use crate::stats::{Stats, READ, WRITE};
use crate::survey::pct;

/// Lag p99 under this is keeping up.
pub const KEPT_UP_P99_US: f64 = 1000.0;

/// The replay's side, from its statistics.
pub fn replayed_side(s: &Stats) -> ReplaySide {
    let elapsed = s.elapsed_s();
    let ios: u64 = s.latency.iter().map(|h| h.len()).sum();
    let d = elapsed.max(1e-9);
    let bytes: u64 = s.ops.iter().map(|o| o.bytes).sum();
    let (r, w) = (s.latency[READ].len(), s.latency[WRITE].len());
    ReplaySide {
        duration_s: elapsed,
        ios,
        iops: ios as f64 / d,
        mb_s: bytes as f64 / d / 1e6,
        read_pct: pct(r, r + w),
        latency: s.latency_rows(),
        qd_mean: Some(s.qd.mean()),
        qd_max: Some(s.qd.max),
    }
}

/// Whether the replay kept up, in one sentence.
pub fn verdict(
    timing: Timing,
    lag: &Lag,
    max_inflight: u64,
    replayed: &ReplaySide,
    recorded: &ReplaySide,
    interrupted: bool,
) -> ReplayVerdict {
    let cut = if interrupted { " (interrupted)" } else { "" };
    if timing == Timing::Fast {
        let x = recorded.duration_s / replayed.duration_s.max(1e-9);
        return ReplayVerdict {
            kept_up: true,
            text: format!(
                "fast{cut}: {:.1} s for {:.1} s recorded, {x:.2}x the recorded pace at the \
                 recorded depth",
                replayed.duration_s, recorded.duration_s
            ),
        };
    }
    if lag.p99_us < KEPT_UP_P99_US {
        return ReplayVerdict {
            kept_up: true,
            text: format!(
                "kept up{cut}: lag p99 {:.0} µs, max {:.0} µs; {:.2} % issued over 1 ms late",
                lag.p99_us, lag.max_us, lag.late_1ms_pct
            ),
        };
    }
    let slots = if lag.waited_for_slot > 0 {
        format!(
            "; {} waited for a free slot at {max_inflight} in flight",
            lag.waited_for_slot
        )
    } else {
        String::new()
    };
    ReplayVerdict {
        kept_up: false,
        text: format!(
            "fell behind{cut}: lag p99 {:.1} ms, max {:.1} ms; {:.1} % issued over 1 ms \
             late{slots}",
            lag.p99_us / 1e3,
            lag.max_us / 1e3,
            lag.late_1ms_pct
        ),
    }
}

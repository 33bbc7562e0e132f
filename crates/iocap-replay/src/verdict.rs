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

/// How the replay ran against its plan.
#[derive(Debug, Clone, Copy)]
pub struct Ran {
    pub timing: Timing,
    pub max_inflight: u64,
    /// Fast mode's fixed depth, for a trace without completion times.
    pub fast_depth: Option<u64>,
    pub interrupted: bool,
}

/// Whether the replay kept up, in one sentence.
pub fn verdict(ran: Ran, lag: &Lag, replayed: &ReplaySide, recorded: &ReplaySide) -> ReplayVerdict {
    let cut = if ran.interrupted {
        " (interrupted)"
    } else {
        ""
    };
    let max_inflight = ran.max_inflight;
    if ran.timing == Timing::Fast {
        let depth = match ran.fast_depth {
            Some(d) => format!("at a fixed depth of {d}"),
            None => "at the recorded depth".into(),
        };
        let pace = if recorded.duration_s > 0.0 {
            let x = recorded.duration_s / replayed.duration_s.max(1e-9);
            format!(
                " for {:.2} s recorded, {x:.2}x the recorded pace",
                recorded.duration_s
            )
        } else {
            String::new()
        };
        return ReplayVerdict {
            kept_up: true,
            text: format!(
                "fast{cut}: {} requests in {:.2} s{pace}, {depth}",
                replayed.ios, replayed.duration_s
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

//! The clock iocap reads every latency from, checked at the start of every run as
//! `pg_test_timing` checks PostgreSQL's: what one reading costs, how fine it is, and that it
//! never goes backwards. A latency of 2 µs measured with a clock that costs 500 ns a reading is
//! a measurement of the clock.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The timer self-check of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct TimerCheck {
    /// The clock checked (`CLOCK_MONOTONIC`).
    pub clock: String,
    /// The kernel's clocksource (`tsc`, `kvm-clock`, `hpet`), when sysfs tells it.
    #[serde(default)]
    pub clocksource: Option<String>,
    /// How long the check ran.
    pub duration_s: f64,
    /// Back-to-back readings taken.
    pub readings: u64,
    /// Mean cost of one reading (the loop's time over its readings, `pg_test_timing`'s "per
    /// loop time"); one preemption during the check inflates it.
    pub overhead_ns: f64,
    /// The median step between consecutive readings: the typical cost of one reading.
    #[serde(default)]
    pub median_step_ns: u64,
    /// The resolution the kernel states (`clock_getres`).
    pub resolution_ns: u64,
    /// The smallest non-zero step seen between two readings.
    pub min_step_ns: u64,
    /// The largest step seen (a preemption or a stall of the virtual CPU).
    pub max_step_ns: u64,
    /// Readings that were earlier than the one before: must be 0.
    pub backwards: u64,
    /// Steps between consecutive readings, as `pg_test_timing` prints them: a count per
    /// power-of-two bucket of nanoseconds.
    pub steps: Vec<TimerBucket>,
}

/// Steps of at least `from_ns` and below `below_ns` nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimerBucket {
    pub from_ns: u64,
    pub below_ns: u64,
    pub count: u64,
}

impl TimerCheck {
    /// The share of a latency of `lat_ns` that timing it costs: iocap reads the clock once per
    /// submitted batch and once per reaped batch, so at most two typical readings per I/O.
    pub fn share_of(&self, lat_ns: f64) -> f64 {
        if lat_ns > 0.0 {
            2.0 * self.median_step_ns as f64 / lat_ns
        } else {
            0.0
        }
    }
}

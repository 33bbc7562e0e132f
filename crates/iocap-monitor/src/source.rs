//! Where the samplers' cumulative counters come from: Linux's `/proc/diskstats` ([`Diskstats`])
//! or Windows' IOCTL_DISK_PERFORMANCE ([`crate::perfmon::PhysicalDisks`]). A source reads every
//! device it covers at once and turns two readings of one device into a [`DeviceSample`], so
//! the samplers ([`crate::EdgeSampler`], [`crate::Watch`]) and the cross-check are the same on
//! both systems.

use std::io;
use std::path::PathBuf;

use iocap_model::DeviceSample;

use crate::{delta, snapshot, DiskCounters, PROC_DISKSTATS};

/// A system's cumulative disk counters.
pub trait CounterSource {
    /// One device's counters at one instant.
    type Counters;
    /// What the counters are called in a result (`OsCounters.source`).
    fn name(&self) -> &'static str;
    /// One reading of every device the source covers, by the name its samples will carry.
    fn read(&mut self) -> io::Result<Vec<(String, Self::Counters)>>;
    /// The per-second figures between two readings of one device, `interval_s` apart.
    fn delta(prev: &Self::Counters, cur: &Self::Counters, interval_s: f64) -> DeviceSample;
}

/// Linux's block-device counters: a diskstats file, normally [`PROC_DISKSTATS`].
#[derive(Debug, Clone)]
pub struct Diskstats {
    path: PathBuf,
}

impl Diskstats {
    pub fn new(path: impl Into<PathBuf>) -> Diskstats {
        Diskstats { path: path.into() }
    }
}

impl Default for Diskstats {
    fn default() -> Diskstats {
        Diskstats::new(PROC_DISKSTATS)
    }
}

impl CounterSource for Diskstats {
    type Counters = DiskCounters;
    fn name(&self) -> &'static str {
        PROC_DISKSTATS
    }
    fn read(&mut self) -> io::Result<Vec<(String, DiskCounters)>> {
        snapshot(&self.path)
    }
    fn delta(prev: &DiskCounters, cur: &DiskCounters, interval_s: f64) -> DeviceSample {
        delta(prev, cur, interval_s)
    }
}

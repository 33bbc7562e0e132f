//! What `iocap monitor` shows each interval, like `iostat -x 1`: the devices named (each must
//! exist), or every device that did I/O in the interval but loop and RAM devices. The caller
//! paces the reads; the interval is measured between them. On Windows the devices are the
//! physical disks ([`Watch::physical_disks`]).

use std::time::Instant;

use iocap_model::DeviceSample;

use crate::source::{CounterSource, Diskstats};
use crate::{MonitorError, PROC_DISKSTATS};

/// The devices watched and the counters last read.
pub struct Watch<S: CounterSource = Diskstats> {
    source: S,
    wanted: Vec<String>,
    prev: Vec<(String, S::Counters)>,
    last: Instant,
}

impl Watch {
    /// Watches `devices` (kernel names, `/dev/` optional), or every device with I/O when none
    /// is named; refuses a name `/proc/diskstats` does not list.
    pub fn new(devices: &[String]) -> Result<Watch, MonitorError> {
        let wanted: Vec<String> = devices
            .iter()
            .map(|d| d.trim_start_matches("/dev/").to_string())
            .collect();
        let w = Watch::from_source(Diskstats::new(PROC_DISKSTATS), wanted)?;
        if let Some(d) = w
            .wanted
            .iter()
            .find(|d| !w.prev.iter().any(|(n, _)| n == *d))
        {
            return Err(MonitorError::NoDevice(d.clone()));
        }
        Ok(w)
    }
}

impl<S: CounterSource> Watch<S> {
    /// Watches `wanted` (device names as `source` gives them; every device with I/O when
    /// empty), reading `source` once now.
    pub fn from_source(mut source: S, wanted: Vec<String>) -> Result<Self, MonitorError> {
        let prev = source.read()?;
        Ok(Watch {
            source,
            wanted,
            prev,
            last: Instant::now(),
        })
    }

    /// Where the counters come from (`/proc/diskstats`, `IOCTL_DISK_PERFORMANCE`): the view
    /// names the figures after it.
    pub fn source_name(&self) -> &'static str {
        self.source.name()
    }

    /// The figures since the last call (or since the watch began).
    pub fn sample(&mut self) -> Result<Vec<DeviceSample>, MonitorError> {
        let cur = self.source.read()?;
        let secs = self.last.elapsed().as_secs_f64();
        self.last = Instant::now();
        let mut samples = Vec::new();
        for (name, c) in &cur {
            let shown = if self.wanted.is_empty() {
                !name.starts_with("loop") && !name.starts_with("ram")
            } else {
                self.wanted.contains(name)
            };
            if let (true, Some((_, p))) = (shown, self.prev.iter().find(|(n, _)| n == name)) {
                let mut s = S::delta(p, c, secs);
                s.device = name.clone();
                if !self.wanted.is_empty() || s.r_s + s.w_s > 0.0 {
                    samples.push(s);
                }
            }
        }
        self.prev = cur;
        Ok(samples)
    }
}

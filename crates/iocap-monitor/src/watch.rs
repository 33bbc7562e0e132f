//! What `iocap monitor` shows each interval, like `iostat -x 1`: the devices named (each must
//! exist), or every device that did I/O in the interval but loop and RAM devices. The caller
//! paces the reads; the interval is measured between them.

use std::time::Instant;

use iocap_model::DeviceSample;

use crate::{delta, snapshot, DiskCounters, MonitorError, PROC_DISKSTATS};

/// The devices watched and the counters last read.
pub struct Watch {
    wanted: Vec<String>,
    prev: Vec<(String, DiskCounters)>,
    last: Instant,
}

impl Watch {
    /// Watches `devices` (kernel names, `/dev/` optional), or every device with I/O when none
    /// is named; refuses a name `/proc/diskstats` does not list.
    pub fn new(devices: &[String]) -> Result<Watch, MonitorError> {
        let prev = snapshot(PROC_DISKSTATS)?;
        let wanted: Vec<String> = devices
            .iter()
            .map(|d| d.trim_start_matches("/dev/").to_string())
            .collect();
        if let Some(d) = wanted.iter().find(|d| !prev.iter().any(|(n, _)| n == *d)) {
            return Err(MonitorError::NoDevice(d.clone()));
        }
        Ok(Watch {
            wanted,
            prev,
            last: Instant::now(),
        })
    }

    /// The figures since the last call (or since [`Watch::new`]).
    pub fn sample(&mut self) -> Result<Vec<DeviceSample>, MonitorError> {
        let cur = snapshot(PROC_DISKSTATS)?;
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
                let mut s = delta(p, c, secs);
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

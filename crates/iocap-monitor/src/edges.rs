//! Sampling driven from outside: the engine calls at the edges of its own per-second intervals
//! and each call reads `/proc/diskstats` once, so the device series lines up second for second
//! with iocap's. Unlike [`crate::Sampler`] there is no thread: the caller's thread reads the
//! file (a few kilobytes, tens of microseconds), and the interval length is measured with a
//! monotonic clock between the reads, not assumed. The counters are a [`CounterSource`]'s:
//! `/proc/diskstats` by default, the physical disks' IOCTL_DISK_PERFORMANCE on Windows.

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::path::PathBuf;
use std::time::Instant;

use iocap_model::DeviceSample;

use crate::source::{CounterSource, Diskstats};
use crate::{filter, PROC_DISKSTATS};

/// Samples a set of devices at instants the caller chooses.
pub struct EdgeSampler<S: CounterSource = Diskstats> {
    source: S,
    wanted: BTreeSet<String>,
    prev: Option<(Instant, HashMap<String, S::Counters>)>,
    samples: Vec<DeviceSample>,
    error: Option<String>,
}

impl EdgeSampler {
    /// Samples `devices` (kernel names) from `/proc/diskstats`. Fails when the file cannot be
    /// read at all, so the caller can say why there are no counters.
    pub fn new(devices: &[String]) -> io::Result<EdgeSampler> {
        Self::with_path(PROC_DISKSTATS, devices)
    }

    /// Like [`EdgeSampler::new`], reading `path` instead.
    pub fn with_path(path: impl Into<PathBuf>, devices: &[String]) -> io::Result<EdgeSampler> {
        EdgeSampler::from_source(Diskstats::new(path), devices)
    }
}

impl<S: CounterSource> EdgeSampler<S> {
    /// Samples `devices` (names as `source` gives them) from `source`, which is read once now:
    /// it fails when the counters cannot be read at all, so the caller can say why there are
    /// none.
    pub fn from_source(mut source: S, devices: &[String]) -> io::Result<Self> {
        source.read()?;
        Ok(EdgeSampler {
            source,
            wanted: devices.iter().cloned().collect(),
            prev: None,
            samples: Vec::new(),
            error: None,
        })
    }

    /// An edge: reads the counters; from the second edge on, records one sample per device for
    /// the interval since the previous edge, ending at `t_s`. A failed read is remembered
    /// ([`EdgeSampler::error`]) and the interval is folded into the next one.
    pub fn edge(&mut self, t_s: f64) {
        let now = Instant::now();
        let cur = match self.source.read() {
            Ok(all) => filter(all, &self.wanted),
            Err(e) => {
                self.error = Some(e.to_string());
                return;
            }
        };
        if let Some((t0, prev)) = &self.prev {
            let dt = now.duration_since(*t0).as_secs_f64();
            let mut names: Vec<&String> = cur.keys().collect();
            names.sort();
            for name in names {
                if let Some(p) = prev.get(name) {
                    let mut s = S::delta(p, &cur[name], dt);
                    s.device = name.clone();
                    s.t_s = t_s;
                    self.samples.push(s);
                }
            }
        }
        self.prev = Some((now, cur));
    }

    /// Forgets the previous edge: the next edge starts a new interval (for a window that opens
    /// again, as in a group of tests).
    pub fn restart(&mut self) {
        self.prev = None;
    }

    /// Where the counters come from (`OsCounters.source`).
    pub fn source_name(&self) -> &'static str {
        self.source.name()
    }

    /// The last read error, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Every sample so far, in time order, devices by name within a time.
    pub fn samples(&self) -> &[DeviceSample] {
        &self.samples
    }

    /// The samples of one device.
    pub fn series(&self, device: &str) -> Vec<DeviceSample> {
        self.samples
            .iter()
            .filter(|s| s.device == device)
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_line_up_with_the_callers_edges() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("diskstats");
        let line = |reads: u64| {
            format!(
                " 254 0 vda {reads} 0 {} 0 0 0 0 0 0 0 0\n 7 0 loop0 1 0 8 0 0 0 0 0 0 0 0\n",
                reads * 16
            )
        };
        std::fs::write(&f, line(0)).unwrap();
        let mut s = EdgeSampler::with_path(&f, &["vda".to_string()]).unwrap();
        s.edge(0.0);
        assert!(s.samples().is_empty(), "the first edge opens the window");
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&f, line(100)).unwrap();
        s.edge(1.0);
        let v = s.series("vda");
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].t_s, 1.0);
        // 100 reads of 16 sectors = 8 KiB each, over a measured (not assumed) interval
        assert!((v[0].rareq_sz_kb - 8.0).abs() < 1e-9);
        assert!((v[0].r_s * v[0].interval_s - 100.0).abs() < 1e-6);
        assert!(s.series("loop0").is_empty(), "only the devices asked for");
        std::fs::remove_file(&f).unwrap();
        s.edge(2.0);
        assert!(s.error().is_some());
        assert_eq!(s.samples().len(), 1);
    }
}

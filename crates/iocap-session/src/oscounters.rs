//! The OS-counter cross-check of every test: before a test runs, find the block devices under
//! its targets; while it runs, read `/proc/diskstats` at each edge of the engine's per-second
//! intervals ([`iocap_engine::RunObserver::window_edge`]); after it ran, put the device series
//! beside iocap's figures ([`TestResult::os_counters`]) and name every disagreement
//! ([`iocap_monitor::cross_check_series`]): a test served from the page cache, merged requests,
//! a saturated device, a CPU-bound test. Disagreements also go into the test's warnings, so
//! nobody reads a cache's figures as the device's.

use std::collections::BTreeMap;

use iocap_audit::Root;
use iocap_engine::{LiveSample, PreparedTarget, RunObserver, TargetKind};
use iocap_model::{DeviceRole, OsCounters, OsDevice, TestResult};
use iocap_monitor::{average, cross_check_series, AppFigures, EdgeSampler, PROC_DISKSTATS};

/// A device to sample, and which targets it holds.
#[derive(Debug, Clone)]
struct Watched {
    device: String,
    role: DeviceRole,
    targets: Vec<String>,
}

/// The progress line plus the diskstats sampling of one test (or one group of tests run
/// together).
pub struct DiskWatch {
    /// The live line of the test: told each second's figures, dropped (cleared) when the test
    /// ends.
    pub line: Option<Box<dyn RunObserver>>,
    devices: Vec<Watched>,
    /// Why a target (or, with `None`, every target) has no counters.
    unavailable: Vec<(Option<String>, String)>,
    sampler: Option<EdgeSampler>,
}

impl RunObserver for DiskWatch {
    fn start(&mut self) {
        if let Some(l) = &mut self.line {
            l.start();
        }
    }
    fn tick(&mut self, s: &LiveSample) {
        if let Some(l) = &mut self.line {
            l.tick(s);
        }
    }
    fn window_edge(&mut self, t_s: f64) {
        if let Some(s) = &mut self.sampler {
            s.edge(t_s);
        }
    }
}

impl DiskWatch {
    /// Finds the devices under `targets` (all the tests that will run together).
    pub fn new(targets: &[&PreparedTarget], line: Box<dyn RunObserver>) -> DiskWatch {
        if cfg!(not(target_os = "linux")) {
            // /proc/diskstats is Linux's; on Windows perfmon's PhysicalDisk counters are the
            // cross-check, not sampled by iocap yet (docs/windows.md)
            return DiskWatch {
                line: Some(line),
                devices: vec![],
                unavailable: vec![],
                sampler: None,
            };
        }
        let mut devices: Vec<Watched> = Vec::new();
        let mut unavailable = Vec::new();
        for t in targets {
            let shown = t.path.display().to_string();
            let (device, fs) = iocap_engine::devinfo::device_and_fs(&t.file);
            let Some(device) = device else {
                let why = format!(
                    "{shown}: no block device under it ({}), so the OS has no disk counters for it",
                    match (t.kind, fs) {
                        (TargetKind::File, Some(fs)) => format!("{fs} file system"),
                        _ => "not found in /sys/dev/block".to_string(),
                    }
                );
                unavailable.push((Some(shown), why));
                continue;
            };
            match devices.iter_mut().find(|w| w.device == device) {
                Some(w) => {
                    if !w.targets.contains(&shown) {
                        w.targets.push(shown.clone());
                    }
                    w.role = DeviceRole::Target;
                }
                None => devices.push(Watched {
                    device: device.clone(),
                    role: DeviceRole::Target,
                    targets: vec![shown.clone()],
                }),
            }
            // dm, md and partitions: the devices below, for reference
            let resolved = iocap_audit::resolve_device(&Root::system(), &device);
            for below in resolved.devices.iter().filter(|d| **d != device) {
                if !devices.iter().any(|w| &w.device == below) {
                    devices.push(Watched {
                        device: below.clone(),
                        role: DeviceRole::Underlying,
                        targets: vec![],
                    });
                }
            }
        }
        let names: Vec<String> = devices.iter().map(|w| w.device.clone()).collect();
        let sampler = if names.is_empty() {
            None
        } else {
            match EdgeSampler::new(&names) {
                Ok(s) => Some(s),
                Err(e) => {
                    unavailable.push((None, format!("cannot read {PROC_DISKSTATS}: {e}")));
                    None
                }
            }
        };
        DiskWatch {
            line: Some(line),
            devices,
            unavailable,
            sampler,
        }
    }

    /// Puts the OS counters on each test of a group that ran together, comparing each target
    /// device with what all of the group's tests did on it; disagreements become warnings.
    pub fn attach(&self, tests: &mut [&mut TestResult]) {
        if cfg!(not(target_os = "linux")) {
            return;
        }
        // what all the tests did on each device: (read IOPS, write IOPS, read bytes, reads)
        let mut per_device: BTreeMap<String, (f64, f64, u64, u64)> = BTreeMap::new();
        for tr in tests.iter().flat_map(|t| t.targets.iter()) {
            if let Some(d) = &tr.device {
                let e = per_device.entry(d.clone()).or_default();
                e.0 += tr.read.iops;
                e.1 += tr.write.iops;
                e.2 += tr.read.bytes;
                e.3 += tr.read.ios;
            }
        }
        let threads: u32 = tests
            .iter()
            .flat_map(|t| t.targets.iter())
            .map(|tr| tr.threads.max(1))
            .sum();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        let cores = f64::from(threads.min(cpus));
        for t in tests.iter_mut() {
            let cpu_busy = (t.duration_s > 0.0 && cores > 0.0)
                .then(|| (t.cpu.user_s + t.cpu.sys_s) / t.duration_s / cores);
            let mine: Vec<String> = t.targets.iter().map(|x| x.path.clone()).collect();
            let mut os = OsCounters {
                source: PROC_DISKSTATS.to_string(),
                devices: vec![],
                unavailable: self
                    .unavailable
                    .iter()
                    .filter(|(p, _)| p.as_ref().is_none_or(|p| mine.contains(p)))
                    .map(|(_, why)| why.clone())
                    .collect(),
            };
            if let Some(e) = self.sampler.as_ref().and_then(|s| s.error()) {
                os.unavailable
                    .push(format!("reading {PROC_DISKSTATS} failed: {e}"));
            }
            for w in &self.devices {
                let holds_mine = w.targets.iter().any(|p| mine.contains(p));
                if w.role == DeviceRole::Target && !holds_mine {
                    continue;
                }
                let series = self
                    .sampler
                    .as_ref()
                    .map(|s| s.series(&w.device))
                    .unwrap_or_default();
                let summary = average(&series);
                let findings = if w.role == DeviceRole::Target && !series.is_empty() {
                    let (r, wr, rbytes, n) = per_device.get(&w.device).copied().unwrap_or_default();
                    let app = AppFigures {
                        read_iops: r,
                        write_iops: wr,
                        read_bytes_per_io: if n > 0 { rbytes as f64 / n as f64 } else { 0.0 },
                        cpu_busy,
                    };
                    cross_check_series(&app, &series)
                } else {
                    vec![]
                };
                for f in &findings {
                    t.warnings.push(format!("OS counters: {}", f.message));
                }
                os.devices.push(OsDevice {
                    device: w.device.clone(),
                    role: w.role,
                    targets: w
                        .targets
                        .iter()
                        .filter(|p| mine.contains(p))
                        .cloned()
                        .collect(),
                    summary,
                    series,
                    findings,
                });
            }
            t.os_counters = Some(os);
        }
    }
}

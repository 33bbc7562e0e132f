//! The OS-counter cross-check of every test: before a test runs, find the block devices under
//! its targets; while it runs, read `/proc/diskstats` at each edge of the engine's per-second
//! intervals ([`iocap_engine::RunObserver::window_edge`]); after it ran, put the device series
//! beside iocap's figures ([`TestResult::os_counters`]) and name every disagreement
//! ([`iocap_monitor::cross_check_series`]): a test served from the page cache, merged requests,
//! a saturated device, a CPU-bound test. Disagreements also go into the test's warnings, so
//! nobody reads a cache's figures as the device's. On Windows the devices are the physical
//! disks under the targets and the counters their IOCTL_DISK_PERFORMANCE (perfmon's
//! PhysicalDisk counters), sampled on the same edges and checked the same way.

use std::collections::BTreeMap;

use iocap_engine::{LiveSample, PreparedTarget, RunObserver};
use iocap_model::{DeviceRole, OsCounters, OsDevice, TargetResult, TestResult};
use iocap_monitor::{average, cross_check_series, AppFigures, EdgeSampler, SystemSource};

/// Where this system's counters come from (`OsCounters.source`).
#[cfg(not(windows))]
const SOURCE: &str = iocap_monitor::PROC_DISKSTATS;
#[cfg(windows)]
const SOURCE: &str = iocap_model::DISK_PERFORMANCE_SOURCE;

/// The devices found under some targets, and why a target (or, with `None`, every target) has
/// no counters.
type Found = (Vec<Watched>, Vec<(Option<String>, String)>);

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
    sampler: Option<EdgeSampler<SystemSource>>,
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
        let (devices, mut unavailable) = find_devices(targets);
        let names: Vec<String> = devices.iter().map(|w| w.device.clone()).collect();
        let sampler = if names.is_empty() {
            None
        } else {
            match open_sampler(&names) {
                Ok(s) => Some(s),
                Err(why) => {
                    unavailable.push((None, why));
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

    /// The device a target's figures count against: the one the engine named (Linux), or the
    /// one disk found under the target's path (Windows, where the engine names none).
    fn device_of(&self, tr: &TargetResult) -> Option<String> {
        if cfg!(windows) {
            self.devices
                .iter()
                .find(|w| w.role == DeviceRole::Target && w.targets.contains(&tr.path))
                .map(|w| w.device.clone())
        } else {
            tr.device.clone()
        }
    }

    /// Puts the OS counters on each test of a group that ran together, comparing each target
    /// device with what all of the group's tests did on it; disagreements become warnings.
    pub fn attach(&self, tests: &mut [&mut TestResult]) {
        if cfg!(not(any(target_os = "linux", windows))) {
            return;
        }
        // what all the tests did on each device: (read IOPS, write IOPS, read bytes, reads)
        let mut per_device: BTreeMap<String, (f64, f64, u64, u64)> = BTreeMap::new();
        for tr in tests.iter().flat_map(|t| t.targets.iter()) {
            if let Some(d) = self.device_of(tr) {
                let e = per_device.entry(d).or_default();
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
                source: SOURCE.to_string(),
                devices: vec![],
                unavailable: self
                    .unavailable
                    .iter()
                    .filter(|(p, _)| p.as_ref().is_none_or(|p| mine.contains(p)))
                    .map(|(_, why)| why.clone())
                    .collect(),
            };
            if let Some(e) = self.sampler.as_ref().and_then(|s| s.error()) {
                os.unavailable.push(format!("reading {SOURCE} failed: {e}"));
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

/// The block devices under `targets` (Linux): each target's device, and the devices below it
/// (dm, md and partitions) for reference.
#[cfg(not(windows))]
fn find_devices(targets: &[&PreparedTarget]) -> Found {
    use iocap_audit::Root;
    use iocap_engine::TargetKind;
    let mut devices: Vec<Watched> = Vec::new();
    let mut unavailable = Vec::new();
    if cfg!(not(target_os = "linux")) {
        return (devices, unavailable);
    }
    for t in targets {
        let shown = t.path.display().to_string();
        let (device, fs) = iocap_platform::devinfo::device_and_fs(&t.file);
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
        add_target(&mut devices, &device, &shown);
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
    (devices, unavailable)
}

/// The physical disks under `targets` (Windows): a target on one disk counts against it; a
/// volume over several disks (spanned, striped) shows each disk for reference only, as Linux
/// shows the disks under an md array.
#[cfg(windows)]
fn find_devices(targets: &[&PreparedTarget]) -> Found {
    use iocap_monitor::perfmon::disk_name;
    let mut devices: Vec<Watched> = Vec::new();
    let mut unavailable = Vec::new();
    for t in targets {
        let shown = t.path.display().to_string();
        match iocap_platform::devinfo::disks_of(&t.path, &t.file) {
            Ok(disks) if disks.len() == 1 => add_target(&mut devices, &disk_name(disks[0]), &shown),
            Ok(disks) => {
                let names: Vec<String> = disks.iter().map(|&d| disk_name(d)).collect();
                unavailable.push((
                    Some(shown.clone()),
                    format!(
                        "{shown}: its volume lies on {}: each disk is shown for reference, \
                         without a cross-check against iocap's figures",
                        names.join(", ")
                    ),
                ));
                for device in names {
                    match devices.iter_mut().find(|w| w.device == device) {
                        Some(w) => w.targets.push(shown.clone()),
                        None => devices.push(Watched {
                            device,
                            role: DeviceRole::Underlying,
                            targets: vec![shown.clone()],
                        }),
                    }
                }
            }
            Err(why) => unavailable.push((
                Some(shown.clone()),
                format!("{shown}: its disk's counters cannot be read here: {why}"),
            )),
        }
    }
    (devices, unavailable)
}

/// `device` holds the target `shown`: it is watched as a target device.
fn add_target(devices: &mut Vec<Watched>, device: &str, shown: &str) {
    match devices.iter_mut().find(|w| w.device == device) {
        Some(w) => {
            if !w.targets.iter().any(|p| p == shown) {
                w.targets.push(shown.to_string());
            }
            w.role = DeviceRole::Target;
        }
        None => devices.push(Watched {
            device: device.to_string(),
            role: DeviceRole::Target,
            targets: vec![shown.to_string()],
        }),
    }
}

/// The sampler of `names`, or why the counters cannot be read.
#[cfg(not(windows))]
fn open_sampler(names: &[String]) -> Result<EdgeSampler<SystemSource>, String> {
    EdgeSampler::new(names).map_err(|e| format!("cannot read {SOURCE}: {e}"))
}

/// The sampler of the disks `names` (`PhysicalDrive2`), or why their counters cannot be read.
#[cfg(windows)]
fn open_sampler(names: &[String]) -> Result<EdgeSampler<SystemSource>, String> {
    let disks = names
        .iter()
        .filter_map(|n| iocap_monitor::perfmon::parse_disk(n))
        .collect();
    EdgeSampler::from_source(iocap_monitor::perfmon::system_disks(disks), names)
        .map_err(|e| e.to_string())
}

//! An executor that does no I/O: each test's result is made up from its spec by a model of a
//! device (a closure giving IOPS and median latency), with self-consistent figures
//! (`iocap_model::fixture`). It records what it was asked to run, and can fail or be
//! interrupted at a chosen test, so a flow's decisions are tested deterministically.

use std::path::{Path, PathBuf};

use anyhow::Result;
use iocap_engine::probe::RawSamples;
use iocap_model::fixture::{self, FixtureRun};
use iocap_model::{ConfigCheck, IoFault, JobSpec, TestResult};

use crate::executor::{CostPoints, CostRun, DeviceTimes, Executor, HostFacts, Probe, TimedRun};
use iocap_cost::WindowCpu;
use iocap_model::CacheMode;
use iocap_platform::procstat::CpuTimes;

/// What a modelled device does with one spec: (IOPS, median latency in µs).
pub type DeviceModel = Box<dyn Fn(&JobSpec) -> (f64, f64)>;

pub struct MockExecutor {
    model: DeviceModel,
    /// Every batch of specs run, in order.
    pub ran: Vec<Vec<JobSpec>>,
    /// The test (counted from 0 over all specs run) that ends with an I/O error.
    pub fail_at: Option<usize>,
    /// The test after which Ctrl-C is pressed (it is marked interrupted).
    pub interrupt_at: Option<usize>,
    /// Seconds of every pause asked for.
    pub paused_s: Vec<f64>,
    /// The progress lines said.
    pub said: Vec<String>,
    /// Paths that are devices, with their rotational flag.
    pub devices: Vec<(String, bool)>,
    /// The size every target has (the range a cache probe reads).
    pub range_bytes: u64,
    /// What `mem_available_bytes` answers (the cost flow skips cache-hit points that do not
    /// fit in half of it).
    pub mem_available: Option<u64>,
    /// Whether it lends cost points (an MPI job's executor does not).
    pub lends_cost_points: bool,
    /// Tests timed in the device: `None` lends none (an MPI job's executor); `Some(Ok(f))`
    /// gives the device `f` of each request's time (as many requests as I/Os); `Some(Err(why))`
    /// refuses, as a host that cannot record its block layer does.
    pub device_time: Option<std::result::Result<f64, String>>,
    interrupted: bool,
    tests: usize,
}

impl MockExecutor {
    /// A device that gives `model(spec)`.
    pub fn new(model: impl Fn(&JobSpec) -> (f64, f64) + 'static) -> Self {
        Self {
            model: Box::new(model),
            ran: Vec::new(),
            fail_at: None,
            interrupt_at: None,
            paused_s: Vec::new(),
            said: Vec::new(),
            devices: Vec::new(),
            range_bytes: 1 << 30,
            mem_available: Some(16 << 30),
            lends_cost_points: true,
            device_time: None,
            interrupted: false,
            tests: 0,
        }
    }

    /// A stop asked for now, as Ctrl-C between tests (in a pause) asks for one.
    pub fn interrupt(&mut self) {
        self.interrupted = true;
    }

    /// A device whose IOPS grow with the queue depth up to `max_iops` at `knee_qd`, then stay;
    /// the latency follows Little's law, `qd / IOPS`.
    pub fn knee(max_iops: f64, knee_qd: u32) -> Self {
        Self::new(move |s| {
            let qd = f64::from(s.qd.max(1) * s.threads.max(1));
            let iops = max_iops * (qd / f64::from(knee_qd)).min(1.0);
            let iops = s.rate_iops.map_or(iops, |r| iops.min(r));
            (iops, qd / iops * 1e6)
        })
    }

    /// The names of the tests run, in order.
    pub fn names(&self) -> Vec<String> {
        self.ran.iter().flatten().map(|s| s.name.clone()).collect()
    }

    fn result(&mut self, spec: &JobSpec) -> TestResult {
        let (iops, p50_us) = (self.model)(spec);
        let run = fixture::run(&FixtureRun {
            targets: spec.targets.iter().map(|t| t.path.clone()).collect(),
            iops,
            p50_us,
            bs_bytes: spec.bs_bytes,
            rw: spec.rw,
            duration_s: spec.duration_s.ceil().max(1.0) as u32,
            salt: self.tests as u64,
            ..FixtureRun::default()
        });
        let mut t = run
            .tests
            .into_iter()
            .next()
            .expect("a fixture run has a test");
        t.name = spec.name.clone();
        t.spec = spec.clone();
        for x in &mut t.targets {
            x.device = None;
        }
        if self.fail_at == Some(self.tests) {
            t.error = Some(IoFault {
                op: iocap_model::FaultOp::Read,
                path: t
                    .targets
                    .first()
                    .map_or_else(String::new, |x| x.path.clone()),
                offset_bytes: 8192,
                len_bytes: spec.bs_bytes,
                errno: 5,
                message: "Input/output error (os error 5)".into(),
            });
        }
        if self.interrupt_at == Some(self.tests) {
            t.interrupted = true;
            self.interrupted = true;
        }
        self.tests += 1;
        t
    }
}

impl Executor for MockExecutor {
    fn run(&mut self, specs: &[JobSpec]) -> Result<Vec<TestResult>> {
        for s in specs {
            s.validate()?;
        }
        self.ran.push(specs.to_vec());
        Ok(specs.iter().map(|s| self.result(s)).collect())
    }

    fn interrupted(&self) -> bool {
        self.interrupted
    }

    fn pause(&mut self, secs: f64) -> bool {
        self.paused_s.push(secs);
        self.interrupted
    }

    fn say(&mut self, line: &str) {
        self.said.push(line.to_string());
    }

    fn facts(&self) -> &dyn HostFacts {
        self
    }

    fn probe(&mut self) -> &mut dyn Probe {
        self
    }

    fn cost_points(&mut self) -> Option<&mut dyn CostPoints> {
        if self.lends_cost_points {
            Some(self)
        } else {
            None
        }
    }

    fn device_times(&mut self) -> Option<&mut dyn DeviceTimes> {
        match self.device_time {
            Some(_) => Some(self),
            None => None,
        }
    }
}

impl DeviceTimes for MockExecutor {
    /// A test as the model says, the device given the mock's share of its mean latency.
    fn timed_run(&mut self, spec: &JobSpec) -> Result<std::result::Result<TimedRun, String>> {
        let share = match self.device_time.clone() {
            Some(Ok(f)) => f,
            Some(Err(why)) => return Ok(Err(why)),
            None => return Ok(Err("lends no device times".into())),
        };
        spec.validate()?;
        self.ran.push(vec![spec.clone()]);
        let result = self.result(spec);
        let mean = result.total.lat_us.as_ref().map(|l| l.mean * share);
        Ok(Ok(TimedRun {
            requests: result.total.ios,
            device_us_mean: mean,
            result,
        }))
    }
}

impl HostFacts for MockExecutor {
    fn is_device(&self, path: &str) -> bool {
        self.devices.iter().any(|(d, _)| d == path)
    }

    fn rotational(&self, device: &str) -> Option<bool> {
        self.devices
            .iter()
            .find(|(d, _)| d.ends_with(device))
            .map(|(_, r)| *r)
    }

    fn config(&self, _paths: &[PathBuf]) -> Vec<ConfigCheck> {
        Vec::new()
    }

    fn free_bytes(&self, _dir: &Path) -> Option<u64> {
        Some(1 << 40)
    }

    fn file_len(&self, _path: &Path) -> Option<u64> {
        Some(self.range_bytes)
    }

    fn mem_available_bytes(&self) -> Option<u64> {
        self.mem_available
    }
}

impl Probe for MockExecutor {
    fn range(&mut self, _spec: &JobSpec) -> Result<u64> {
        Ok(self.range_bytes)
    }

    fn warm(&mut self, _spec: &JobSpec, bytes: u64) -> Result<Option<f64>> {
        Ok((!self.interrupted).then_some(bytes as f64 / 2e9))
    }

    fn read_after_write(
        &mut self,
        _spec: &JobSpec,
        samples: u32,
        _max_s: f64,
    ) -> Result<std::result::Result<RawSamples, String>> {
        let n = samples as usize;
        Ok(Ok(RawSamples {
            write_ns: vec![20_000; n],
            fresh_read_ns: vec![80_000; n],
            old_read_ns: vec![80_000; n],
        }))
    }
}

impl CostPoints for MockExecutor {
    /// A point as the model says, whose system CPU is 10 µs per I/O (in 100 Hz ticks over the
    /// test's time), every page of a hit point cached and none of a miss point's.
    fn cost_point(&mut self, spec: &JobSpec, cache: CacheMode, _range: u64) -> Result<CostRun> {
        spec.validate()?;
        self.ran.push(vec![spec.clone()]);
        let result = self.result(spec);
        let ios = result.total.iops * result.duration_s;
        let busy_ticks = (ios * 10e-6 * 100.0).round() as u64;
        let cpu = Some(WindowCpu {
            span_s: result.duration_s,
            delta: CpuTimes {
                system: busy_ticks,
                idle: 100,
                ..CpuTimes::default()
            },
        });
        let resident_pct = match cache {
            CacheMode::Hit => Some(100.0),
            CacheMode::Miss => Some(0.0),
            CacheMode::Direct => None,
        };
        Ok(CostRun {
            result,
            cpu,
            resident_pct,
        })
    }
}

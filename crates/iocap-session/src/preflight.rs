//! Preflight: what a database will do to its volumes (page reads raised to the knee, checkpoint
//! writes, durable log writes at queue depth 1, read-ahead scans, a backup that reads data
//! while writing the backup volume), answered with a capacity table and a verdict per line.
//! Unless told the file size or the cache, a short cache scan sizes the files first.

use std::collections::HashMap;

use anyhow::{bail, Context, Result};
use iocap_assess::{ramp, DeviceClass, SaturateConfig};
use iocap_model::{CurvePoint, JobSpec, Role, TargetSpec};

use crate::cachescan::preflight_scan;
use crate::executor::HostFacts;
pub use crate::preflight_config::{PreflightConfig, Timing};
use crate::session::Session;

/// Every workload of a preflight, each with its role, placed and timed.
struct Workloads {
    read: (Role, JobSpec),
    write: (Role, JobSpec),
    log: (Role, JobSpec),
    scan: (Role, JobSpec),
    backup_read: (Role, JobSpec),
    backup_write: (Role, JobSpec),
    temp: Option<(Role, JobSpec)>,
}

impl PreflightConfig {
    /// The profile's workload `key`, placed on its role's target with this mode's timing;
    /// `sized`: the files were sized by a scan, so each is made (or grown to) `size`.
    fn spec(
        &self,
        exec_is_device: &dyn Fn(&str) -> bool,
        key: &str,
        (duration, warmup): (f64, f64),
        (size, sized): (u64, bool),
    ) -> Result<(Role, JobSpec)> {
        let p = &self.profile;
        let w = p.workloads.iter().find(|w| w.key == key).with_context(|| {
            match p.family == iocap_plan::CAPTURED_FAMILY {
                // a profile written from a trace holds the trace's own workloads, not the seven
                // capacity lines preflight measures
                true => format!(
                    "profile {} was written from a trace and has no workload '{key}': measure it \
                     with `iocap suite run profile:FILE`, which runs its own workloads",
                    p.name
                ),
                false => format!("profile {} has no workload '{key}'", p.name),
            }
        })?;
        let mut s = w.spec.clone();
        s.name = w.title.clone();
        let path = (self.role_target)(w.role);
        // sized by a cache scan: the scanned data file (ours) is extended to the size
        let device = exec_is_device(&path);
        s.targets = vec![TargetSpec {
            size_bytes: (sized && !device).then_some(size),
            ..TargetSpec::new(path)
        }];
        s.size_bytes = size;
        s.duration_s = duration;
        s.warmup_s = warmup;
        s.cooldown_s = 0.0;
        // a capacity figure is the sustained rate: checkpoint bursts belong to suites
        s.burst = None;
        s.allow_overwrite = self.allow_overwrite;
        (self.tune)(&mut s);
        s.validate().with_context(|| format!("workload {key}"))?;
        Ok((w.role, s))
    }

    /// Every workload, placed and timed; refuses a backup that would read and write one file.
    fn workloads(&self, is_device: &dyn Fn(&str) -> bool, size: (u64, bool)) -> Result<Workloads> {
        let t = &self.timing;
        let step = (t.step_s, t.step_warmup_s);
        let test = (t.test_s, t.test_warmup_s);
        let w = Workloads {
            read: self.spec(is_device, "data-random-read", step, size)?,
            write: self.spec(is_device, "data-checkpoint-write", test, size)?,
            log: self.spec(is_device, "log-write", test, size)?,
            scan: self.spec(is_device, "read-ahead-1m", test, size)?,
            backup_read: self.spec(is_device, "backup-read", test, size)?,
            backup_write: self.spec(is_device, "backup-write", test, size)?,
            temp: if self.quick {
                None
            } else {
                Some(self.spec(is_device, "temp", test, size)?)
            },
        };
        if w.backup_read.1.targets[0].path == w.backup_write.1.targets[0].path {
            bail!("the backup would read and write the same file");
        }
        Ok(w)
    }

    /// Checks every workload before the first runs: a typo must not cost a scan.
    pub fn check(&self, exec: &dyn HostFacts) -> Result<()> {
        let size = self.size_bytes.unwrap_or(self.default_size_bytes);
        self.workloads(&|p| exec.is_device(p), (size, false))
            .map(|_| ())
    }
}

/// Runs `specs` together (`--repeat` times) with their roles; the median run's indexes.
fn measure(s: &mut Session, specs: &[(Role, JobSpec)]) -> Result<Vec<u32>> {
    let names: Vec<String> = specs
        .iter()
        .map(|(r, sp)| format!("{r}: {}", sp.name))
        .collect();
    s.exec.label(&names.join(" + "));
    let with_roles: Vec<(Option<Role>, JobSpec)> =
        specs.iter().map(|(r, sp)| (Some(*r), sp.clone())).collect();
    s.measure(&with_roles, None)
}

/// The page reads raised to the knee: the curve's points.
fn read_ramp(
    s: &mut Session,
    read: &(Role, JobSpec),
    cfg: &SaturateConfig,
) -> Result<Vec<CurvePoint>> {
    ramp(cfg, |qd| {
        let spec = JobSpec {
            name: format!("{} (qd {qd})", read.1.name),
            qd,
            ..read.1.clone()
        };
        let at = measure(s, &[(read.0, spec)])?[0];
        let p = CurvePoint::of(at, qd, None, &s.run.tests[at as usize]);
        anyhow::Ok((p, s.stopped()))
    })
}

/// The other workloads, each alone, the backup as read and write together: the index of
/// each one's median test, by key (`write`, `log`, `scan`, `temp`, `backup`, `backup-read`).
fn other_tests(s: &mut Session, w: &Workloads) -> Result<HashMap<&'static str, u32>> {
    let mut idx = HashMap::new();
    for (key, (role, spec)) in [("write", &w.write), ("log", &w.log), ("scan", &w.scan)]
        .into_iter()
        .chain(w.temp.as_ref().map(|t| ("temp", t)))
    {
        if s.stopped() {
            return Ok(idx);
        }
        let at = measure(s, &[(*role, spec.clone())])?;
        idx.insert(key, at[0]);
    }
    if !s.stopped() {
        let pair = [w.backup_read.clone(), w.backup_write.clone()];
        let at = measure(s, &pair)?;
        for ((role, _), i) in pair.iter().zip(at) {
            idx.insert(
                if *role == Role::Backup {
                    "backup"
                } else {
                    "backup-read"
                },
                i,
            );
        }
    }
    Ok(idx)
}

/// The whole preflight into the session's run: the capacity table in `run.preflight`, the
/// read curve in `run.saturation`, the scan (if run) in `run.cachescan`.
pub fn preflight(s: &mut Session, c: &PreflightConfig) -> Result<()> {
    c.check(s.exec.facts())?;
    // 0. unless told the size or the cache, find the caches and size the files past them
    let sizing = if c.size_bytes.is_none() && c.cache_size_bytes.is_none() {
        Some(preflight_scan(s, &(c.role_target)(Role::Data), &c.scan)?)
    } else {
        None
    };
    if s.exec.interrupted() {
        return Ok(());
    }
    let size = match &sizing {
        Some(z) => (z.bytes, true),
        None => (c.size_bytes.unwrap_or(c.default_size_bytes), false),
    };
    let w = c.workloads(&|p| s.exec.facts().is_device(p), size)?;
    // 1. page reads, raised to the knee
    let flash_target = c.guidelines.for_class(DeviceClass::Flash);
    let cfg = SaturateConfig {
        latency_target_us: Some(flash_target.data_read_p99.pass_us()),
        max_qd: if c.quick { 64 } else { 256 },
        ..SaturateConfig::default()
    };
    let steps = read_ramp(s, &w.read, &cfg)?;
    // 2. to 5. the other workloads
    let idx = other_tests(s, &w)?;
    crate::preflight_judge::judge(s, c, &steps, &idx, cfg, sizing);
    Ok(())
}

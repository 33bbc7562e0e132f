//! The executor that runs tests on this machine's storage through `iocap-engine`: targets are
//! prepared (test files created with a progress bar, foreign data refused), block-size mixes
//! fitted to the device, the test run with a live line, and the OS's disk counters put beside
//! iocap's figures.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use iocap_audit::{AuditOptions, Root};
use iocap_engine::probe::{self, RawSamples};
use iocap_engine::{prepare_targets, FillObserver, PreparedTarget, RunObserver, TargetError};
use iocap_model::{format_bytes, BsWeight, ConfigCheck, JobSpec, TestResult};

use crate::executor::{CostRun, Executor};
use crate::oscounters::DiskWatch;
use iocap_model::CacheMode;

/// What the user sees while tests run: the caller's (a terminal's bars and lines, or nothing).
pub trait Progress {
    /// An observer for the creation of one test file.
    fn fill(&mut self) -> Box<dyn FillObserver>;
    /// The live line of one test, cleared when dropped.
    fn live(&mut self) -> Box<dyn RunObserver>;
    /// Names the test that the next live lines are about.
    fn label(&mut self, _what: &str) {}
    /// A line of progress.
    fn say(&mut self, _line: &str) {}
}

/// Runs tests on this machine. `stop` is the flag Ctrl-C sets: a test stops issuing, drains
/// and reports what it measured.
pub struct EngineExecutor {
    progress: Box<dyn Progress>,
    stop: &'static AtomicBool,
    /// What set `stop`, by name, as the front end's signal handler knows it.
    named: fn() -> Option<&'static str>,
}

/// The note of each spec whose block-size mix was fitted to its device, `None` for the others.
type FitNotes = Vec<Option<String>>;

/// Reads of the cache probe's warming pass.
const WARM_BS: u64 = 1 << 20;

impl EngineExecutor {
    pub fn new(progress: Box<dyn Progress>, stop: &'static AtomicBool) -> Self {
        Self {
            progress,
            stop,
            named: || None,
        }
    }

    /// Names what set the stop flag (the signal or console event the front end's handler
    /// recorded), for [`Executor::stopped_by`].
    pub fn naming_stops(mut self, named: fn() -> Option<&'static str>) -> Self {
        self.named = named;
        self
    }

    /// A progress observer for the creation of a test file.
    pub fn fill_bar(&mut self) -> Box<dyn FillObserver> {
        self.progress.fill()
    }

    /// The flag Ctrl-C sets.
    pub fn stop_flag(&self) -> &'static AtomicBool {
        self.stop
    }

    fn prepare_one(&mut self, spec: &JobSpec) -> Result<PreparedTarget> {
        spec.validate()?;
        let mut bar = self.progress.fill();
        let mut t = prepare_targets(spec, bar.as_mut(), self.stop)?;
        Ok(t.remove(0))
    }

    /// Prepares each spec's targets, fitting its block-size mix to their logical block; the
    /// note of each fitted mix.
    fn prepare(&mut self, specs: &mut [JobSpec]) -> Result<(Vec<Vec<PreparedTarget>>, FitNotes)> {
        let mut prepared = Vec::with_capacity(specs.len());
        let mut notes = Vec::with_capacity(specs.len());
        for spec in specs {
            spec.validate()?;
            // prepare with the largest size alone: the mix is checked once the alignment is known
            let probe = JobSpec {
                bs_split: Vec::new(),
                ..spec.clone()
            };
            let mut bar = self.progress.fill();
            let targets = prepare_targets(&probe, bar.as_mut(), self.stop)?;
            let note = fit_mix(spec, &targets).map(|(mix, note)| {
                spec.bs_bytes = mix
                    .iter()
                    .map(|b| b.bs_bytes)
                    .max()
                    .unwrap_or(spec.bs_bytes);
                spec.bs_split = mix;
                note
            });
            spec.validate()?;
            notes.push(note);
            prepared.push(targets);
        }
        Ok((prepared, notes))
    }
}

/// Tests whose targets are open and filled, ready to start together.
pub struct Prepared {
    specs: Vec<JobSpec>,
    targets: Vec<Vec<PreparedTarget>>,
    notes: FitNotes,
}

impl EngineExecutor {
    /// Opens (creating and filling where needed) the targets of `specs`, fitting mixes.
    pub fn prepare_group(&mut self, specs: &[JobSpec]) -> Result<Prepared> {
        let mut specs = specs.to_vec();
        let (targets, notes) = self.prepare(&mut specs)?;
        Ok(Prepared {
            specs,
            targets,
            notes,
        })
    }

    /// Runs prepared tests together with the live line and the OS counters.
    pub fn run_prepared(&mut self, p: Prepared) -> Result<Vec<TestResult>> {
        let members: Vec<(&JobSpec, &[PreparedTarget])> = p
            .specs
            .iter()
            .zip(&p.targets)
            .map(|(s, t)| (s, t.as_slice()))
            .collect();
        let all: Vec<&PreparedTarget> = p.targets.iter().flatten().collect();
        let mut watch = DiskWatch::new(&all, self.progress.live());
        let out = iocap_engine::run_group(&members, self.stop, &mut watch)
            .context("the test could not run")?;
        watch.line = None;
        let mut results: Vec<TestResult> = out.into_iter().map(|o| o.result).collect();
        watch.attach(&mut results.iter_mut().collect::<Vec<_>>());
        for (r, note) in results.iter_mut().zip(p.notes) {
            if let Some(n) = note {
                r.warnings.push(n);
            }
        }
        Ok(results)
    }
}

impl Executor for EngineExecutor {
    fn cost_point(&mut self, spec: &JobSpec, cache: CacheMode, range: u64) -> Result<CostRun> {
        let mut path = PathBuf::from(&spec.targets[0].path);
        if path.is_dir() {
            path.push(iocap_model::DEFAULT_TARGET);
        }
        if cache == CacheMode::Hit {
            iocap_cost::cache::warm(&path, range)
                .context("cannot read the test file into the cache")?;
        }
        let targets = prepare_targets(spec, self.fill_bar().as_mut(), self.stop)?;
        if cache == CacheMode::Miss {
            iocap_cost::cache::drop_pages(&path)
                .context("cannot drop the test file's cached pages")?;
        }
        let mut quiet = iocap_engine::Quiet;
        let mut watch = iocap_cost::StatWatch::new(&mut quiet);
        let out = iocap_engine::run_test(spec, &targets, self.stop, &mut watch)
            .context("the test could not run")?;
        let cpu = watch.window();
        drop(targets);
        let resident_pct = (cache != CacheMode::Direct)
            .then(|| iocap_cost::cache::resident_pct(&path, range).ok())
            .flatten();
        if spec.writes() {
            iocap_cost::cache::flush(&path).context("cannot fsync the test file")?;
        }
        Ok(CostRun {
            result: out.result,
            cpu,
            resident_pct,
        })
    }

    fn mem_available_bytes(&self) -> Option<u64> {
        iocap_platform::host::mem_available_bytes()
    }

    /// Block-size mixes are fitted to the targets' logical block (see [`fit_mix`]), with a
    /// warning.
    fn run(&mut self, specs: &[JobSpec]) -> Result<Vec<TestResult>> {
        let prepared = self.prepare_group(specs)?;
        self.run_prepared(prepared)
    }

    fn interrupted(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    fn stopped_by(&self) -> Option<String> {
        self.interrupted()
            .then(|| (self.named)().unwrap_or("stop").to_string())
    }

    fn pause(&mut self, secs: f64) -> bool {
        let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs.max(0.0));
        while std::time::Instant::now() < end {
            if self.interrupted() {
                return true;
            }
            let left = end.saturating_duration_since(std::time::Instant::now());
            std::thread::sleep(left.min(std::time::Duration::from_millis(100)));
        }
        self.interrupted()
    }

    fn label(&mut self, what: &str) {
        self.progress.label(what);
    }

    fn say(&mut self, line: &str) {
        self.progress.say(line);
    }

    fn is_device(&self, path: &str) -> bool {
        if cfg!(windows) {
            use iocap_platform::winstruct::{device_path, DevicePath};
            return device_path(path) != DevicePath::NotADevice;
        }
        std::fs::metadata(path).is_ok_and(|m| !m.is_file())
    }

    fn rotational(&self, device: &str) -> Option<bool> {
        iocap_platform::devinfo::rotational(device)
    }

    fn config(&self, paths: &[PathBuf]) -> Vec<ConfigCheck> {
        if cfg!(not(target_os = "linux")) {
            // the host audit reads Linux's /sys and /proc
            return vec![];
        }
        let report = iocap_audit::audit(&Root::system(), paths, &AuditOptions::default());
        report
            .checks
            .into_iter()
            .map(|c| ConfigCheck {
                id: c.id,
                severity: c.severity,
                subject: c.subject,
                evidence: c.evidence,
            })
            .collect()
    }

    fn free_bytes(&self, dir: &Path) -> Option<u64> {
        iocap_platform::devinfo::free_bytes(dir)
    }

    fn file_len(&self, path: &Path) -> Option<u64> {
        std::fs::metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
    }

    fn range(&mut self, spec: &JobSpec) -> Result<u64> {
        Ok(self.prepare_one(spec)?.range_bytes)
    }

    fn warm(&mut self, spec: &JobSpec, bytes: u64) -> Result<Option<f64>> {
        let t = self.prepare_one(spec)?;
        let w = probe::warm(&t, bytes, WARM_BS, self.stop)?;
        Ok((!w.interrupted).then_some(w.seconds))
    }

    fn read_after_write(
        &mut self,
        spec: &JobSpec,
        samples: u32,
        max_s: f64,
    ) -> Result<std::result::Result<RawSamples, String>> {
        let t = match self.prepare_one(spec) {
            Ok(t) => t,
            Err(e)
                if e.downcast_ref::<TargetError>()
                    .is_some_and(|e| matches!(e, TargetError::Refused(_))) =>
            {
                return Ok(Err(format!("the read-after-write check did not run: {e}")))
            }
            Err(e) => return Err(e),
        };
        let s = probe::read_after_write(&t, spec.bs_bytes, samples, max_s, self.stop)?;
        Ok(Ok(s))
    }
}

/// A block-size mix that `targets` cannot take with O_DIRECT (a profile's 512 B log writes on a
/// 4 KiB-sector device), refitted as the database itself would write there: each size rounded
/// up to the logical block, the shares of sizes that become equal added. `None` when it fits.
fn fit_mix(spec: &JobSpec, targets: &[PreparedTarget]) -> Option<(Vec<BsWeight>, String)> {
    let lb = targets
        .iter()
        .filter(|t| t.direct)
        .map(|t| t.logical_block)
        .max()?;
    fit_mix_to(&spec.bs_split, lb)
}

fn fit_mix_to(split: &[BsWeight], lb: u64) -> Option<(Vec<BsWeight>, String)> {
    if lb == 0 || split.iter().all(|b| b.bs_bytes % lb == 0) {
        return None;
    }
    let mut fitted: Vec<BsWeight> = Vec::new();
    for b in split {
        let size = b.bs_bytes.div_ceil(lb) * lb;
        match fitted.iter_mut().find(|f| f.bs_bytes == size) {
            // cannot overflow: parse_bs_split and validate cap the total at u32::MAX
            Some(f) => f.weight = f.weight.saturating_add(b.weight),
            None => fitted.push(BsWeight {
                bs_bytes: size,
                weight: b.weight,
            }),
        }
    }
    let small: Vec<String> = split
        .iter()
        .filter(|b| b.bs_bytes % lb != 0)
        .map(|b| format_bytes(b.bs_bytes))
        .collect();
    Some((
        fitted,
        format!(
            "the mix's {} I/Os were issued rounded up to {}: the target takes O_DIRECT I/O only \
             in multiples of its logical block, as the database itself would find",
            small.join(", "),
            format_bytes(lb)
        ),
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn merging_huge_shares_does_not_overflow() {
        // found by reasoning over the fuzzed parser: two shares near u32::MAX merged into one
        // size used to overflow (a panic in debug builds)
        let mix = [
            iocap_model::BsWeight {
                bs_bytes: 512,
                weight: u32::MAX,
            },
            iocap_model::BsWeight {
                bs_bytes: 4096,
                weight: 1,
            },
        ];
        let (fitted, _) = super::fit_mix_to(&mix, 4096).unwrap();
        assert_eq!(fitted.len(), 1);
        assert!(iocap_model::parse_bs_split("512:4294967295,4K:1").is_err());
    }

    #[test]
    fn a_log_mix_is_fitted_to_a_4k_sector_device() {
        let mix = iocap_model::parse_bs_split("512:10,4K:30,8K:20,60K:40").unwrap();
        assert!(
            super::fit_mix_to(&mix, 512).is_none(),
            "fits 512 B sectors as it is"
        );
        let (fitted, note) = super::fit_mix_to(&mix, 4096).unwrap();
        assert_eq!(
            fitted,
            iocap_model::parse_bs_split("4K:40,8K:20,60K:40").unwrap(),
            "512 B joins the 4 KiB share"
        );
        assert!(note.contains("512") && note.contains("4K"), "{note}");
    }
}

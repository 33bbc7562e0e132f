//! The executor that runs tests on this machine's storage through `iocap-engine`: targets are
//! prepared (test files created with a progress bar, foreign data refused), block-size mixes
//! fitted to the device, the test run with a live line, and the OS's disk counters put beside
//! iocap's figures.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use iocap_engine::{prepare_targets, FillObserver, PreparedTarget, RunObserver};
use iocap_model::{format_bytes, BsWeight, JobSpec, TestResult};

use crate::executor::{CostPoints, DeviceTimes, Executor, HostFacts, Probe};
use crate::oscounters::DiskWatch;

mod devtime;
mod lends;

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

    fn facts(&self) -> &dyn HostFacts {
        self
    }

    fn probe(&mut self) -> &mut dyn Probe {
        self
    }

    fn cost_points(&mut self) -> Option<&mut dyn CostPoints> {
        Some(self)
    }

    fn device_times(&mut self) -> Option<&mut dyn DeviceTimes> {
        Some(self)
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

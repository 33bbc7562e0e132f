//! Suites: a list of tests run one after another, each handed to the caller (to print and save)
//! as soon as it finishes, so a suite stopped by Ctrl-C, a fault or a kill keeps every test it
//! finished and can be resumed where it stopped: a test whose every workload is already in
//! the run is skipped.

use std::collections::HashSet;

use anyhow::{bail, Context, Result};
use iocap_model::Payload;
use iocap_model::{JobSpec, Role, RunCommand, RunResult, SuiteInfo, TargetSpec};
use iocap_plan::{PlannedTest, Suite};

use crate::session::{new_run, Session};
use crate::RolePlaces;

/// One test of a suite: its workloads, each with its role, run together.
pub struct SuiteStep {
    pub name: String,
    pub specs: Vec<(Role, JobSpec)>,
}

/// A suite, planned: its name, its tests and the pause between them.
pub struct SuiteRun {
    pub name: String,
    pub steps: Vec<SuiteStep>,
    pub pause_s: f64,
}

/// How a suite's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuiteEnd {
    /// Every test ran (or had run before a resume).
    Finished,
    /// A test hit an I/O error.
    Error,
    /// Ctrl-C, during a test or a pause.
    Interrupted,
}

/// What the command line changes in every test of a suite.
pub struct SuiteOverrides<'a> {
    /// Where each role's test file goes.
    pub places: RolePlaces,
    pub size_bytes: Option<u64>,
    /// Measured time of every test (its warm-up no longer than that).
    pub duration_s: Option<f64>,
    /// Pause between tests instead of the suite's.
    pub pause_s: Option<f64>,
    pub allow_overwrite: bool,
    /// Applied to every spec last (`--until-stable`).
    pub tune: &'a dyn Fn(&mut JobSpec),
}

impl SuiteOverrides<'_> {
    /// The specs of one planned test, placed, with the overrides applied.
    fn specs(&self, t: &PlannedTest) -> Vec<(Role, JobSpec)> {
        t.workloads
            .iter()
            .map(|w| {
                let mut spec = w.spec.clone();
                spec.name = if t.workloads.len() > 1 {
                    format!("{} [{}]", t.name, w.role)
                } else {
                    t.name.clone()
                };
                spec.targets = vec![TargetSpec::new(self.places.target(w.role))];
                if let Some(size) = self.size_bytes {
                    spec.size_bytes = size;
                }
                if let Some(d) = self.duration_s {
                    spec.duration_s = d;
                    spec.warmup_s = spec.warmup_s.min(d);
                }
                spec.allow_overwrite = self.allow_overwrite;
                (self.tune)(&mut spec);
                (w.role, spec)
            })
            .collect()
    }
}

impl SuiteRun {
    /// `suite` planned with `over`, every test checked before the first runs: a typo in test
    /// 40 must not surface an hour in.
    pub fn plan(suite: &Suite, over: &SuiteOverrides) -> Result<SuiteRun> {
        let steps: Vec<SuiteStep> = suite
            .tests
            .iter()
            .map(|t| SuiteStep {
                name: t.name.clone(),
                specs: over.specs(t),
            })
            .collect();
        for step in &steps {
            for (_, spec) in &step.specs {
                spec.validate()
                    .with_context(|| format!("suite {}: test {}", suite.name, step.name))?;
            }
        }
        Ok(SuiteRun {
            name: suite.name.clone(),
            steps,
            pause_s: over.pause_s.unwrap_or(suite.pause_s),
        })
    }

    /// A new run of this suite, none of its tests run yet.
    pub fn new_run(&self) -> RunResult {
        let mut r = new_run(RunCommand::Suite);
        r.set(Payload::Suite(SuiteInfo {
            name: self.name.clone(),
            planned: self.steps.len() as u32,
        }));
        r
    }

    /// `run`, a stopped run to continue, if it is a run of this suite.
    pub fn resumable(&self, run: RunResult) -> Result<RunResult> {
        match &run.suite {
            Some(info) if info.name == self.name => Ok(run),
            _ => bail!("run {} is not a run of suite {}", run.run_id, self.name),
        }
    }

    /// Runs the tests the session's run does not hold yet, in order. After each, `done` gets
    /// the run and the index of the test's first result.
    pub fn run(
        &self,
        s: &mut Session,
        mut done: impl FnMut(&RunResult, usize) -> Result<()>,
    ) -> Result<SuiteEnd> {
        let had: HashSet<String> = s.run.tests.iter().map(|t| t.name.clone()).collect();
        // a resumed run is no longer the interrupted one it was
        s.run.interrupted_by = None;
        let mut ran = 0;
        for (i, step) in self.steps.iter().enumerate() {
            if step.specs.iter().all(|(_, sp)| had.contains(&sp.name)) {
                continue;
            }
            if ran > 0 && self.pause_s > 0.0 {
                if ran == 1 {
                    s.exec.say(&format!(
                        "pausing {} s between tests so write caches drain (arrays with large \
                         caches may need a minute: --pause 60s)",
                        self.pause_s
                    ));
                }
                if s.exec.pause(self.pause_s) {
                    return interrupted(s, &mut done);
                }
            }
            if s.exec.interrupted() {
                return interrupted(s, &mut done);
            }
            let n = self.steps.len();
            s.exec.say(&format!(
                "== {} test {}/{n}: {}",
                self.name,
                i + 1,
                step.name
            ));
            s.exec
                .label(&format!("{} (test {} of {n})", step.name, i + 1));
            let first_new = s.run.tests.len();
            let specs: Vec<(Option<Role>, JobSpec)> = step
                .specs
                .iter()
                .map(|(r, sp)| (Some(*r), sp.clone()))
                .collect();
            s.measure(&specs, Some(i as u32))?;
            s.run.repeats = iocap_assess::repeats(&s.run.tests);
            ran += 1;
            crate::config::record_config(s.exec.facts(), &mut s.run);
            s.run.interrupted_by = s.exec.stopped_by();
            done(&s.run, first_new)?;
            let new = &s.run.tests[first_new..];
            if new.iter().any(|r| r.error.is_some()) {
                return Ok(SuiteEnd::Error);
            }
            if new.iter().any(|r| r.interrupted) {
                return Ok(SuiteEnd::Interrupted);
            }
        }
        Ok(SuiteEnd::Finished)
    }
}

/// A stop between tests: the run records what interrupted it and `done` gets it once more
/// (no new test), so the saved run says so too.
fn interrupted(
    s: &mut Session,
    done: &mut impl FnMut(&RunResult, usize) -> Result<()>,
) -> Result<SuiteEnd> {
    s.run.interrupted_by = s.exec.stopped_by();
    done(&s.run, s.run.tests.len())?;
    Ok(SuiteEnd::Interrupted)
}

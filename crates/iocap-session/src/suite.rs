//! Suites: a list of tests run one after another, each handed to the caller (to print and save)
//! as soon as it finishes, so a suite stopped by Ctrl-C, a fault or a kill keeps every test it
//! finished and can be resumed where it stopped: a test whose every workload is already in
//! the run is skipped.

use std::collections::HashSet;

use anyhow::Result;
use iocap_model::{JobSpec, Role, RunResult};

use crate::session::Session;

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

impl SuiteRun {
    /// Runs the tests the session's run does not hold yet, in order. After each, `done` gets
    /// the run and the index of the test's first result.
    pub fn run(
        &self,
        s: &mut Session,
        mut done: impl FnMut(&RunResult, usize) -> Result<()>,
    ) -> Result<SuiteEnd> {
        let had: HashSet<String> = s.run.tests.iter().map(|t| t.name.clone()).collect();
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
                    return Ok(SuiteEnd::Interrupted);
                }
            }
            if s.exec.interrupted() {
                return Ok(SuiteEnd::Interrupted);
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
            crate::config::record_config(&*s.exec, &mut s.run);
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

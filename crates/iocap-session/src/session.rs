//! A session: one [`RunResult`] filled test by test through an [`Executor`], with `--repeat`
//! (every step run N times, the median run standing for it) and the closing steps every
//! command shares (device-class checks, the spread across repeats, the host's configuration).

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Result;
use iocap_model::{rfc3339_utc, JobSpec, Role, RunCommand, RunResult, TestResult};
use iocap_platform::host;

use crate::executor::Executor;

/// `YYYYMMDDTHHMMSS-xxxxxx`: the start second, then six hex digits whose top ten bits are the
/// millisecond, so runs started in the same second still sort by start, and whose low 14 bits
/// are random-ish, so two hosts starting in the same millisecond still differ.
fn run_id(now: SystemTime) -> String {
    let d = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let stamp = rfc3339_utc(d.as_secs()).replace(['-', ':'], "");
    let stamp = stamp.trim_end_matches('Z');
    let ms = u64::from(d.subsec_millis());
    let salt = (u64::from(d.subsec_nanos()) ^ (u64::from(std::process::id()) << 32))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        >> 50;
    format!("{stamp}-{:06x}", ms << 14 | salt)
}

/// Whether [`Session::repeated`] says `run 2 of 3` as each of several runs starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announce {
    EachRun,
    Quiet,
}

/// A new, empty run record of `command`, stamped with this host and the current time.
pub fn new_run(command: RunCommand) -> RunResult {
    let started = SystemTime::now();
    RunResult {
        iocap_version: env!("CARGO_PKG_VERSION").to_string(),
        run_id: run_id(started),
        started_at: rfc3339_utc(
            started
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs(),
        ),
        host: host::host_info(),
        tests: vec![],
        label: None,
        tags: vec![],
        note: None,
        command: Some(command),
        suite: None,
        saturation: None,
        scaleup: None,
        preflight: None,
        config: vec![],
        timer: Some(iocap_platform::clock::self_check(
            iocap_platform::clock::SELF_CHECK_NS,
        )),
        verify: None,
        cost: None,
        fsync: None,
        repeats: vec![],
        cachescan: None,
        workload: None,
        replay: None,
        interrupted_by: None,
        stored_bucket: None,
    }
}

/// The run whose IOPS, all its workloads together, are the median of `runs` (the lower middle
/// of an even count): what a repeated step stands for in a curve or a verdict.
pub fn median_run(runs: &[Vec<TestResult>]) -> usize {
    let iops = |r: &Vec<TestResult>| r.iter().map(|t| t.total.iops).sum::<f64>();
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| iops(&runs[a]).total_cmp(&iops(&runs[b])));
    order
        .get(runs.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0)
}

/// One run being filled through an executor.
pub struct Session<'a> {
    pub run: RunResult,
    pub exec: &'a mut dyn Executor,
    /// `--repeat`: runs of each step.
    pub repeat: u32,
    /// `--repeat-pause`: seconds before each run after the first.
    pub repeat_pause_s: f64,
}

impl<'a> Session<'a> {
    pub fn new(run: RunResult, exec: &'a mut dyn Executor) -> Self {
        Self {
            run,
            exec,
            repeat: 1,
            repeat_pause_s: 0.0,
        }
    }

    /// Sets `--repeat` and `--repeat-pause`.
    pub fn repeating(mut self, repeat: u32, pause_s: f64) -> Self {
        self.repeat = repeat.max(1);
        self.repeat_pause_s = pause_s;
        self
    }

    /// Runs `specs` together for runs `from` to `--repeat`, pausing `--repeat-pause` before
    /// each, and returns each run's results, numbered (`repeat`) when there are several. Stops
    /// early, keeping what ran, after an I/O error or Ctrl-C.
    pub fn repeated(
        &mut self,
        specs: &[JobSpec],
        from: u32,
        say: Announce,
    ) -> Result<Vec<Vec<TestResult>>> {
        let mut runs: Vec<Vec<TestResult>> = Vec::new();
        for i in from..=self.repeat {
            let failed = runs
                .last()
                .is_some_and(|r| r.iter().any(|t| t.error.is_some() || t.interrupted));
            let paused = i > 1 && self.repeat_pause_s > 0.0;
            if failed || (paused && self.exec.pause(self.repeat_pause_s)) {
                break;
            }
            if say == Announce::EachRun && self.repeat > 1 {
                self.exec.say(&format!("run {i} of {}", self.repeat));
            }
            let mut outs = self.exec.run(specs)?;
            for t in &mut outs {
                t.repeat = (self.repeat > 1).then_some(i);
            }
            runs.push(outs);
        }
        Ok(runs)
    }

    /// Runs `specs` together (`--repeat` times), adds every run's tests to the run, each with
    /// its role, the workloads of one run in one group when there are several (numbered
    /// `group`, or by the first test's index), and returns the indexes of the median run's
    /// tests: the figures a curve or a verdict is taken from.
    pub fn measure(
        &mut self,
        specs: &[(Option<Role>, JobSpec)],
        group: Option<u32>,
    ) -> Result<Vec<u32>> {
        let only: Vec<JobSpec> = specs.iter().map(|(_, s)| s.clone()).collect();
        let runs = self.repeated(&only, 1, Announce::EachRun)?;
        let median = median_run(&runs);
        let mut picked = Vec::new();
        for (k, outs) in runs.into_iter().enumerate() {
            let g = (outs.len() > 1).then_some(match group {
                Some(g) if self.repeat == 1 => g,
                _ => self.run.tests.len() as u32,
            });
            for ((role, _), mut r) in specs.iter().zip(outs) {
                r.role = *role;
                r.group = g;
                self.run.tests.push(r);
                if k == median {
                    picked.push((self.run.tests.len() - 1) as u32);
                }
            }
        }
        Ok(picked)
    }

    /// Ctrl-C, or a test of the run that failed or was interrupted: time to stop.
    pub fn stopped(&self) -> bool {
        self.exec.interrupted()
            || self
                .run
                .tests
                .iter()
                .any(|t| t.error.is_some() || t.interrupted)
    }

    /// The device-class check of every test, with the first qd-1 random read as the latency
    /// evidence.
    pub fn check_classes(&mut self) {
        let qd1 = self.run.tests.iter().find_map(crate::class::qd1_read_p50);
        let exec = self.exec.facts();
        for t in &mut self.run.tests {
            crate::class::check(exec, t, qd1, None);
        }
    }

    /// The device-class check of every test, each its own latency evidence (the tests of a
    /// `run` are one workload, not a ramp).
    pub fn check_each_class(&mut self) {
        let exec = self.exec.facts();
        for t in &mut self.run.tests {
            let qd1 = crate::class::qd1_read_p50(t);
            crate::class::check(exec, t, qd1, None);
        }
    }

    /// The closing steps: the spread across repeats, the host's configuration, and what
    /// interrupted the run, if anything did (its views then say it is partial); the run.
    pub fn finish(mut self) -> RunResult {
        self.run.interrupted_by = self.exec.stopped_by();
        self.run.repeats = iocap_assess::repeats(&self.run.tests);
        crate::config::record_config(self.exec.facts(), &mut self.run);
        self.run
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn run_ids_sort_by_time() {
        use std::time::{Duration, UNIX_EPOCH};
        let a = super::run_id(UNIX_EPOCH + Duration::from_secs(1_795_312_800));
        let b = super::run_id(UNIX_EPOCH + Duration::from_secs(1_795_312_801));
        assert!(a.starts_with("20261122T020000-"), "{a}");
        assert!(a < b);
        // within one second, by the millisecond
        let t = UNIX_EPOCH + Duration::from_secs(1_795_312_800);
        let ids: Vec<String> = [0, 1, 250, 999]
            .iter()
            .map(|ms| super::run_id(t + Duration::from_millis(*ms)))
            .collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    }
}

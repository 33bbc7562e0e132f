//! From a validated spec to a finished [`RunResult`]: prepare the targets (creating test files
//! with a progress bar), run the test with a live line, stamp the run with host and time.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use iocap_engine::{host, prepare_targets, run_test, TestOutcome};
use iocap_model::{rfc3339_utc, JobSpec, RunResult};

use super::progress::{FillBar, LiveLine};
use super::signals::INTERRUPTED;
use super::{print_stdout, Exit, OutputFormat};

pub struct Executed {
    pub run: RunResult,
    pub outcome: TestOutcome,
}

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

/// A new, empty run record of `command`, stamped with this host and the current time.
pub fn new_run(command: &str) -> RunResult {
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
        command: Some(command.to_string()),
        suite: None,
        saturation: None,
        scaleup: None,
        preflight: None,
    }
}

/// Prepares the targets of `spec` (creating test files with a progress bar) and runs it with a
/// live line.
pub fn run_one(spec: &JobSpec) -> Result<TestOutcome> {
    spec.validate()?;
    let targets = {
        let mut bar = FillBar::new();
        prepare_targets(spec, &mut bar, &INTERRUPTED)?
    };
    let mut line = LiveLine::new();
    let out =
        run_test(spec, &targets, &INTERRUPTED, &mut line).context("the test could not run")?;
    line.clear();
    Ok(out)
}

/// Runs several workloads at the same time, each on its own targets (one test of a suite, or
/// OLTP on the data file while the log is written); one spec is an ordinary test.
pub fn run_many(specs: &[JobSpec]) -> Result<Vec<TestOutcome>> {
    if specs.len() == 1 {
        return Ok(vec![run_one(&specs[0])?]);
    }
    let mut prepared = Vec::with_capacity(specs.len());
    for spec in specs {
        spec.validate()?;
        let mut bar = FillBar::new();
        prepared.push(prepare_targets(spec, &mut bar, &INTERRUPTED)?);
    }
    let members: Vec<(&JobSpec, &[iocap_engine::PreparedTarget])> = specs
        .iter()
        .zip(&prepared)
        .map(|(s, t)| (s, t.as_slice()))
        .collect();
    let mut line = LiveLine::new();
    let out = iocap_engine::run_group(&members, &INTERRUPTED, &mut line)
        .context("the workloads could not run")?;
    line.clear();
    Ok(out)
}

/// Prepares the targets of `spec` and runs it: a run of one test.
pub fn execute(spec: &JobSpec, command: &str) -> Result<Executed> {
    let mut run = new_run(command);
    let outcome = run_one(spec)?;
    run.tests.push(outcome.result.clone());
    Ok(Executed { run, outcome })
}

/// Prints the run in the chosen format and picks the exit code.
pub fn finish(run: &RunResult, output: OutputFormat, text: impl FnOnce() -> String) -> Exit {
    match output {
        OutputFormat::Text => print_stdout(&text()),
        OutputFormat::Json => print_stdout(&iocap_report::json(run)),
        OutputFormat::Csv => print_stdout(&iocap_report::csv::render(run)),
    }
    let t = run.tests.iter();
    if run.tests.iter().any(|t| t.error.is_some()) {
        if output != OutputFormat::Text {
            for e in run.tests.iter().filter_map(|t| t.error.as_ref()) {
                eprintln!("iocap: error: {e}");
            }
        }
        return Exit::Error;
    }
    if t.clone().any(|t| t.interrupted) {
        return Exit::Interrupted;
    }
    Exit::Ok
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

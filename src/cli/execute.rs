//! From a validated spec to a finished [`RunResult`]: prepare the targets (creating test files
//! with a progress bar), run the test with a live line, stamp the run with host and time.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use iocap_engine::{host, prepare_targets, run_test, PreparedTarget, TestOutcome};
use iocap_model::{format_bytes, rfc3339_utc, BsWeight, JobSpec, RunKind, RunResult};

use super::oscounters::DiskWatch;
use super::progress::FillBar;
use super::signals::{pause, INTERRUPTED};
use super::sure::SureArgs;
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
        config: vec![],
        timer: Some(iocap_engine::clock::self_check(
            iocap_engine::clock::SELF_CHECK_NS,
        )),
        verify: None,
        cost: None,
        fsync: None,
        repeats: vec![],
        cachescan: None,
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
    let mut watch = DiskWatch::new(&targets.iter().collect::<Vec<_>>());
    let mut out =
        run_test(spec, &targets, &INTERRUPTED, &mut watch).context("the test could not run")?;
    watch.line.clear();
    watch.attach(&mut [&mut out.result]);
    Ok(out)
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

/// Runs several workloads at the same time, each on its own targets (one test of a suite, or
/// OLTP on the data file while the log is written); one spec is an ordinary test. Block-size
/// mixes are fitted to the targets' logical block (see [`fit_mix`]), with a warning.
pub fn run_many(specs: &[JobSpec]) -> Result<Vec<TestOutcome>> {
    let mut specs = specs.to_vec();
    let mut prepared = Vec::with_capacity(specs.len());
    let mut notes = Vec::with_capacity(specs.len());
    for spec in &mut specs {
        spec.validate()?;
        // prepare with the largest size alone: the mix is checked once the alignment is known
        let probe = JobSpec {
            bs_split: Vec::new(),
            ..spec.clone()
        };
        let mut bar = FillBar::new();
        let targets = prepare_targets(&probe, &mut bar, &INTERRUPTED)?;
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
    let members: Vec<(&JobSpec, &[PreparedTarget])> = specs
        .iter()
        .zip(&prepared)
        .map(|(s, t)| (s, t.as_slice()))
        .collect();
    let mut watch = DiskWatch::new(&prepared.iter().flatten().collect::<Vec<_>>());
    let mut out = iocap_engine::run_group(&members, &INTERRUPTED, &mut watch)
        .context("the test could not run")?;
    watch.line.clear();
    watch.attach(&mut out.iter_mut().map(|o| &mut o.result).collect::<Vec<_>>());
    for (o, note) in out.iter_mut().zip(notes) {
        if let Some(n) = note {
            o.result.warnings.push(n);
        }
    }
    Ok(out)
}

/// `--repeat`: runs `specs` together for runs `from` to `sure.repeat`, pausing
/// `--repeat-pause` before each, and returns each run's outcomes with their results numbered
/// (`repeat`). Stops early, keeping what ran, after an I/O error or Ctrl-C. With `say`, each run
/// is announced on stderr.
pub fn run_repeated(
    specs: &[JobSpec],
    sure: &SureArgs,
    from: u32,
    say: bool,
) -> Result<Vec<Vec<TestOutcome>>> {
    let mut runs: Vec<Vec<TestOutcome>> = Vec::new();
    for i in from..=sure.repeat {
        let failed = runs.last().is_some_and(|r| {
            r.iter()
                .any(|o| o.result.error.is_some() || o.result.interrupted)
        });
        if failed || (i > 1 && sure.repeat_pause > 0.0 && pause(sure.repeat_pause)) {
            break;
        }
        if say && sure.repeat > 1 {
            eprintln!("iocap: run {i} of {}", sure.repeat);
        }
        let mut outs = run_many(specs)?;
        for o in &mut outs {
            o.result.repeat = (sure.repeat > 1).then_some(i);
        }
        runs.push(outs);
    }
    Ok(runs)
}

/// The run whose IOPS, all its workloads together, are the median of `runs` (the lower middle
/// of an even count): what a repeated step stands for in a curve or a verdict.
pub fn median_run(runs: &[Vec<TestOutcome>]) -> usize {
    let iops = |r: &Vec<TestOutcome>| r.iter().map(|o| o.result.total.iops).sum::<f64>();
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| iops(&runs[a]).total_cmp(&iops(&runs[b])));
    order
        .get(runs.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0)
}

/// Prepares the targets of `spec` and runs it: a run of one test.
pub fn execute(spec: &JobSpec, command: &str) -> Result<Executed> {
    let mut run = new_run(command);
    let outcome = run_one(spec)?;
    run.tests.push(outcome.result.clone());
    Ok(Executed { run, outcome })
}

/// The text view of a whole run, as the command that made it printed it
/// ([`iocap_report::run_text`]); a verify run's view is still [`super::verify::render`] until it
/// moves into iocap-report.
pub fn run_text(run: &RunResult) -> String {
    match &run.verify {
        Some(v) if run.kind() == RunKind::Verify => super::verify::render(v),
        _ => iocap_report::run_text(run),
    }
}

/// Prints the run in the chosen format and picks the exit code.
pub fn finish(run: &RunResult, output: OutputFormat, text: impl FnOnce() -> String) -> Exit {
    match output {
        // the views escape stored strings; this catches any a view prints as it is
        OutputFormat::Text => print_stdout(&iocap_report::fmt::printable_lines(&text())),
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
    // Ctrl-C may also have come between tests (a --repeat-pause, a suite's pause)
    if t.clone().any(|t| t.interrupted) || super::signals::interrupted() {
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

//! Merging the workers' measurements of one workload into its [`TestResult`].

use std::sync::atomic::Ordering::Relaxed;

use iocap_model::{
    ChosenSubmit, CpuShare, CpuStats, EngineFeature, IoFault, JobSpec, SecondSample, SubmitMode,
    SubmitRecord, TargetResult, TestResult, WorkerInterval, WorkerResult,
};

use super::plan::{rate_iops, Job};
use super::{TestOutcome, WorkerReport};
use crate::stats::WorkerStats;
use crate::worker::Timeline;

/// The first I/O fault of the group, as reported.
fn fault(jobs: &[Job], tl: &Timeline) -> Option<(usize, IoFault)> {
    let f = tl.fault.get()?;
    let t = &jobs[f.job].targets[f.target_idx];
    let message = if f.errno != 0 {
        std::io::Error::from_raw_os_error(f.errno).to_string()
    } else {
        format!(
            "short {}: {} of {} bytes",
            f.op.name(),
            f.transferred,
            f.len
        )
    };
    Some((
        f.job,
        IoFault {
            op: f.op.fault_op(),
            path: t.path.display().to_string(),
            offset_bytes: f.offset,
            len_bytes: f.len,
            errno: f.errno,
            message,
        },
    ))
}

/// What the monitor measured, as one workload's outcome needs it.
pub(super) struct Measured<'a> {
    /// The workload's series.
    pub per_second: Vec<SecondSample>,
    /// Every worker's series, in the order of `reports` (empty where none was kept).
    pub per_worker: &'a [Vec<WorkerInterval>],
    /// The process's (user, sys) seconds over the window.
    pub cpu: (f64, f64),
    /// Every CPU's share over the window.
    pub cpus: &'a [CpuShare],
    /// The I/Os of every workload that ran with this one, which CPU per I/O is taken over.
    pub group_ios: u64,
}

/// Builds the outcome of workload `ji` of `jobs` from its workers' reports and what the
/// monitor measured.
pub(super) fn assemble(
    jobs: &[Job],
    ji: usize,
    tl: &Timeline,
    reports: &[WorkerReport],
    m: Measured<'_>,
) -> TestOutcome {
    let job = &jobs[ji];
    let (spec, targets) = (job.spec, job.targets);
    let measure_start = tl.measure_start_ns.load(Relaxed);
    let window_end = tl.window_end_ns.load(Relaxed);
    let duration_s = window_end.saturating_sub(measure_start) as f64 / 1e9;
    let mut per_target: Vec<WorkerStats> = targets.iter().map(|_| WorkerStats::default()).collect();
    let mut all = WorkerStats::default();
    let mut features: Vec<iocap_model::EngineFeature> = Vec::new();
    let mut warnings: Vec<String> = targets.iter().flat_map(|t| t.warnings.clone()).collect();
    warnings.extend(job.engine_warning.clone());
    if spec.writes() && std::env::var_os(crate::buffers::STAMP_ONLY).is_some() {
        warnings.push(format!(
            "{} is set: the writes were stamped but not whitened, so their data repeats \
             (a benchmark's switch: the figures may flatter the storage)",
            crate::buffers::STAMP_ONLY
        ));
    }
    for r in reports.iter().filter(|r| r.job == ji) {
        per_target[r.target_idx].merge(&r.stats);
        all.merge(&r.stats);
        for f in &r.features {
            if !features.contains(f) {
                features.push(*f);
            }
        }
        for n in &r.notes {
            if !warnings.contains(n) {
                warnings.push(n.clone());
            }
        }
    }
    let total = all.total();
    warnings.extend(rate_not_kept(spec, job, &all));
    let interrupted = tl.interrupt.load(Relaxed);
    if interrupted {
        warnings.push(format!(
            "interrupted: the figures cover the {duration_s:.1} s measured before the stop"
        ));
    }
    if duration_s <= 0.0 {
        warnings.push("nothing was measured: the test stopped before the warmup ended".into());
    }
    let fault = fault(jobs, tl);
    if let Some((fj, e)) = &fault {
        let whose = if *fj == ji {
            String::new()
        } else {
            format!(" in {}, which ran at the same time", jobs[*fj].spec.name)
        };
        warnings.push(format!(
            "stopped by an I/O error{whose}: {e}; the figures cover the {duration_s:.1} s before it"
        ));
    }
    let error = fault.map(|(_, e)| e);
    let result = TestResult {
        name: spec.name.clone(),
        role: None,
        group: None,
        spec: spec.clone(),
        engine: job.engine.engine(),
        engine_features: features,
        direct: targets.iter().all(|t| t.direct),
        duration_s,
        total: total.to_op_stats(duration_s),
        read: all.read.to_op_stats(duration_s),
        write: all.write.to_op_stats(duration_s),
        sync: all.sync.to_op_stats(duration_s),
        cpu: CpuStats {
            user_s: m.cpu.0,
            sys_s: m.cpu.1,
            us_per_io: if m.group_ios > 0 {
                (m.cpu.0 + m.cpu.1) * 1e6 / m.group_ios as f64
            } else {
                0.0
            },
            system: m.cpus.to_vec(),
        },
        qd_mean: if duration_s > 0.0 {
            all.inflight_ns as f64 / (duration_s * 1e9)
        } else {
            0.0
        },
        targets: targets
            .iter()
            .zip(&per_target)
            .map(|(t, s)| {
                let (device, fs_type) = iocap_platform::devinfo::device_and_fs(&t.file);
                TargetResult {
                    path: t.path.display().to_string(),
                    size_bytes: t.range_bytes,
                    kind: t.kind,
                    device,
                    fs_type,
                    direct: t.direct,
                    logical_block_bytes: t.logical_block,
                    created: t.created,
                    threads: t.threads,
                    total: s.total().to_op_stats(duration_s),
                    read: s.read.to_op_stats(duration_s),
                    write: s.write.to_op_stats(duration_s),
                }
            })
            .collect(),
        per_second: m.per_second,
        warnings,
        interrupted,
        error,
        os_counters: None,
        submit: None,
        uncertainty: None,
        repeat: None,
        ranks: None,
        workers: workers(ji, reports, m.per_worker, duration_s),
    };
    TestOutcome {
        result,
        stats: all,
        per_target,
    }
}

/// Workload `ji`'s workers, target by target as they were started: each one's reads and
/// writes over the window (without the histogram, which the test's totals carry) and its
/// series where one was kept.
fn workers(
    ji: usize,
    reports: &[WorkerReport],
    per_worker: &[Vec<WorkerInterval>],
    duration_s: f64,
) -> Vec<WorkerResult> {
    let mut next_thread: Vec<u32> = Vec::new();
    reports
        .iter()
        .enumerate()
        .filter(|(_, r)| r.job == ji)
        .map(|(i, r)| {
            if next_thread.len() <= r.target_idx {
                next_thread.resize(r.target_idx + 1, 0);
            }
            let thread = next_thread[r.target_idx];
            next_thread[r.target_idx] += 1;
            let bare = |s: &crate::stats::OpRecorder| iocap_model::OpStats {
                lat_hist_ns: None,
                ..s.to_op_stats(duration_s)
            };
            WorkerResult {
                target: r.target_idx as u32,
                thread,
                read: bare(&r.stats.read),
                write: bare(&r.stats.write),
                intervals: per_worker.get(i).cloned().unwrap_or_default(),
            }
        })
        .collect()
}

/// A throttled test whose workers ended behind their schedule by more than 2 % of what the
/// rate asked for over the run (warm-up included): how far, and why a throttle leaves it so.
fn rate_not_kept(spec: &JobSpec, job: &Job, all: &WorkerStats) -> Option<String> {
    let (rate, interval_ns) = (rate_iops(spec)?, job.rate_interval_ns?);
    let behind = all.behind_ns as f64 / interval_ns.max(1) as f64;
    let asked = rate * (spec.warmup_s + spec.duration_s);
    (behind >= 1.0 && behind > 0.02 * asked).then(|| {
        format!(
            "the rate asked ({} IOPS) was not kept: the workers ended {} I/Os behind its \
             schedule ({:.0} % of it), as they were not run on time (a busy CPU) or every slot \
             was busy (the storage); a throttle does not catch up in a burst",
            iocap_model::figures::count(rate),
            iocap_model::figures::count(behind),
            100.0 * behind / asked
        )
    })
}

/// Records how workload `ji` submitted I/O on io_uring: the mode asked for, the one each worker
/// kept, and for `auto` what the trial measured; the engine features name the modes.
/// `each_pct` is the share of the window's I/Os submitted one by one.
pub(super) fn record_submit(
    r: &mut TestResult,
    reports: &[WorkerReport],
    ji: usize,
    tl: &Timeline,
    each_pct: Option<f64>,
) {
    let requested = r.spec.submit;
    let mine: Vec<&WorkerReport> = reports.iter().filter(|w| w.job == ji).collect();
    let outcomes: Vec<_> = mine.iter().filter_map(|w| w.stats.auto).collect();
    let (each, batch) = match requested {
        SubmitMode::Each => (mine.len() as u32, 0),
        SubmitMode::Batch => (0, mine.len() as u32),
        SubmitMode::Auto => {
            let e = outcomes.iter().filter(|o| o.each).count() as u32;
            (e, outcomes.len() as u32 - e)
        }
    };
    let chosen = match (each, batch) {
        (0, _) => ChosenSubmit::Batch,
        (_, 0) => ChosenSubmit::Each,
        _ => ChosenSubmit::Mixed,
    };
    let sum_rate = |f: fn(&crate::autosubmit::AutoOutcome) -> Option<f64>| {
        let rates: Vec<f64> = outcomes.iter().filter_map(f).collect();
        (!rates.is_empty()).then(|| rates.iter().sum::<f64>())
    };
    let trial_s = if outcomes.is_empty() {
        0.0
    } else {
        outcomes
            .iter()
            .map(|o| (o.ns_each + o.ns_batch) as f64 / 1e9)
            .sum::<f64>()
            / outcomes.len() as f64
    };
    let measure_start = tl.measure_start_ns.load(Relaxed);
    let start = tl.start_ns.load(Relaxed);
    let trial_in_window_s = if requested == SubmitMode::Auto {
        let end = crate::autosubmit::AutoTrial::new(start, measure_start).end_ns();
        end.saturating_sub(measure_start) as f64 / 1e9
    } else {
        0.0
    };
    if requested == SubmitMode::Auto {
        r.engine_features.push(EngineFeature::SubmitAuto);
    }
    for (n, feature) in [
        (each, EngineFeature::SubmitEach),
        (batch, EngineFeature::SubmitBatch),
    ] {
        if n > 0 {
            r.engine_features.push(feature);
        }
    }
    if requested == SubmitMode::Auto && outcomes.iter().any(|o| !o.finished) {
        r.warnings.push(
            "--submit auto: the test ended before the submission trial did; the mode was \
             chosen on what the trial had counted"
                .into(),
        );
    }
    r.submit = Some(SubmitRecord {
        requested,
        chosen,
        workers_each: each,
        workers_batch: batch,
        trial_iops_each: sum_rate(|o| o.rate_each()),
        trial_iops_batch: sum_rate(|o| o.rate_batch()),
        trial_s,
        trial_in_window_s,
        each_pct: each_pct.unwrap_or(0.0),
    });
}

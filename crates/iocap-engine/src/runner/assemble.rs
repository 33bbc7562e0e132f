//! Merging the workers' measurements of one workload into its [`TestResult`].

use std::sync::atomic::Ordering::Relaxed;

use iocap_model::{CpuStats, IoFault, SecondSample, TargetResult, TestResult};

use super::plan::Job;
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
            op: f.op.name().to_string(),
            path: t.path.display().to_string(),
            offset_bytes: f.offset,
            len_bytes: f.len,
            errno: f.errno,
            message,
        },
    ))
}

/// Builds the outcome of workload `ji` of `jobs` from its workers' reports. `cpu` is the
/// process's (user, sys) seconds over the window and `group_ios` the I/Os of every workload
/// that ran with it, which CPU per I/O is taken over.
#[allow(clippy::too_many_arguments)]
pub(super) fn assemble(
    jobs: &[Job],
    ji: usize,
    tl: &Timeline,
    reports: &[WorkerReport],
    per_second: Vec<SecondSample>,
    cpu: (f64, f64),
    group_ios: u64,
) -> TestOutcome {
    let job = &jobs[ji];
    let (spec, targets) = (job.spec, job.targets);
    let measure_start = tl.measure_start_ns.load(Relaxed);
    let window_end = tl.window_end_ns.load(Relaxed);
    let duration_s = window_end.saturating_sub(measure_start) as f64 / 1e9;
    let mut per_target: Vec<WorkerStats> = targets.iter().map(|_| WorkerStats::default()).collect();
    let mut all = WorkerStats::default();
    let mut features: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = targets.iter().flat_map(|t| t.warnings.clone()).collect();
    warnings.extend(job.engine_warning.clone());
    for r in reports.iter().filter(|r| r.job == ji) {
        per_target[r.target_idx].merge(&r.stats);
        all.merge(&r.stats);
        for f in &r.features {
            if !features.contains(f) {
                features.push(f.clone());
            }
        }
        for n in &r.notes {
            if !warnings.contains(n) {
                warnings.push(n.clone());
            }
        }
    }
    let total = all.total();
    let interrupted = tl.interrupt.load(Relaxed);
    if interrupted {
        warnings.push(format!(
            "interrupted: the figures cover the {duration_s:.1} s measured before Ctrl-C"
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
        engine: job.engine.name().to_string(),
        engine_features: features,
        direct: targets.iter().all(|t| t.direct),
        duration_s,
        total: total.to_op_stats(duration_s),
        read: all.read.to_op_stats(duration_s),
        write: all.write.to_op_stats(duration_s),
        sync: all.sync.to_op_stats(duration_s),
        cpu: CpuStats {
            user_s: cpu.0,
            sys_s: cpu.1,
            us_per_io: if group_ios > 0 {
                (cpu.0 + cpu.1) * 1e6 / group_ios as f64
            } else {
                0.0
            },
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
                let (device, fs_type) = crate::devinfo::device_and_fs(&t.file);
                TargetResult {
                    path: t.path.display().to_string(),
                    size_bytes: t.range_bytes,
                    kind: t.kind.name().to_string(),
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
        per_second,
        warnings,
        interrupted,
        error,
        os_counters: None,
    };
    TestOutcome {
        result,
        stats: all,
        per_target,
    }
}

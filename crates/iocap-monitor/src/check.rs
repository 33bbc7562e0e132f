//! The cross-check: what iocap issued against what the device completed over the same
//! interval. Each disagreement becomes an [`OsFinding`] with a stable `kind` (for scripts and for
//! flagging a result) and one sentence that gives both figures and the likely reason. The
//! thresholds are deliberately coarse: the point is to catch a test that did not measure the
//! device (a cache, merging, another writer), not to second-guess a few percent.

use iocap_model::{DeviceSample, FindingKind, OsFinding};

use crate::{average, ratio};

/// What the application did over the interval, per second.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AppFigures {
    pub read_iops: f64,
    pub write_iops: f64,
    /// Average bytes per application read (0 when there were none).
    pub read_bytes_per_io: f64,
    /// The process's CPU time over the interval as a share of the cores its workers could use
    /// (1.0 = every worker thread busy all the time); `None` when unknown.
    pub cpu_busy: Option<f64>,
}

fn finding(kind: FindingKind, message: String) -> OsFinding {
    OsFinding { kind, message }
}

/// Findings for one interval (or one average over many):
///
/// * device reads < 50 % of application reads → `served_from_cache`;
/// * device average read > 1.5 × the application's → `merging` (merging or readahead);
/// * device writes < 50 % of application writes → `writes_absorbed` (page cache or merging);
/// * device writes > 2 × application writes + 10/s → `write_amplification` (journal,
///   metadata, other processes);
/// * `%util` ≥ 95 → `device_busy` (saturated only for a device that serves one request at a
///   time; see [`cross_check_series`]);
/// * `%util` < 60 while the process kept its cores ≥ 85 % busy → `cpu_bound`.
///
/// Application rates ≤ 0 disable the checks that need them.
pub fn cross_check(app: &AppFigures, dev: &DeviceSample) -> Vec<OsFinding> {
    let mut out = Vec::new();
    let name = &dev.device;
    if app.read_iops > 0.0 && dev.r_s < 0.5 * app.read_iops {
        out.push(finding(
            FindingKind::ServedFromCache,
            format!(
                "{name}: the device completed {:.0} reads/s for iocap's {:.0} reads/s: most \
                 reads were served from a cache (page cache, controller or array), so the read \
                 figures do not measure the device",
                dev.r_s, app.read_iops
            ),
        ));
    }
    if app.read_bytes_per_io > 0.0 && dev.r_s > 0.0 {
        let dev_bytes = dev.rareq_sz_kb * 1024.0;
        if dev_bytes > 1.5 * app.read_bytes_per_io {
            out.push(finding(
                FindingKind::Merging,
                format!(
                    "{name}: the average device read is {:.1} KiB for iocap's {:.1} KiB reads: \
                     request merging or readahead enlarged the requests ({:.0} merges/s)",
                    dev.rareq_sz_kb,
                    app.read_bytes_per_io / 1024.0,
                    dev.rrqm_s
                ),
            ));
        }
    }
    if app.write_iops > 0.0 && dev.w_s < 0.5 * app.write_iops {
        out.push(finding(
            FindingKind::WritesAbsorbed,
            format!(
                "{name}: the device completed {:.0} writes/s for iocap's {:.0} writes/s: the \
                 writes were absorbed by the page cache (not yet flushed) or merged ({:.0} \
                 merges/s)",
                dev.w_s, app.write_iops, dev.wrqm_s
            ),
        ));
    }
    if app.write_iops > 0.0 && dev.w_s > 2.0 * app.write_iops + 10.0 {
        out.push(finding(
            FindingKind::WriteAmplification,
            format!(
                "{name}: the device completed {:.0} writes/s for iocap's {:.0} writes/s: write \
                 amplification (file-system journal, metadata) or other processes writing to \
                 this device",
                dev.w_s, app.write_iops
            ),
        ));
    }
    if dev.util_pct >= 95.0 {
        out.push(finding(
            FindingKind::DeviceBusy,
            format!(
                "{name}: %util {:.0}: the device had I/O in flight the whole time; that is \
                 saturation for a device that serves one request at a time (HDD), while \
                 SSD, NVMe and arrays may still have headroom",
                dev.util_pct
            ),
        ));
    }
    // a cache answered: the device was not in the loop, so its %util says nothing of the CPU
    let cached = out.iter().any(|f| {
        matches!(
            f.kind,
            FindingKind::ServedFromCache | FindingKind::WritesAbsorbed
        )
    });
    if let Some(cpu) = app.cpu_busy.filter(|_| !cached) {
        if cpu >= 0.85 && dev.util_pct < 60.0 {
            out.push(finding(
                FindingKind::CpuBound,
                format!(
                    "{name}: %util only {:.0} while iocap's workers kept their cores {:.0} % \
                     busy: the test was limited by CPU, not by the device; use more threads or \
                     io_uring",
                    dev.util_pct,
                    cpu * 100.0
                ),
            ));
        }
    }
    out
}

/// [`cross_check`] over a series of samples of one device, applied to their average; the
/// `device_busy` finding becomes `device_saturated` when `%util` ≥ 95 in every sample *and* the
/// device's IOPS are flat (coefficient of variation of r/s + w/s under 10 %): more load would
/// only add queueing.
pub fn cross_check_series(app: &AppFigures, samples: &[DeviceSample]) -> Vec<OsFinding> {
    if samples.is_empty() {
        return Vec::new();
    }
    let avg = average(samples);
    let mut out: Vec<OsFinding> = cross_check(app, &avg)
        .into_iter()
        .filter(|f| f.kind != FindingKind::DeviceBusy)
        .collect();
    let iops: Vec<f64> = samples.iter().map(|s| s.r_s + s.w_s).collect();
    let mean = iops.iter().sum::<f64>() / iops.len() as f64;
    let var = iops.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / iops.len() as f64;
    let cv = ratio(var.sqrt(), mean);
    if samples.iter().all(|s| s.util_pct >= 95.0) && mean > 0.0 && cv < 0.10 {
        out.push(finding(
            FindingKind::DeviceSaturated,
            format!(
                "{}: device saturated: %util ≥ 95 in all {} seconds with flat IOPS ({:.0}/s ± \
                 {:.1} %); adding load only adds queueing latency",
                avg.device,
                samples.len(),
                mean,
                cv * 100.0
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::sample;

    fn app(read_iops: f64, write_iops: f64, read_bytes_per_io: f64) -> AppFigures {
        AppFigures {
            read_iops,
            write_iops,
            read_bytes_per_io,
            cpu_busy: None,
        }
    }

    fn kinds(f: &[OsFinding]) -> Vec<&str> {
        f.iter().map(|f| f.kind.name()).collect()
    }

    #[test]
    fn each_disagreement_is_named() {
        let consistent = cross_check(
            &app(1000.0, 500.0, 8192.0),
            &sample(1000.0, 500.0, 8.0, 50.0),
        );
        assert!(consistent.is_empty(), "{consistent:?}");
        let f = cross_check(&app(1000.0, 0.0, 8192.0), &sample(100.0, 0.0, 8.0, 10.0));
        assert_eq!(kinds(&f), ["served_from_cache"]);
        assert!(f[0].message.contains("100 reads/s") && f[0].message.contains("1000"));
        let f = cross_check(&app(1000.0, 0.0, 8192.0), &sample(900.0, 0.0, 64.0, 10.0));
        assert_eq!(kinds(&f), ["merging"]);
        let f = cross_check(&app(0.0, 1000.0, 0.0), &sample(0.0, 100.0, 0.0, 10.0));
        assert_eq!(kinds(&f), ["writes_absorbed"]);
        let f = cross_check(&app(0.0, 100.0, 0.0), &sample(0.0, 500.0, 0.0, 10.0));
        assert_eq!(kinds(&f), ["write_amplification"]);
        let f = cross_check(&app(1000.0, 0.0, 4096.0), &sample(1000.0, 0.0, 4.0, 99.0));
        assert_eq!(kinds(&f), ["device_busy"]);
        assert!(f[0].message.contains("%util 99"));
    }

    #[test]
    fn a_busy_cpu_and_an_idle_device_is_cpu_bound() {
        let mut a = app(1000.0, 0.0, 4096.0);
        a.cpu_busy = Some(0.97);
        let f = cross_check(&a, &sample(1000.0, 0.0, 4.0, 30.0));
        assert_eq!(kinds(&f), ["cpu_bound"]);
        // a busy device is not CPU-bound, however busy the CPU
        assert!(cross_check(&a, &sample(1000.0, 0.0, 4.0, 80.0)).is_empty());
        // nor is a test a cache answered
        assert_eq!(
            kinds(&cross_check(&a, &sample(10.0, 0.0, 4.0, 1.0))),
            ["served_from_cache"]
        );
        a.cpu_busy = Some(0.5);
        assert!(cross_check(&a, &sample(1000.0, 0.0, 4.0, 30.0)).is_empty());
    }

    #[test]
    fn saturation_needs_flat_iops_in_every_second() {
        let flat: Vec<_> = [1000.0, 1010.0, 995.0]
            .iter()
            .map(|&r| sample(r, 0.0, 4.0, 99.0))
            .collect();
        let f = cross_check_series(&app(1000.0, 0.0, 4096.0), &flat);
        assert_eq!(kinds(&f), ["device_saturated"]);
        let bumpy: Vec<_> = [1000.0, 300.0, 1500.0]
            .iter()
            .map(|&r| sample(r, 0.0, 4.0, 99.0))
            .collect();
        assert!(cross_check_series(&app(0.0, 0.0, 0.0), &bumpy).is_empty());
        assert!(cross_check_series(&app(1.0, 1.0, 1.0), &[]).is_empty());
    }
}

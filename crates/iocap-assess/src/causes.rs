//! Likely causes: why a figure is what it is, read from evidence in the results rather than
//! guessed. A cache that answered instead of the storage (test file within RAM or the given
//! cache size, or a figure no device of the class can reach while running buffered), a CPU
//! that ran out before the storage did, too few I/Os in flight, one slow volume among peers.
//!
//! Thresholds: CPU-bound at 80 % of the CPUs busy (CPU us per I/O x IOPS, or CPU seconds over
//! the test's length); queue depth too low when the achieved mean is under 32 (flash random),
//! 8 (flash sequential, rotational random) or 2 (rotational sequential), or when the saturation
//! curve still gained `min_gain_pct` at its last step; implausible when buffered and above
//! 1,500,000 IOPS or 15,000 MB/s per flash device, 50,000 IOPS or 5,000 MB/s per rotational one;
//! above the links when a scan or backup beats the links' MB/s by more than 5 %.

use iocap_model::TestResult;

use crate::fmt;
use crate::guidelines::DeviceClass;
use crate::preflight_input::{PreflightInput, RowKind};
use crate::saturate::last_gain_pct;

/// The process using this share of the CPUs or more counts as CPU-bound.
pub const CPU_BOUND_SHARE: f64 = 0.8;

pub(crate) fn ok(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// Why a test's figures cannot be used at all, if they cannot.
pub(crate) fn broken(t: &TestResult) -> Option<String> {
    if let Some(e) = &t.error {
        return Some(format!("stopped on an I/O error ({e})"));
    }
    if t.total.ios == 0 || !ok(t.total.iops) {
        return Some("completed no I/O".into());
    }
    None
}

pub(crate) fn buffered(i: &PreflightInput, t: &TestResult) -> bool {
    i.buffered || !t.direct
}

pub(crate) fn file_bytes(t: &TestResult) -> u64 {
    t.targets
        .iter()
        .fold(0u64, |a, x| a.saturating_add(x.size_bytes))
}

/// Random IOPS and MB/s per device beyond which a device of the class cannot be the one
/// answering (flash: about a PCIe 5 NVMe drive; rotational: a large array of disks).
fn plausible_max(class: DeviceClass) -> (f64, f64) {
    match class {
        DeviceClass::Flash => (1_500_000.0, 15_000.0),
        DeviceClass::Rotational => (50_000.0, 5_000.0),
    }
}

/// Evidence that a cache, not the storage, produced the figure.
pub(crate) fn cache_causes(i: &PreflightInput, kind: RowKind, t: &TestResult) -> Vec<String> {
    let mut out = Vec::new();
    let size = file_bytes(t);
    let buf = buffered(i, t);
    if buf && i.ram_bytes > 0 && size > 0 && size <= i.ram_bytes {
        out.push(format!(
            "The test files ({}) fit in the {} of RAM and the test ran buffered: the page \
                cache answered, not the storage.",
            fmt::bytes(size),
            fmt::bytes(i.ram_bytes)
        ));
    }
    if let Some(cache) = i.cache_size_bytes.filter(|c| *c > 0) {
        if size > 0 && size <= cache {
            out.push(format!(
                "The test files ({}) fit in the {} cache given with --cache-size: the cache \
                    answered, not the storage.",
                fmt::bytes(size),
                fmt::bytes(cache)
            ));
        }
    }
    let class = kind.class(&i.classes);
    let devices = t.targets.len().max(1) as f64;
    let (max_iops, max_mb_s) = plausible_max(class);
    if buf {
        let (v, max, unit) = if kind.is_random() {
            (t.total.iops, max_iops, "IOPS")
        } else {
            (t.total.mb_s, max_mb_s, "MB/s")
        };
        if v.is_finite() && v > max * devices {
            out.push(format!(
                "{} {unit} is more than a {} device delivers (about {} per device) and the \
                    test ran buffered: the page cache answered.",
                fmt::count(v),
                class.name(),
                fmt::count(max)
            ));
        }
    }
    if matches!(kind, RowKind::Scan | RowKind::Backup) {
        let links = i.expectations.and_then(|e| e.link_mb_s().map(|m| (e, m)));
        if let Some((e, link)) = links {
            if t.total.mb_s.is_finite() && t.total.mb_s > link * 1.05 {
                out.push(format!(
                    "{} MB/s is more than the {} links carry ({} MB/s): a cache on the host \
                        answered, or the links in the expectations are wrong.",
                    fmt::count(t.total.mb_s),
                    e.links.as_deref().unwrap_or(""),
                    fmt::count(link)
                ));
            }
        }
    }
    out
}

/// CPUs the process kept busy during the test.
fn cpus_used(t: &TestResult) -> f64 {
    let by_io = t.cpu.us_per_io * t.total.iops / 1e6;
    if ok(by_io) {
        return by_io;
    }
    let by_time = (t.cpu.user_s + t.cpu.sys_s) / t.duration_s;
    if by_time.is_finite() {
        by_time
    } else {
        0.0
    }
}

/// Outstanding I/Os a device class usually needs to reach its capacity.
fn qd_needed(class: DeviceClass, random: bool) -> f64 {
    match (class, random) {
        (DeviceClass::Flash, true) => 32.0,
        (DeviceClass::Flash, false) => 8.0,
        (DeviceClass::Rotational, true) => 8.0,
        (DeviceClass::Rotational, false) => 2.0,
    }
}

/// Evidence for why a figure fell short of its expectation.
pub(crate) fn shortfall_causes(
    i: &PreflightInput,
    kind: RowKind,
    t: Option<&TestResult>,
) -> Vec<String> {
    let mut out = Vec::new();
    let class = kind.class(&i.classes);
    if let Some(t) = t {
        let used = cpus_used(t);
        if i.cpus > 0 && used >= CPU_BOUND_SHARE * f64::from(i.cpus) {
            out.push(format!(
                "The process kept {:.1} of {} CPUs busy ({:.1} us per I/O at {} IOPS): the \
                    CPU, not the storage, is the limit; check CPU power saving and the I/O engine.",
                used,
                i.cpus,
                t.cpu.us_per_io,
                fmt::count(t.total.iops)
            ));
        }
    }
    let curve = i.data_read_curve.filter(|_| kind == RowKind::RandomRead);
    if let Some(sat) = curve {
        let gain = last_gain_pct(&sat.steps).unwrap_or(0.0);
        if sat.knee_qd.is_none() && gain >= sat.min_gain_pct {
            let qd = sat.steps.last().map_or(0, |p| p.qd);
            out.push(format!(
                "Throughput still rose {} at the last step (qd {qd}): the storage wants more \
                    outstanding I/O than was tried; raise the largest queue depth.",
                fmt::pct(gain)
            ));
        }
    } else if let Some(t) = t.filter(|_| kind != RowKind::LogMbS) {
        let need = qd_needed(class, kind.is_random());
        if t.qd_mean.is_finite() && t.qd_mean < need {
            out.push(format!(
                "Only {:.1} I/Os were in flight on average, and {} storage usually needs {} or \
                    more for its {} capacity: raise --qd or --threads, \
                    and check the HBA queue depth.",
                t.qd_mean,
                class.name(),
                need,
                if kind.is_random() {
                    "random"
                } else {
                    "sequential"
                }
            ));
        }
    }
    if let Some(s) = i.scaleup {
        for v in s.alone.iter().filter(|v| v.slow) {
            out.push(format!(
                "Volume {} does {} IOPS ({} MB/s) alone, more than 20 % below its peers: check \
                    its path, RAID level and cache settings.",
                v.path,
                fmt::count(v.iops),
                fmt::count(v.mb_s)
            ));
        }
    }
    out
}

/// Every likely cause the results show for a row's figure: caches that answered instead of
/// the storage, a busy CPU, too few outstanding I/Os, a slow volume. Each is one sentence.
pub fn likely_causes(i: &PreflightInput, kind: RowKind) -> Vec<String> {
    let t = kind.test(i).map(|m| m.test);
    let mut out = t.map(|t| cache_causes(i, kind, t)).unwrap_or_default();
    out.extend(shortfall_causes(i, kind, t));
    out
}

pub(crate) const NO_EVIDENCE: &str = "Nothing in this run explains the shortfall: compare the \
    array's own counters, the multipath policy \
    and the link speeds with the vendor's configuration.";

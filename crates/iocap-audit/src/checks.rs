//! Checks on one target: partition alignment, file system, mount options, block devices, md RAID.

use crate::resolve::{chain, Chain};
use crate::Finding;
use std::path::Path;

use crate::{shown, AuditOptions, Check, FsStats, Resolved, Root, Severity};

const MIB: u64 = 1 << 20;

/// Every check about one resolved target. `fs` is the statvfs result for the path (`None` when
/// auditing a bare device: the file-system checks are then left out).
pub fn target_checks(
    root: &Root,
    r: &Resolved,
    fs: Option<Result<FsStats, String>>,
    opts: &AuditOptions,
) -> Vec<Check> {
    let mut out = Vec::new();
    let chain = r.block_device.as_deref().map(|b| chain(root, b));
    let stripe = chain
        .as_ref()
        .and_then(|c| stripe_unit(root, r.block_device.as_deref(), c, opts));

    match &chain {
        Some(c) => {
            partition_checks(root, r, c, stripe.as_ref(), &mut out);
        }
        None => out.push(Check::unknown(
            "resolve.device",
            &r.path,
            format!(
                "no block device in /sys for this path (file system {} on {}): a container, \
                 network or virtual file system",
                r.fs_type.as_deref().unwrap_or("unknown"),
                r.mount_point.as_deref().unwrap_or("unknown mount point"),
            ),
        )),
    }

    if let Some(fs) = fs {
        fs_checks(r, fs, stripe.as_ref(), opts, &mut out);
    }
    if r.mount_point.is_some() {
        mount_checks(r, &mut out);
    }
    if let Some(c) = &chain {
        let array = is_array(root, c, opts);
        if let Some(top) = &r.block_device {
            // Read-ahead that the file system sees is the top device's (a partition uses its disk's).
            let queue_dev = if c.partitions.first() == Some(top) && c.stacked.is_empty() {
                c.physical.first().cloned()
            } else if c.partitions.first() == Some(top) {
                c.stacked.first().cloned()
            } else {
                Some(top.clone())
            };
            if let Some(q) = queue_dev {
                if !c.physical.contains(&q) {
                    read_ahead(root, &q, &mut out);
                }
            }
        }
        for d in &c.physical {
            device_checks(root, d, array, &mut out);
        }
        for m in c.stacked.iter().filter(|s| s.starts_with("md")) {
            md_check(root, m, &mut out);
        }
    }
    out
}

/// The stripe unit in bytes and where it came from.
pub(crate) struct Stripe {
    pub(crate) bytes: u64,
    pub(crate) source: String,
}

fn stripe_unit(root: &Root, top: Option<&str>, c: &Chain, opts: &AuditOptions) -> Option<Stripe> {
    if let Some(b) = opts.stripe_unit_bytes.filter(|b| *b > 0) {
        return Some(Stripe {
            bytes: b,
            source: "the stripe unit given in the options".into(),
        });
    }
    for m in c.stacked.iter().filter(|s| s.starts_with("md")) {
        let rel = format!("sys/class/block/{m}/md/chunk_size");
        if let Ok(b) = root.read_u64(&rel) {
            if b > 0 {
                return Some(Stripe {
                    bytes: b,
                    source: shown(&rel),
                });
            }
        }
    }
    let mut devs: Vec<String> = top.map(|t| vec![t.to_string()]).unwrap_or_default();
    devs.extend(c.stacked.iter().cloned());
    devs.extend(c.physical.iter().cloned());
    for d in devs {
        let opt_rel = format!("sys/class/block/{d}/queue/optimal_io_size");
        let min_rel = format!("sys/class/block/{d}/queue/minimum_io_size");
        let Ok(opt) = root.read_u64(&opt_rel) else {
            continue;
        };
        if opt == 0 {
            continue;
        }
        // A RAID device shows its chunk as minimum_io_size and its full stripe as optimal_io_size.
        if let Ok(min) = root.read_u64(&min_rel) {
            if min > 4096 {
                return Some(Stripe {
                    bytes: min,
                    source: shown(&min_rel),
                });
            }
        }
        return Some(Stripe {
            bytes: opt,
            source: shown(&opt_rel),
        });
    }
    None
}

fn partition_checks(
    root: &Root,
    r: &Resolved,
    c: &Chain,
    stripe: Option<&Stripe>,
    out: &mut Vec<Check>,
) {
    if c.partitions.is_empty() {
        let subject = r.block_device.as_deref().unwrap_or(&r.path);
        out.push(Check::new(
            "partition.alignment",
            Severity::Pass,
            subject,
            "no partition: the file system starts at offset 0 of the device",
            "Nothing to do: a whole-device file system is aligned.",
        ));
        return;
    }
    for p in &c.partitions {
        let rel = format!("sys/class/block/{p}/start");
        let start = match root.read_u64(&rel) {
            Ok(s) => s,
            Err(e) => {
                out.push(Check::unknown("partition.alignment", p, e.clone()));
                out.push(Check::unknown("partition.stripe_alignment", p, e));
                continue;
            }
        };
        let evidence = format!(
            "start sector {start} (512 B sectors) = {} B from {}",
            start * 512,
            shown(&rel)
        );
        alignment_checks(p, start * 512, evidence, stripe, out);
    }
}

/// How to fix an offset, in the words of the system's tools.
pub(crate) struct AlignFix {
    /// The advice for an offset aligned to 4 KiB but not to 1 MiB.
    pub(crate) warn: &'static str,
    /// The advice for an offset not aligned to 4 KiB.
    pub(crate) fail: &'static str,
    /// Why no stripe unit is known, after the evidence.
    pub(crate) no_stripe: &'static str,
}

const LINUX_FIX: AlignFix = AlignFix {
    warn: "Re-create the partition at a 1 MiB boundary (parted -a optimal) so it divides evenly by any stripe unit.",
    fail: "Re-create the partition at a 1 MiB boundary (sector 2048): this offset splits pages and stripe units, costing 5 to 30 %.",
    no_stripe: "no stripe unit: no md chunk_size and queue/optimal_io_size is 0 or missing (give the stripe unit for hardware RAID)",
};

/// `partition.alignment` and `partition.stripe_alignment` for partition `p` starting `bytes`
/// into its device.
fn alignment_checks(
    p: &str,
    bytes: u64,
    evidence: String,
    stripe: Option<&Stripe>,
    out: &mut Vec<Check>,
) {
    alignment_checks_with(p, bytes, evidence, stripe, &LINUX_FIX, out)
}

/// [`alignment_checks`] with the advice of `fix`.
pub(crate) fn alignment_checks_with(
    p: &str,
    bytes: u64,
    evidence: String,
    stripe: Option<&Stripe>,
    fix: &AlignFix,
    out: &mut Vec<Check>,
) {
    let (sev, rec) = if bytes % MIB == 0 {
        (
            Severity::Pass,
            "Nothing to do: the partition starts on a 1 MiB boundary.",
        )
    } else if bytes % 4096 == 0 {
        (Severity::Warn, fix.warn)
    } else {
        (Severity::Fail, fix.fail)
    };
    out.push(Check::new(
        "partition.alignment",
        sev,
        p,
        evidence.clone(),
        rec,
    ));
    match stripe {
        Some(s) if bytes % s.bytes == 0 => out.push(Check::new(
            "partition.stripe_alignment",
            Severity::Pass,
            p,
            format!("{evidence}; stripe unit {} B from {}", s.bytes, s.source),
            "Nothing to do: the partition offset divides evenly by the stripe unit.",
        )),
        Some(s) => out.push(Check::new(
            "partition.stripe_alignment",
            Severity::Fail,
            p,
            format!(
                "{evidence}; stripe unit {} B from {}; offset mod stripe unit = {} B",
                s.bytes,
                s.source,
                bytes % s.bytes
            ),
            "Re-create the partition at an offset that is a multiple of the stripe unit (1 MiB works for stripe units up to 1 MiB).",
        )),
        None => out.push(Check::unknown(
            "partition.stripe_alignment",
            p,
            format!("{evidence}; {}", fix.no_stripe),
        )),
    }
}

fn fs_checks(
    r: &Resolved,
    fs: Result<FsStats, String>,
    stripe: Option<&Stripe>,
    opts: &AuditOptions,
    out: &mut Vec<Check>,
) {
    let subject = r.path.as_str();
    let fs = match fs {
        Ok(fs) => fs,
        Err(e) => {
            out.push(Check::unknown("fs.block_size", subject, e.clone()));
            out.push(Check::unknown("fs.stripe_divisible", subject, e.clone()));
            out.push(Check::unknown("fs.free_space", subject, e));
            return;
        }
    };
    let fst = r.fs_type.as_deref().unwrap_or("unknown");
    let bs = fs.block_size;
    let ev = format!("{fst} block size {bs} B from statvfs f_bsize");
    if bs >= 4096 {
        out.push(Check::new(
            "fs.block_size",
            Severity::Pass,
            subject,
            ev,
            "Nothing to do: the allocation unit is at least 4 KiB (on NTFS/ReFS prefer 64 KB for data and log).",
        ));
    } else {
        out.push(Check::new(
            "fs.block_size",
            Severity::Warn,
            subject,
            ev,
            "Re-create the file system with 4 KiB blocks: smaller blocks fragment 8 KB pages and add metadata I/O.",
        ));
    }
    out.push(stripe_divisible(
        subject,
        bs,
        stripe,
        "no stripe unit known (no md chunk, optimal_io_size 0 or missing, none given)",
    ));
    out.push(free_space(
        subject,
        fs.avail_bytes,
        fs.total_bytes,
        "statvfs",
        opts,
    ));
}

/// `fs.stripe_divisible`: the stripe unit against the allocation unit `bs`; `none` says why no
/// stripe unit is known.
pub(crate) fn stripe_divisible(
    subject: &str,
    bs: u64,
    stripe: Option<&Stripe>,
    none: &str,
) -> Check {
    match stripe {
        Some(s) if s.bytes % bs == 0 => Check::new(
            "fs.stripe_divisible",
            Severity::Pass,
            subject,
            format!("stripe unit {} B from {} / block size {bs} B = {}", s.bytes, s.source, s.bytes / bs),
            "Nothing to do: the stripe unit divides evenly by the allocation unit.",
        ),
        Some(s) => Check::new(
            "fs.stripe_divisible",
            Severity::Fail,
            subject,
            format!("stripe unit {} B from {} is not a multiple of block size {bs} B", s.bytes, s.source),
            "Choose a stripe unit that is a multiple of the file-system block size, or re-create the file system.",
        ),
        None => Check::unknown("fs.stripe_divisible", subject, none),
    }
}

/// `fs.free_space`: `avail` of `total` bytes (read by `call`) against the planned size.
pub(crate) fn free_space(
    subject: &str,
    avail: u64,
    total: u64,
    call: &str,
    opts: &AuditOptions,
) -> Check {
    match opts.db_size_bytes {
        Some(want) if avail < want => Check::new(
            "fs.free_space",
            Severity::Fail,
            subject,
            format!(
                "{} available ({call}) < planned database size {}",
                size(avail),
                size(want)
            ),
            "Move the database to a larger volume or grow this file system before the load.",
        ),
        Some(want) if avail / 5 * 4 < want => Check::new(
            "fs.free_space",
            Severity::Warn,
            subject,
            format!(
                "{} available ({call}) leaves less than 20 % headroom over the planned {}",
                size(avail),
                size(want)
            ),
            "Plan for growth, temp space and backups: keep at least 20 % free beyond the database.",
        ),
        Some(want) => Check::new(
            "fs.free_space",
            Severity::Pass,
            subject,
            format!(
                "{} available ({call}) >= planned {} with 20 % headroom",
                size(avail),
                size(want)
            ),
            "Nothing to do: the planned database fits.",
        ),
        None => Check::new(
            "fs.free_space",
            Severity::Info,
            subject,
            format!("{} available of {} ({call})", size(avail), size(total)),
            "Give the planned database size to check that it fits.",
        ),
    }
}

fn mount_checks(r: &Resolved, out: &mut Vec<Check>) {
    let subject = r.mount_point.as_deref().unwrap_or(&r.path);
    let o = &r.mount_options;
    let has = |s: &str| o.iter().any(|x| x == s);
    let ev = |what: &str| {
        format!(
            "{what}; mount options {} from /proc/self/mountinfo",
            o.join(",")
        )
    };

    let (sev, what, rec) = if has("noatime") {
        (
            Severity::Pass,
            "noatime",
            "Nothing to do: reads do not write access times.",
        )
    } else if has("relatime") {
        (
            Severity::Pass,
            "relatime",
            "Fine; noatime saves the last few access-time writes.",
        )
    } else {
        (
            Severity::Warn,
            "neither noatime nor relatime",
            "Mount with noatime (or relatime) so every read does not become a metadata write.",
        )
    };
    out.push(Check::new("mount.atime", sev, subject, ev(what), rec));

    if has("nobarrier") || has("barrier=0") {
        out.push(Check::new(
            "mount.barrier",
            Severity::Warn,
            subject,
            ev("write barriers off (nobarrier / barrier=0)"),
            "Remove nobarrier unless every cache in the path is power-loss protected: a crash can corrupt the log.",
        ));
    } else {
        out.push(Check::new(
            "mount.barrier",
            Severity::Pass,
            subject,
            ev("write barriers on"),
            "Nothing to do: flushes reach stable storage.",
        ));
    }

    if let Some(d) = o.iter().find(|x| x.starts_with("data=")) {
        let (sev, rec) = match d.as_str() {
            "data=writeback" => (
                Severity::Info,
                "data=writeback journals metadata only: the database's own log must protect data, and files may show stale blocks after a crash.",
            ),
            "data=journal" => (
                Severity::Info,
                "data=journal writes data twice; use data=ordered unless measured otherwise.",
            ),
            _ => (Severity::Pass, "Nothing to do: data=ordered is the safe default."),
        };
        out.push(Check::new("mount.data_mode", sev, subject, ev(d), rec));
    }

    if has("discard") {
        out.push(Check::new(
            "mount.discard",
            Severity::Info,
            subject,
            ev("online discard on"),
            "Online discard can add latency to deletes and truncates on some SSDs; prefer a periodic fstrim.",
        ));
    } else {
        out.push(Check::new(
            "mount.discard",
            Severity::Pass,
            subject,
            ev("no online discard"),
            "Nothing to do; run fstrim periodically on SSDs.",
        ));
    }
}

fn is_array(root: &Root, c: &Chain, opts: &AuditOptions) -> bool {
    if opts.stripe_unit_bytes.is_some()
        || c.physical.len() > 1
        || c.stacked.iter().any(|s| s.starts_with("md"))
    {
        return true;
    }
    c.physical.iter().any(|d| {
        let model = root
            .read(&format!("sys/class/block/{d}/device/model"))
            .unwrap_or_default()
            .to_ascii_uppercase();
        [
            "RAID",
            "LOGICAL VOLUME",
            "PERC",
            "VIRTUAL DISK",
            "MR9",
            "LUN",
        ]
        .iter()
        .any(|k| model.contains(k))
    })
}

fn read_ahead(root: &Root, d: &str, out: &mut Vec<Check>) {
    let rel = format!("sys/class/block/{d}/queue/read_ahead_kb");
    match root.read_u64(&rel) {
        Err(e) => out.push(Check::unknown("device.read_ahead_kb", d, e)),
        Ok(kb) => {
            let ev = format!("read_ahead_kb {kb} from {}", shown(&rel));
            let (sev, rec) = if kb == 0 {
                (Severity::Warn, "Set read-ahead to 128 KiB or more: sequential scans and backups lose OS read-ahead.")
            } else if kb > 4096 {
                (Severity::Warn, "Lower read-ahead to 4 MiB or less: random 8 KB reads would drag in data nobody asked for.")
            } else {
                (
                    Severity::Pass,
                    "Nothing to do: read-ahead is between 4 KiB and 4 MiB.",
                )
            };
            out.push(Check::new("device.read_ahead_kb", sev, d, ev, rec));
        }
    }
}

fn device_checks(root: &Root, d: &str, array: bool, out: &mut Vec<Check>) {
    let q = |f: &str| format!("sys/class/block/{d}/queue/{f}");

    // Scheduler: the bracketed entry.
    let rel = q("scheduler");
    match root.read(&rel) {
        Err(e) => out.push(Check::unknown("device.scheduler", d, e)),
        Ok(s) => {
            let active = s
                .split_whitespace()
                .find(|w| w.starts_with('['))
                .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
                .unwrap_or_else(|| s.clone());
            let ev = format!("scheduler {active} (of \"{s}\") from {}", shown(&rel));
            let (sev, rec) = match active.as_str() {
                "bfq" | "cfq" => (Severity::Warn, "Use mq-deadline (or none on NVMe): fairness schedulers add latency and cap throughput under database load."),
                "none" | "noop" | "mq-deadline" | "deadline" | "kyber" => (Severity::Pass, "Nothing to do: a low-overhead scheduler."),
                _ => (Severity::Info, "Prefer mq-deadline, or none on NVMe."),
            };
            out.push(Check::new("device.scheduler", sev, d, ev, rec));
        }
    }

    // nr_requests: the block layer's per-queue cap.
    let nr_rel = q("nr_requests");
    let nr = root.read_u64(&nr_rel);
    match &nr {
        Err(e) => out.push(Check::unknown("device.nr_requests", d, e.clone())),
        Ok(n) => {
            let ev = format!("nr_requests {n} from {}", shown(&nr_rel));
            if *n < 32 {
                out.push(Check::new("device.nr_requests", Severity::Warn, d, ev, "Raise nr_requests to at least 64: the block layer would hold back I/O the device could take."));
            } else {
                out.push(Check::new(
                    "device.nr_requests",
                    Severity::Pass,
                    d,
                    ev,
                    "Nothing to do.",
                ));
            }
        }
    }

    // Queue depth: SCSI device/queue_depth, else nr_requests.
    let qd_rel = format!("sys/class/block/{d}/device/queue_depth");
    let qd = match root.read_u64(&qd_rel) {
        Ok(v) => Ok((v, shown(&qd_rel))),
        Err(_) => nr.clone().map(|v| (v, shown(&nr_rel))),
    };
    match qd {
        Err(e) => out.push(Check::unknown("device.queue_depth", d, e)),
        Ok((v, src)) => {
            let ev = format!(
                "queue depth {v} from {src}; array-backed: {}",
                if array { "yes" } else { "no" }
            );
            let (sev, rec) = if v < 32 && array {
                (Severity::Warn, "Raise the HBA / device queue depth (64 or more for an array): 8 to 32 outstanding I/Os starve an array of many spindles or SSDs.")
            } else if v < 32 {
                (Severity::Info, "A queue depth under 32 is fine for one disk but starves an array or a fast SSD.")
            } else {
                (
                    Severity::Pass,
                    "Nothing to do: the queue depth is 32 or more.",
                )
            };
            out.push(Check::new("device.queue_depth", sev, d, ev, rec));
        }
    }

    read_ahead(root, d, out);

    let ms_rel = q("max_sectors_kb");
    match root.read_u64(&ms_rel) {
        Err(e) => out.push(Check::unknown("device.max_sectors_kb", d, e)),
        Ok(kb) => {
            let hw = root.read_u64(&q("max_hw_sectors_kb")).ok();
            let ev = format!(
                "max_sectors_kb {kb} (hardware limit {}) from {}",
                hw.map(|h| h.to_string())
                    .unwrap_or_else(|| "unknown".into()),
                shown(&ms_rel)
            );
            if kb < 256 {
                out.push(Check::new("device.max_sectors_kb", Severity::Warn, d, ev, "Raise max_sectors_kb toward max_hw_sectors_kb (at least 256, ideally 1024): scans and backups issue 256 KB to 1 MB I/Os that would be split."));
            } else {
                out.push(Check::new(
                    "device.max_sectors_kb",
                    Severity::Pass,
                    d,
                    ev,
                    "Nothing to do: 256 KB and larger I/Os go through whole.",
                ));
            }
        }
    }

    let wc_rel = q("write_cache");
    match root.read(&wc_rel) {
        Err(e) => out.push(Check::unknown("device.write_cache", d, e)),
        Ok(wc) => {
            let ev = format!("write_cache \"{wc}\" from {}", shown(&wc_rel));
            let rec = if wc == "write back" {
                "Volatile write cache: the kernel sends flushes, so commits wait for them; make sure barriers stay on, and expect results to differ by several times from write-through."
            } else {
                "Write-through: every write waits for the medium; a power-loss-protected controller cache in write-back mode can cut log latency several times."
            };
            out.push(Check::new("device.write_cache", Severity::Info, d, ev, rec));
        }
    }

    let rot_rel = q("rotational");
    match root.read(&rot_rel) {
        Err(e) => out.push(Check::unknown("device.rotational", d, e)),
        Ok(v) => {
            let kind = if v == "1" {
                "rotational (spinning disk, or a virtual disk that claims to be one)"
            } else {
                "non-rotational (SSD / NVMe)"
            };
            out.push(Check::new(
                "device.rotational",
                Severity::Info,
                d,
                format!("rotational {v} from {}: {kind}", shown(&rot_rel)),
                "Use latency guidelines for this device class: 1 to 5 ms for log writes on disks, far less on flash.",
            ));
        }
    }

    let lb_rel = q("logical_block_size");
    let pb_rel = q("physical_block_size");
    match (root.read_u64(&lb_rel), root.read_u64(&pb_rel)) {
        (Ok(l), Ok(p)) => {
            let ev = format!(
                "logical {l} B, physical {p} B from {} and {}",
                shown(&lb_rel),
                shown(&pb_rel)
            );
            if l < p {
                out.push(Check::new("device.block_size", Severity::Warn, d, ev, "512e device: keep every write 4 KiB aligned (partition at 1 MiB, 4 KiB file-system blocks, log sector size 4096) or the drive does read-modify-write."));
            } else {
                out.push(Check::new(
                    "device.block_size",
                    Severity::Pass,
                    d,
                    ev,
                    "Nothing to do: logical and physical sectors match.",
                ));
            }
        }
        (Err(e), _) | (_, Err(e)) => out.push(Check::unknown("device.block_size", d, e)),
    }
}

fn md_check(root: &Root, m: &str, out: &mut Vec<Check>) {
    let rel = |f: &str| format!("sys/class/block/{m}/md/{f}");
    let level = match root.read(&rel("level")) {
        Ok(l) => l,
        Err(e) => {
            out.push(Check::unknown("md.raid", m, e));
            return;
        }
    };
    let chunk = root.read_u64(&rel("chunk_size")).ok();
    let disks = root.read_u64(&rel("raid_disks")).ok();
    let degraded = root.read_u64(&rel("degraded")).ok();
    let ev = format!(
        "level {level}, chunk {} B, raid_disks {}, degraded {} from {}",
        chunk
            .map(|c| c.to_string())
            .unwrap_or_else(|| "unknown".into()),
        disks
            .map(|c| c.to_string())
            .unwrap_or_else(|| "unknown".into()),
        degraded
            .map(|c| c.to_string())
            .unwrap_or_else(|| "unknown".into()),
        shown(&format!("sys/class/block/{m}/md/"))
    );
    let (sev, rec) = if degraded.unwrap_or(0) > 0 {
        (Severity::Fail, "The array is degraded: replace the failed member before testing or going live; results now are neither fast nor safe.")
    } else if level == "raid0" {
        (Severity::Warn, "RAID 0 has no redundancy: one disk failure loses the database; use RAID 10 for data and log.")
    } else if level == "raid5" || level == "raid6" {
        (Severity::Info, "Parity RAID pays several I/Os per small random write: fine for read-mostly data, costly for the log and write-heavy OLTP.")
    } else {
        (Severity::Info, "Check the chunk against the workload: 64 KiB to 256 KiB suits database pages and scans.")
    };
    out.push(Check::new("md.raid", sev, m, ev, rec));
}

/// Bytes with a binary unit: `66961948672 B (62.4 GiB)`.
fn size(b: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64;
    let mut u = "B";
    for unit in UNITS {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        u = unit;
    }
    format!("{b} B ({v:.1} {u})")
}

/// The partition checks of a whole block device audited by its node (`/dev/loop0`): its table
/// read from the device itself ([`crate::parttable`]), one `partition.alignment` (and
/// `partition.stripe_alignment`) per partition. These replace the kernel-view checks, which
/// for a whole device only say that it is not a partition.
pub fn device_table_checks(
    root: &Root,
    r: &Resolved,
    node: &Path,
    opts: &AuditOptions,
) -> Vec<Check> {
    let mut out = Vec::new();
    let Some(dev) = r.block_device.as_deref() else {
        return out;
    };
    let c = chain(root, dev);
    let stripe = stripe_unit(root, Some(dev), &c, opts);
    let lba = root
        .read_u64(&format!("sys/class/block/{dev}/queue/logical_block_size"))
        .unwrap_or(512)
        .max(512);
    let node_shown = node.display();
    match crate::parttable::read(node, lba) {
        Err(e) => {
            out.push(Check::unknown("partition.alignment", dev, e.clone()));
            out.push(Check::unknown("partition.stripe_alignment", dev, e));
        }
        Ok(parts) if parts.is_empty() => out.push(Check::new(
            "partition.alignment",
            Severity::Pass,
            dev,
            format!(
                "no partition table on {node_shown} (read by iocap): whatever is on it starts \
                 at offset 0"
            ),
            "Nothing to do: a whole-device file system or database file is aligned.",
        )),
        Ok(parts) => {
            for e in parts {
                let evidence = format!(
                    "partition {} starts at logical block {} ({} B blocks) = {} B, from the {} \
                     of {node_shown} (read by iocap)",
                    e.number,
                    e.start_lba,
                    e.lba_bytes,
                    e.start_bytes(),
                    e.scheme
                );
                let subject = format!("{dev} partition {}", e.number);
                alignment_checks(
                    &subject,
                    e.start_bytes(),
                    evidence,
                    stripe.as_ref(),
                    &mut out,
                );
            }
        }
    }
    out
}

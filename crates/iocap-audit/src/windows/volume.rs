//! The checks on the volume under a path and on the disks under it.

use crate::Finding;
use std::path::Path;

use super::decode::{self, Extent, PartitionInfo};
use super::{disk_name, disk_path, unresolved, Query, Source};
use crate::checks::{alignment_checks_with, free_space, stripe_divisible, AlignFix, Stripe};
use crate::{AuditOptions, Check, DbFamily, Resolved, Severity};

const KIB: u64 = 1024;

/// The advice for a partition offset, in diskpart's words.
const WINDOWS_FIX: AlignFix = AlignFix {
    warn: "Re-create the partition at a 1 MiB boundary (diskpart: create partition primary align=1024) so it divides evenly by any stripe unit.",
    fail: "Re-create the partition at a 1 MiB boundary (diskpart: create partition primary align=1024): this offset (Windows Server 2003 put partitions at 31.5 KiB) splits pages and stripe units; seed 002 measured 64 KiB against 32 KiB offsets at 5 to 11 % more IOPS.",
    no_stripe: "no stripe unit: Windows exposes none through these calls (give --stripe-unit for hardware RAID, a striped volume or Storage Spaces' interleave)",
};

/// The resolved target and every check on the volume under `path` and its disks.
pub fn target(src: &dyn Source, path: &Path, opts: &AuditOptions) -> (Resolved, Vec<Check>) {
    let shown = path.display().to_string();
    let vol = match src.volume(path) {
        Ok(v) => v,
        Err(e) => {
            return (
                unresolved(path),
                vec![Check::unknown("resolve.path", &shown, e)],
            )
        }
    };
    let mut out = Vec::new();
    let part = read(
        src,
        &vol.device,
        Query::PartitionInfo,
        "PARTITION_INFORMATION_EX",
        decode::partition_info,
    );
    let extents = read(
        src,
        &vol.device,
        Query::DiskExtents,
        "VOLUME_DISK_EXTENTS",
        decode::disk_extents,
    );
    let mut disks: Vec<u32> = extents.iter().flatten().map(|e| e.disk).collect();
    disks.sort_unstable();
    disks.dedup();
    let stripe = opts.stripe_unit_bytes.filter(|b| *b > 0).map(|b| Stripe {
        bytes: b,
        source: "the stripe unit given in the options".into(),
    });

    alignment(
        &vol.root,
        &vol.device,
        &part,
        &extents,
        stripe.as_ref(),
        &mut out,
    );
    let descriptors: Vec<(u32, Result<decode::DeviceDescriptor, String>)> = disks
        .iter()
        .map(|d| {
            let what = "STORAGE_DEVICE_DESCRIPTOR";
            let q = Query::Property(decode::STORAGE_DEVICE_PROPERTY);
            (
                *d,
                read(src, &disk_path(*d), q, what, decode::device_descriptor),
            )
        })
        .collect();
    out.push(layout(&vol.root, &part, &extents, &descriptors));
    allocation_unit(src, &vol.root, &vol.fs, stripe.as_ref(), opts, &mut out);
    for d in &disks {
        disk_checks(src, *d, &mut out);
    }
    let resolved = Resolved {
        path: shown,
        mount_point: Some(vol.root.clone()),
        fs_type: vol.fs.clone().ok(),
        mount_options: Vec::new(),
        partition: part
            .as_ref()
            .ok()
            .map(|p| format!("partition {} ({})", p.number, p.style)),
        devices: disks.iter().map(|d| disk_name(*d)).collect(),
        block_device: Some(vol.device.clone()),
    };
    (resolved, out)
}

/// `partition.alignment` and `partition.stripe_alignment`: the partition's offset where
/// Windows gives it, else each extent's offset on its disk (a dynamic or Storage Spaces volume
/// is no partition).
fn alignment(
    root: &str,
    device: &str,
    part: &Result<PartitionInfo, String>,
    extents: &Result<Vec<Extent>, String>,
    stripe: Option<&Stripe>,
    out: &mut Vec<Check>,
) {
    match (part, extents) {
        (Ok(p), _) if p.style != "RAW" => {
            let ev = format!(
                "{} partition {} starts at {} B{} from IOCTL_DISK_GET_PARTITION_INFO_EX on {device}",
                p.style,
                p.number,
                p.offset,
                kib(p.offset)
            );
            alignment_checks_with(root, p.offset, ev, stripe, &WINDOWS_FIX, out);
        }
        (_, Ok(ext)) => {
            for e in ext {
                let ev = format!(
                    "the volume's extent on {} starts at {} B{} from IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS on {device}",
                    disk_name(e.disk),
                    e.offset,
                    kib(e.offset)
                );
                let subject = format!("{root} on {}", disk_name(e.disk));
                alignment_checks_with(&subject, e.offset, ev, stripe, &WINDOWS_FIX, out);
            }
        }
        (Ok(_), Err(e)) => {
            out.push(Check::new(
                "partition.alignment",
                Severity::Pass,
                root,
                format!("RAW partition style on {device}: the volume starts at offset 0; {e}"),
                "Nothing to do: a whole-device volume is aligned.",
            ));
        }
        (Err(a), Err(b)) => {
            let why = format!("{a}; {b}");
            out.push(Check::unknown("partition.alignment", root, why.clone()));
            out.push(Check::unknown("partition.stripe_alignment", root, why));
        }
    }
}

/// ` (31.5 KiB)` for an offset that is not a whole number of MiB.
fn kib(b: u64) -> String {
    if b % (1 << 20) == 0 {
        format!(" ({} MiB)", b >> 20)
    } else {
        format!(" ({:.1} KiB)", b as f64 / KIB as f64)
    }
}

/// `volume.layout`: a simple volume, or one over several disks, Storage Spaces or a RAID LUN.
fn layout(
    root: &str,
    part: &Result<PartitionInfo, String>,
    extents: &Result<Vec<Extent>, String>,
    descriptors: &[(u32, Result<decode::DeviceDescriptor, String>)],
) -> Check {
    let ext = match extents {
        Ok(e) => e,
        Err(e) => return Check::unknown("volume.layout", root, e.clone()),
    };
    let disks: Vec<String> = descriptors
        .iter()
        .map(|(n, d)| match d {
            Ok(d) => format!(
                "{} ({} bus{})",
                disk_name(*n),
                d.bus_name(),
                [d.vendor.as_str(), d.product.as_str()]
                    .iter()
                    .filter(|s| !s.is_empty())
                    .fold(String::new(), |a, s| a + " " + s)
                    .replacen(' ', ", ", 1)
            ),
            Err(_) => format!("{} (bus not read)", disk_name(*n)),
        })
        .collect();
    let bus = |t: u32| {
        descriptors
            .iter()
            .any(|(_, d)| d.as_ref().is_ok_and(|d| d.bus_type == t))
    };
    let kind = part.as_ref().map(|p| p.kind.as_str()).unwrap_or("");
    let dynamic = kind == decode::MBR_LDM || kind == decode::GPT_LDM_DATA;
    let what = if bus(decode::BUS_TYPE_SPACES) {
        "a Storage Spaces virtual disk".to_string()
    } else if descriptors.len() > 1 {
        let same = ext.windows(2).all(|w| w[0].length == w[1].length);
        if same {
            format!(
                "{} equal extents on {} disks: a striped, mirrored or RAID-5 dynamic volume",
                ext.len(),
                descriptors.len()
            )
        } else {
            format!(
                "{} extents of different sizes on {} disks: a spanned dynamic volume",
                ext.len(),
                descriptors.len()
            )
        }
    } else if dynamic {
        "a simple volume on a dynamic disk".to_string()
    } else if part.is_err() {
        "one disk, no partition information: a simple volume on a dynamic disk, or a call \
         Windows refused"
            .to_string()
    } else {
        "a simple volume: one partition on one basic disk".to_string()
    };
    let raid = if bus(decode::BUS_TYPE_RAID) {
        "; the disk is a RAID controller's LUN"
    } else {
        ""
    };
    Check::new(
        "volume.layout",
        Severity::Info,
        root,
        format!(
            "{what}{raid}: {} from IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS and IOCTL_STORAGE_QUERY_PROPERTY(StorageDeviceProperty)",
            disks.join(", ")
        ),
        "Windows does not give the stripe unit through these calls: give --stripe-unit (the RAID controller's stripe, Storage Spaces' interleave from Get-VirtualDisk, 64 KiB for a dynamic striped volume) so the offset and allocation unit are checked against it.",
    )
}

/// `fs.block_size` (the cluster against SQL Server's 64 KiB), `fs.stripe_divisible` and
/// `fs.free_space`.
fn allocation_unit(
    src: &dyn Source,
    root: &str,
    fs: &Result<String, String>,
    stripe: Option<&Stripe>,
    opts: &AuditOptions,
    out: &mut Vec<Check>,
) {
    let fs_name = fs.as_deref().unwrap_or("unknown file system");
    match src.cluster(root) {
        Err(e) => {
            let e = format!("GetDiskFreeSpaceW({root}) cannot be read here: {e}");
            out.push(Check::unknown("fs.block_size", root, e.clone()));
            out.push(Check::unknown("fs.stripe_divisible", root, e));
        }
        Ok((spc, bps)) => {
            let bs = u64::from(spc) * u64::from(bps);
            let ev = format!(
                "{fs_name} allocation unit {bs} B = {spc} sectors per cluster x {bps} B per sector from GetDiskFreeSpaceW({root})"
            );
            out.push(cluster_check(root, bs, ev, opts.profile));
            if bs > 0 {
                out.push(stripe_divisible(
                    root,
                    bs,
                    stripe,
                    "no stripe unit known (Windows exposes none through these calls; none given)",
                ));
            }
        }
    }
    match src.free_space(root) {
        Ok((avail, total)) => out.push(free_space(root, avail, total, "GetDiskFreeSpaceExW", opts)),
        Err(e) => out.push(Check::unknown(
            "fs.free_space",
            root,
            format!("GetDiskFreeSpaceExW({root}) cannot be read here: {e}"),
        )),
    }
}

/// Where the 64 KiB advice comes from, for the evidence's reader.
const SQL_64K: &str = "SQL Server's guidance (Microsoft's \"Disk Partition Alignment Best Practices for SQL Server\", and seed 002's tests) is a 64 KiB allocation unit for data and log volumes: SQL Server allocates extents of eight 8 KiB pages";

fn cluster_check(root: &str, bs: u64, ev: String, profile: Option<DbFamily>) -> Check {
    let sql = matches!(profile, None | Some(DbFamily::Sqlserver));
    let (sev, rec) = if bs < 4096 {
        (Severity::Warn, format!("Re-format with a larger allocation unit (format /A:64K for SQL Server): clusters under 4 KiB fragment 8 KB pages and add metadata I/O. {SQL_64K}."))
    } else if bs >= 64 * KIB || !sql {
        (Severity::Pass, "Nothing to do: the allocation unit is at least 64 KiB (or at least 4 KiB for a database other than SQL Server).".to_string())
    } else if profile == Some(DbFamily::Sqlserver) {
        (Severity::Warn, format!("Re-format the volume with a 64 KiB allocation unit (format /A:64K) before SQL Server's files go on it. {SQL_64K}."))
    } else {
        (Severity::Info, format!("For SQL Server data and log volumes use 64 KiB (format /A:64K); --profile sqlserver makes this a WARN. {SQL_64K}."))
    };
    Check::new("fs.block_size", sev, root, ev, rec)
}

/// `q` on `dev`, its failure saying which call on which device cannot be read here.
fn query(src: &dyn Source, dev: &str, q: Query) -> Result<Vec<u8>, String> {
    src.ioctl(dev, q)
        .map_err(|e| format!("{} on {dev} cannot be read here: {e}", q.name()))
}

/// `q` on `dev` decoded by `f`; an answer `f` does not take says so with its length.
fn read<T>(
    src: &dyn Source,
    dev: &str,
    q: Query,
    what: &str,
    f: fn(&[u8]) -> Option<T>,
) -> Result<T, String> {
    let b = query(src, dev, q)?;
    f(&b).ok_or_else(|| {
        format!(
            "{} on {dev} answered {} B: no {what}, or one that lists nothing",
            q.name(),
            b.len()
        )
    })
}

/// Each disk's write cache, buffer flushing, TRIM, seek penalty and sector sizes.
fn disk_checks(src: &dyn Source, n: u32, out: &mut Vec<Check>) {
    let (name, path) = (disk_name(n), disk_path(n));
    let wc = read(
        src,
        &path,
        Query::Property(decode::STORAGE_WRITE_CACHE_PROPERTY),
        "STORAGE_WRITE_CACHE_PROPERTY",
        decode::write_cache_property,
    );
    let ci = read(
        src,
        &path,
        Query::CacheInformation,
        "DISK_CACHE_INFORMATION",
        decode::cache_information,
    );
    out.push(super::cache::write_cache(&name, &wc, &ci));
    out.push(super::cache::flushing(&name, &wc));
    let trim = read(
        src,
        &path,
        Query::Property(decode::STORAGE_TRIM_PROPERTY),
        "DEVICE_TRIM_DESCRIPTOR",
        decode::boolean_descriptor,
    );
    out.push(match trim {
        Err(e) => Check::unknown("device.trim", &name, e),
        Ok(true) => Check::new("device.trim", Severity::Pass, &name, "TRIM/unmap enabled (DEVICE_TRIM_DESCRIPTOR.TrimEnabled) from IOCTL_STORAGE_QUERY_PROPERTY(StorageDeviceTrimProperty)", "Nothing to do: deletes and shrinks tell the device which blocks are free."),
        Ok(false) => Check::new("device.trim", Severity::Info, &name, "TRIM/unmap not enabled (DEVICE_TRIM_DESCRIPTOR.TrimEnabled) from IOCTL_STORAGE_QUERY_PROPERTY(StorageDeviceTrimProperty)", "Fine for spinning disks; an SSD or thin LUN without TRIM/unmap slows as it fills (check fsutil behavior query DisableDeleteNotify and the controller)."),
    });
    let seek = read(
        src,
        &path,
        Query::Property(decode::STORAGE_SEEK_PENALTY_PROPERTY),
        "DEVICE_SEEK_PENALTY_DESCRIPTOR",
        decode::boolean_descriptor,
    );
    out.push(match seek {
        Err(e) => Check::unknown("device.rotational", &name, e),
        Ok(p) => Check::new(
            "device.rotational",
            Severity::Info,
            &name,
            format!(
                "IncursSeekPenalty {} from IOCTL_STORAGE_QUERY_PROPERTY(StorageDeviceSeekPenaltyProperty): {}",
                p as u8,
                if p { "rotational (spinning disk, or a virtual disk that claims to be one)" } else { "non-rotational (SSD / NVMe)" }
            ),
            "Use latency guidelines for this device class: 1 to 5 ms for log writes on disks, far less on flash.",
        ),
    });
    let align = read(
        src,
        &path,
        Query::Property(decode::STORAGE_ACCESS_ALIGNMENT_PROPERTY),
        "STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR",
        decode::access_alignment,
    );
    out.push(match align {
        Err(e) => Check::unknown("device.block_size", &name, e),
        Ok((l, p)) => {
            let ev = format!("logical {l} B, physical {p} B from IOCTL_STORAGE_QUERY_PROPERTY(StorageAccessAlignmentProperty)");
            if l < p {
                Check::new("device.block_size", Severity::Warn, &name, ev, "512e device: keep every write 4 KiB aligned (partition at 1 MiB, 4 KiB file-system blocks, log sector size 4096) or the drive does read-modify-write.")
            } else {
                Check::new("device.block_size", Severity::Pass, &name, ev, "Nothing to do: logical and physical sectors match.")
            }
        }
    });
}

//! What the figures mean: the fastest method per size, durable writes too fast to be true for
//! the device, and what to set in each database. Pure functions over the measured points; a
//! run of Windows' methods gets Windows' advice ([`windows`]).

mod windows;

use iocap_model::fsync::best_per_size;
use iocap_model::{format_bytes, format_us, DbFamily, DeviceClass, FsyncPoint};

use crate::method::Method;

/// What sysfs says about the device under the target: its class and how it takes a flush.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceFlags {
    pub rotational: Option<bool>,
    /// `write back` or `write through`.
    pub write_cache: Option<String>,
    pub fua: Option<bool>,
}

impl DeviceFlags {
    /// Reads `queue/rotational`, `queue/write_cache` and `queue/fua` of the sysfs block device
    /// `dev` (for a partition, of its disk).
    pub fn from_sysfs(dev: &str) -> DeviceFlags {
        let read = |name: &str| {
            ["queue", "../queue"].iter().find_map(|q| {
                std::fs::read_to_string(format!("/sys/class/block/{dev}/{q}/{name}"))
                    .ok()
                    .map(|s| s.trim().to_string())
            })
        };
        DeviceFlags {
            rotational: read("rotational").map(|s| s == "1"),
            write_cache: read("write_cache"),
            fua: read("fua").map(|s| s == "1"),
        }
    }

    /// Rotational or flash (an unknown flag counts as flash).
    pub fn class(&self) -> DeviceClass {
        DeviceClass::from_rotational(self.rotational)
    }

    fn write_back(&self) -> bool {
        self.write_cache.as_deref() == Some("write back")
    }
}

/// Median latency below which a durable write is implausible on a rotating disk: a flush must
/// wait for the platter, and even a short seek plus part of a 15k rpm revolution is over 1 ms.
pub const HDD_MIN_P50_US: f64 = 1000.0;
/// ... on a non-rotating device that reports a volatile (`write back`) cache: honouring a flush
/// means programming flash, which takes tens of microseconds at least without power-loss
/// protection (devices with it report `write through`).
pub const VOLATILE_CACHE_MIN_P50_US: f64 = 50.0;
/// ... on anything: below this no device round trip took place.
pub const ANY_MIN_P50_US: f64 = 5.0;

fn p50(p: &FsyncPoint) -> Option<f64> {
    p.lat_us.as_ref().map(|l| l.p50).filter(|_| p.available)
}

/// Warnings for durable writes that finished faster than the device class allows: the
/// quickest median of each size is checked against the threshold of the class.
pub fn implausibility_warnings(
    points: &[FsyncPoint],
    class: &DeviceFlags,
    device: Option<&str>,
) -> Vec<String> {
    let dev = device.unwrap_or("the device");
    let (limit, what) = if class.class() == DeviceClass::Rotational {
        (
            HDD_MIN_P50_US,
            format!(
                "{dev} reports itself rotating (rotational=1), and a disk cannot make a write \
                 durable in under about {HDD_MIN_P50_US:.0} µs"
            ),
        )
    } else if class.write_back() {
        (
            VOLATILE_CACHE_MIN_P50_US,
            format!(
                "{dev} reports a volatile write cache (write_cache=write back), and a flush that \
                 reaches its media takes more than about {VOLATILE_CACHE_MIN_P50_US:.0} µs"
            ),
        )
    } else {
        (
            ANY_MIN_P50_US,
            format!("no storage device completes a durable write in under {ANY_MIN_P50_US:.0} µs"),
        )
    };
    let mut fast: Vec<(u64, f64, &str)> = Vec::new();
    for best in fastest_by_p50(points) {
        if let Some(v) = p50(best).filter(|v| *v < limit) {
            let label = best.method.label();
            fast.push((best.size_bytes, v, label));
        }
    }
    if fast.is_empty() {
        return vec![];
    }
    let shown: Vec<String> = fast
        .iter()
        .map(|(s, v, m)| format!("{} {v:.0} µs ({m})", format_bytes(*s)))
        .collect();
    vec![format!(
        "durable writes are implausibly fast: median {}; {what}. Either a battery- or \
         flash-backed cache (a RAID controller, an array, a hypervisor with protected cache) \
         absorbs them, or a volatile write cache does not honour flushes, and a volatile write \
         cache that does not honour flushes loses committed transactions on power loss. Find \
         out which before trusting these figures",
        shown.join(", ")
    )]
}

/// The point with the lowest median latency at each size.
fn fastest_by_p50(points: &[FsyncPoint]) -> Vec<&FsyncPoint> {
    best_per_size(points, |at| {
        at.into_iter()
            .filter(|p| p50(p).is_some())
            .min_by(|a, b| p50(a).unwrap_or(f64::MAX).total_cmp(&p50(b).unwrap_or(0.0)))
    })
}

/// The size a family's log writes are judged at: 16 KiB for InnoDB, 8 KiB otherwise; the
/// nearest measured size when that one was not measured.
fn judged_size(profile: DbFamily, points: &[FsyncPoint]) -> Option<u64> {
    let want: u64 = if profile == DbFamily::Mysql {
        16 << 10
    } else {
        8 << 10
    };
    points
        .iter()
        .filter(|p| p.available && p.ops > 0)
        .map(|p| p.size_bytes)
        .min_by_key(|s| s.abs_diff(want))
}

fn at(points: &[FsyncPoint], size: u64, m: Method) -> Option<&FsyncPoint> {
    points
        .iter()
        .find(|p| p.size_bytes == size && p.method == m && p.available && p.ops > 0)
}

fn figure(p: Option<&FsyncPoint>) -> String {
    match p {
        Some(p) => {
            let p99 = p.lat_us.as_ref().map_or(0.0, |l| l.p99);
            format!("{:.0} ops/s, p99 {}", p.ops_per_s, format_us(p99))
        }
        None => "not measured".into(),
    }
}

fn ops(p: Option<&FsyncPoint>) -> f64 {
    p.map_or(0.0, |p| p.ops_per_s)
}

/// One or two plain sentences for `profile`, with the measured numbers: for the system the
/// points were measured on (Windows' methods get Windows' settings).
pub fn recommendation(profile: DbFamily, points: &[FsyncPoint], fua: Option<bool>) -> String {
    let Some(size) = judged_size(profile, points) else {
        return "Nothing was measured, so there is nothing to recommend.".into();
    };
    if windows::measured_on_windows(points) {
        return windows::recommendation(profile, points, size);
    }
    let sz = format_bytes(size);
    match profile {
        DbFamily::Postgres => {
            // wal_sync_method values and what the server does with them at the default
            // wal_level (replica): no O_DIRECT for open_datasync and open_sync
            let cands = [
                ("fdatasync", Method::Fdatasync),
                ("fsync", Method::Fsync),
                ("open_datasync", Method::ODsync),
                ("open_sync", Method::OSync),
            ];
            let best = cands
                .iter()
                .filter_map(|(name, m)| at(points, size, *m).map(|p| (*name, p)))
                .max_by(|a, b| a.1.ops_per_s.total_cmp(&b.1.ops_per_s));
            let Some((name, p)) = best else {
                return format!("PostgreSQL: no wal_sync_method could be measured at {sz}.");
            };
            let default = at(points, size, Method::Fdatasync);
            let first = if name == "fdatasync" || ops(default) >= p.ops_per_s * 0.95 {
                format!(
                    "PostgreSQL: keep wal_sync_method = fdatasync (the Linux default): at {sz} it \
                     does {}, and no other method is more than 5 % faster here",
                    figure(default)
                )
            } else if default.is_none() {
                format!(
                    "PostgreSQL: wal_sync_method = {name} is fastest here at {sz} ({}); \
                     fdatasync, the Linux default, was not measured",
                    figure(Some(p))
                )
            } else {
                format!(
                    "PostgreSQL: wal_sync_method = {name} is fastest here at {sz} ({}), against \
                     {} for fdatasync, the Linux default",
                    figure(Some(p)),
                    figure(default)
                )
            };
            let direct = at(points, size, Method::ODirectODsync);
            format!(
                "{first}. open_datasync adds O_DIRECT only at wal_level = minimal up to \
                 PostgreSQL 15, or with debug_io_direct = wal from 16 (O_DIRECT|O_DSYNC: {}).",
                figure(direct)
            )
        }
        DbFamily::Mysql => {
            let fsync = at(points, size, Method::Fsync);
            let osync = at(points, size, Method::OSync);
            let pick = if ops(osync) > ops(fsync) * 1.05 {
                "O_DSYNC flushes the redo log faster here, though O_DIRECT still keeps data \
                 pages out of the page cache; measure both under load before switching"
            } else {
                "O_DIRECT is the choice: the same redo flush as fsync, and data pages kept out \
                 of the page cache"
            };
            format!(
                "MySQL/InnoDB: with innodb_flush_method = fsync or O_DIRECT the redo log is \
                 written then fsynced ({}, at {sz}), with O_DSYNC it is opened O_SYNC ({}). {pick}.",
                figure(fsync),
                figure(osync)
            )
        }
        DbFamily::Sqlserver => {
            let fua_p = at(points, size, Method::ODirectODsync);
            let flush = at(points, size, Method::Fdatasync);
            let dev = match fua {
                Some(true) => "this device accepts FUA writes (queue/fua=1)",
                Some(false) => {
                    "this device does not take FUA writes (queue/fua=0), so the kernel \
                                turns each into a write and a cache flush"
                }
                None => "whether this device takes FUA writes is unknown",
            };
            format!(
                "SQL Server on Linux: with FUA (trace flag 3979, \
                 control.alternatewritethrough = 0) its log writes are O_DIRECT|O_DSYNC ({} at \
                 {sz}); in forced-flush mode they are written then flushed, like write + \
                 fdatasync ({}). {}{}.",
                figure(fua_p),
                figure(flush),
                dev[..1].to_uppercase(),
                &dev[1..]
            )
        }
        DbFamily::Oracle => {
            let setall = at(points, size, Method::ODirectODsync);
            let buffered = at(points, size, Method::ODsync);
            let verdict = if ops(setall) >= ops(buffered) * 0.95 {
                "keep filesystemio_options = setall (direct and asynchronous I/O)"
            } else {
                "setall is slower here for single log writes, but it keeps the redo log out of \
                 the page cache; keep it unless log file sync waits dominate"
            };
            format!(
                "Oracle: filesystemio_options = setall opens the redo log O_DIRECT|O_DSYNC ({} \
                 at {sz}), against {} through the page cache (O_DSYNC); {verdict}.",
                figure(setall),
                figure(buffered)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iocap_model::fsync::fastest_per_size;
    use iocap_model::LatencyUs;

    fn pt(m: Method, size: u64, ops_per_s: f64) -> FsyncPoint {
        let mean = 1e6 / ops_per_s;
        FsyncPoint {
            method: m.into(),
            size_bytes: size,
            ops: (ops_per_s * 2.0) as u64,
            duration_s: 2.0,
            ops_per_s,
            lat_us: Some(LatencyUs {
                mean,
                p50: mean,
                p90: mean * 1.2,
                p99: mean * 2.0,
                p99_9: mean * 3.0,
                max: mean * 4.0,
                ..LatencyUs::default()
            }),
            available: true,
            reason: None,
        }
    }

    fn figures(f: &[(Method, f64)]) -> Vec<FsyncPoint> {
        [8192u64, 16384]
            .iter()
            .flat_map(|s| f.iter().map(move |(m, o)| pt(*m, *s, *o)))
            .collect()
    }

    #[test]
    fn postgres_without_fdatasync_measured_says_so_plainly() {
        let pts = figures(&[(Method::Fsync, 900.0), (Method::ODsync, 1000.0)]);
        let r = recommendation(DbFamily::Postgres, &pts, None);
        assert!(r.contains("open_datasync is fastest"), "{r}");
        assert!(
            r.contains("fdatasync, the Linux default, was not measured"),
            "{r}"
        );
        assert!(!r.contains("against not measured"), "{r}");
    }

    #[test]
    fn postgres_keeps_fdatasync_unless_another_is_clearly_faster() {
        let close = figures(&[
            (Method::Fdatasync, 1000.0),
            (Method::ODsync, 1030.0),
            (Method::Fsync, 500.0),
            (Method::OSync, 900.0),
        ]);
        let r = recommendation(DbFamily::Postgres, &close, None);
        assert!(r.contains("keep wal_sync_method = fdatasync"), "{r}");
        assert!(r.contains("1000 ops/s"), "{r}");
        let clear = figures(&[
            (Method::Fdatasync, 1000.0),
            (Method::ODsync, 1500.0),
            (Method::ODirectODsync, 1800.0),
        ]);
        let r = recommendation(DbFamily::Postgres, &clear, None);
        assert!(
            r.contains("open_datasync is fastest here at 8K (1500 ops/s"),
            "{r}"
        );
        assert!(r.contains("O_DIRECT|O_DSYNC: 1800 ops/s"), "{r}");
    }

    #[test]
    fn mysql_is_judged_at_16k() {
        let mut p = figures(&[(Method::Fsync, 800.0), (Method::OSync, 1200.0)]);
        p.retain(|x| !(x.size_bytes == 16384 && x.method == Method::OSync));
        p.push(pt(Method::OSync, 16384, 700.0));
        let r = recommendation(DbFamily::Mysql, &p, None);
        assert!(r.contains("at 16K"), "{r}");
        assert!(r.contains("O_DIRECT is the choice"), "{r}");
        let p = figures(&[(Method::Fsync, 800.0), (Method::OSync, 1200.0)]);
        let r = recommendation(DbFamily::Mysql, &p, None);
        assert!(r.contains("O_DSYNC flushes the redo log faster"), "{r}");
    }

    #[test]
    fn sqlserver_and_oracle_name_their_settings() {
        let p = figures(&[
            (Method::ODirectODsync, 2000.0),
            (Method::Fdatasync, 1000.0),
            (Method::ODsync, 1900.0),
        ]);
        let r = recommendation(DbFamily::Sqlserver, &p, Some(false));
        assert!(r.contains("2000 ops/s") && r.contains("1000 ops/s"), "{r}");
        assert!(r.contains("queue/fua=0"), "{r}");
        let r = recommendation(DbFamily::Oracle, &p, None);
        assert!(r.contains("keep filesystemio_options = setall"), "{r}");
        assert!(r.contains("1900 ops/s"), "{r}");
    }

    #[test]
    fn nothing_measured_says_so() {
        let r = recommendation(DbFamily::Postgres, &[], None);
        assert!(r.contains("Nothing was measured"), "{r}");
    }

    #[test]
    fn sub_millisecond_flushes_on_a_rotating_disk_are_flagged() {
        // 8K at 2000 ops/s = 500 µs median: too fast for a disk
        let p = figures(&[(Method::Fdatasync, 2000.0), (Method::Fsync, 500.0)]);
        let hdd = DeviceFlags {
            rotational: Some(true),
            write_cache: Some("write back".into()),
            fua: Some(false),
        };
        let w = implausibility_warnings(&p, &hdd, Some("sda"));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("8K 500 µs (write + fdatasync)"), "{}", w[0]);
        assert!(w[0].contains("rotational=1"), "{}", w[0]);
        assert!(
            w[0].contains("loses committed transactions on power loss"),
            "{}",
            w[0]
        );
        // 200 ops/s = 5 ms: a real disk
        let slow = figures(&[(Method::Fdatasync, 200.0)]);
        assert!(implausibility_warnings(&slow, &hdd, Some("sda")).is_empty());
    }

    #[test]
    fn ssd_thresholds_depend_on_the_cache() {
        // 40 µs median
        let p = figures(&[(Method::ODirectODsync, 25_000.0)]);
        let volatile = DeviceFlags {
            rotational: Some(false),
            write_cache: Some("write back".into()),
            fua: None,
        };
        let w = implausibility_warnings(&p, &volatile, Some("nvme0n1"));
        assert!(
            w.len() == 1 && w[0].contains("write_cache=write back"),
            "{w:?}"
        );
        // power-loss protected (write through): 40 µs is fine, 2 µs is not
        let plp = DeviceFlags {
            rotational: Some(false),
            write_cache: Some("write through".into()),
            fua: None,
        };
        assert!(implausibility_warnings(&p, &plp, Some("nvme0n1")).is_empty());
        let tmpfs = figures(&[(Method::Fdatasync, 500_000.0)]);
        assert_eq!(implausibility_warnings(&tmpfs, &plp, None).len(), 1);
    }

    #[test]
    fn unavailable_points_are_never_fastest() {
        let mut p = figures(&[(Method::Fdatasync, 1000.0), (Method::RwfDsync, 5000.0)]);
        for x in &mut p {
            if x.method == Method::RwfDsync {
                x.available = false;
                x.reason = Some("ENOSYS".into());
            }
        }
        let f = fastest_per_size(&p);
        assert_eq!(f.len(), 2);
        assert!(f.iter().all(|x| x.method == Method::Fdatasync));
    }
}

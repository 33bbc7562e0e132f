//! A device's class from evidence, not only from sysfs, and figures no device of the class can
//! deliver.
//!
//! The kernel's `rotational` flag is what the driver was told: a virtio disk reports whatever
//! the hypervisor sets (rotational by default), a SAN LUN whatever the array says, and neither
//! knows about the caches in front of the media. What a device does at queue depth 1 is harder
//! to fake: a spinning disk needs a seek and half a turn for a random read, 2 ms on the fastest
//! 15K rpm drive and 4 to 8 ms on most; flash answers in a tenth of a millisecond or less. So
//! the class is the kernel's unless the measured qd 1 random read latency contradicts it, and
//! then the disagreement is said in words and the class judged from the measurement.
//!
//! Independently of the class's guidelines, a figure beyond what a device of the class can
//! deliver (about 400 random IOPS or 300 MB/s sequential per spinning disk, whether the test
//! ran with O_DIRECT or not) means a cache answered, and a warning names it and the file size
//! that would measure past it.

use iocap_model::TestResult;

use crate::fmt;
use crate::guidelines::DeviceClass;

/// Below this qd 1 random read latency (p50) no spinning disk answered.
pub const SPINNING_MIN_US: f64 = 1_000.0;
/// Above this qd 1 random read latency (p50) no local flash device answered.
pub const FLASH_MAX_US: f64 = 3_000.0;
/// Random IOPS one spinning disk can deliver at most (a 15K rpm drive at a deep queue).
pub const SPINDLE_MAX_IOPS: f64 = 400.0;
/// Sequential MB/s one spinning disk can deliver at most (outer tracks of a recent drive).
pub const SPINDLE_MAX_MB_S: f64 = 300.0;

/// What tells a device's class.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClassEvidence {
    /// The block device's name (`vda`, `nvme0n1`, `sdb`, `dm-3`).
    pub device: Option<String>,
    /// sysfs `queue/rotational`.
    pub kernel_rotational: Option<bool>,
    /// p50 latency of random reads at queue depth 1 on it, in microseconds, with their size.
    pub qd1_read_p50_us: Option<f64>,
    pub qd1_read_bytes: u64,
}

/// The class to judge by, and why when it is not the kernel's.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassJudgement {
    pub class: DeviceClass,
    /// The disagreement between the kernel and the measurement, in words; `None` when they
    /// agree or nothing was measured.
    pub note: Option<String>,
}

/// How the device is attached, from its name.
pub fn transport(device: &str) -> Option<&'static str> {
    let d = device.trim_start_matches("/dev/");
    let known = [
        ("nvme", "nvme"),
        ("vd", "virtio"),
        ("xvd", "xen"),
        ("sd", "scsi"),
        ("dm-", "dm"),
        ("md", "md"),
        ("loop", "loop"),
        ("nbd", "nbd"),
        ("rbd", "rbd"),
    ];
    known
        .iter()
        .find(|(prefix, _)| d.starts_with(prefix))
        .map(|(_, t)| *t)
}

fn flag_source(e: &ClassEvidence) -> String {
    let dev = e.device.as_deref().unwrap_or("the device");
    match e.device.as_deref().and_then(transport) {
        Some("virtio") | Some("xen") => format!(
            "the kernel says {dev} is {{}}, but a virtual disk's flag is whatever the \
             hypervisor sets"
        ),
        Some(t) => format!("the kernel says {dev} ({t}) is {{}}"),
        None => format!("the kernel says {dev} is {{}}"),
    }
}

/// The class from the kernel's flag, overruled by the measured qd 1 latency where the two
/// disagree.
pub fn judge_class(e: &ClassEvidence) -> ClassJudgement {
    let kernel = DeviceClass::from_rotational(e.kernel_rotational);
    let Some(lat) = e.qd1_read_p50_us.filter(|v| v.is_finite() && *v > 0.0) else {
        return ClassJudgement {
            class: kernel,
            note: None,
        };
    };
    let size = fmt::bytes(e.qd1_read_bytes.max(512));
    let says = |what: &str| flag_source(e).replace("{}", what);
    match e.kernel_rotational {
        Some(true) if lat < SPINNING_MIN_US => ClassJudgement {
            class: DeviceClass::Flash,
            note: Some(format!(
                "{}; {size} random reads at qd 1 took {}, which no spinning disk does: a cache \
                 or flash answers, and the figures are judged as flash",
                says("rotational"),
                fmt::ms(lat)
            )),
        },
        Some(false) if lat > FLASH_MAX_US => ClassJudgement {
            class: DeviceClass::Rotational,
            note: Some(format!(
                "{}; {size} random reads at qd 1 took {}, which no local flash does: a spinning \
                 disk, a remote volume or a throttled one answers, and the figures are judged \
                 as rotational",
                says("flash (not rotational)"),
                fmt::ms(lat)
            )),
        },
        _ => ClassJudgement {
            class: kernel,
            note: None,
        },
    }
}

/// The warning for a test whose figure no device of `class` can deliver on `devices` devices,
/// naming the likely cache and the file size that would measure past it; `None` when the
/// figure is plausible. Holds for O_DIRECT and buffered tests alike. Only rotational devices
/// have limits low enough to tell a cache from the media.
pub fn implausible(t: &TestResult, class: DeviceClass, devices: usize) -> Option<String> {
    if class != DeviceClass::Rotational || t.total.ios == 0 {
        return None;
    }
    let n = devices.max(1) as f64;
    let random = t.spec.rw.is_random();
    let (v, max, unit, what) = if random {
        (t.total.iops, SPINDLE_MAX_IOPS * n, "IOPS", "random")
    } else {
        (t.total.mb_s, SPINDLE_MAX_MB_S * n, "MB/s", "sequential")
    };
    if !(v.is_finite() && v > max) {
        return None;
    }
    let size: u64 = t.targets.iter().map(|x| x.size_bytes).sum();
    let cache = if t.direct {
        "a cache below the OS answered (the controller's, the array's, or the host's under a \
         virtual disk)"
    } else {
        "the page cache or a cache below the OS answered"
    };
    Some(format!(
        "{} {what} {unit} is more than {} spinning disk{} deliver{} (about {} per disk): {cache}; \
         the {} test file{} fit{} in it. Measure past it with a file at least four times that \
         cache, or say the class with --device-class",
        fmt::count(v),
        if devices > 1 {
            devices.to_string()
        } else {
            "a".into()
        },
        if devices > 1 { "s" } else { "" },
        if devices > 1 { "" } else { "s" },
        fmt::count(if random {
            SPINDLE_MAX_IOPS
        } else {
            SPINDLE_MAX_MB_S
        }),
        fmt::bytes(size),
        if t.targets.len() > 1 { "s" } else { "" },
        if t.targets.len() > 1 { "" } else { "s" },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(dev: &str, rot: Option<bool>, lat: Option<f64>) -> ClassEvidence {
        ClassEvidence {
            device: Some(dev.into()),
            kernel_rotational: rot,
            qd1_read_p50_us: lat,
            qd1_read_bytes: 8192,
        }
    }

    #[test]
    fn a_fast_rotational_disk_is_a_cache_or_flash() {
        let j = judge_class(&ev("vda", Some(true), Some(100.0)));
        assert_eq!(j.class, DeviceClass::Flash);
        let n = j.note.unwrap();
        assert!(n.contains("the kernel says vda is rotational"), "{n}");
        assert!(n.contains("hypervisor"), "{n}");
        assert!(n.contains("8 KiB random reads at qd 1 took 0.1 ms"), "{n}");
        assert!(
            n.contains("which no spinning disk does: a cache or flash answers"),
            "{n}"
        );
    }

    #[test]
    fn a_slow_flash_device_is_judged_rotational() {
        let j = judge_class(&ev("sdb", Some(false), Some(6_500.0)));
        assert_eq!(j.class, DeviceClass::Rotational);
        let n = j.note.unwrap();
        assert!(n.contains("sdb (scsi) is flash"), "{n}");
        assert!(n.contains("took 6.5 ms"), "{n}");
    }

    #[test]
    fn agreement_or_no_measurement_keeps_the_kernel_s_class() {
        for (rot, lat, class) in [
            (Some(true), Some(5_000.0), DeviceClass::Rotational),
            (Some(false), Some(80.0), DeviceClass::Flash),
            (Some(true), None, DeviceClass::Rotational),
            (None, Some(5_000.0), DeviceClass::Flash),
            (Some(true), Some(f64::NAN), DeviceClass::Rotational),
        ] {
            let j = judge_class(&ev("nvme0n1", rot, lat));
            assert_eq!((j.class, j.note), (class, None), "{rot:?} {lat:?}");
        }
    }

    #[test]
    fn transports_by_name() {
        for (d, t) in [
            ("vda", Some("virtio")),
            ("/dev/nvme0n1p2", Some("nvme")),
            ("sdc", Some("scsi")),
            ("dm-3", Some("dm")),
            ("md0", Some("md")),
            ("loop7", Some("loop")),
            ("zram0", None),
        ] {
            assert_eq!(transport(d), t, "{d}");
        }
    }

    fn test(rw: iocap_model::RwMode, iops: f64, mb_s: f64, direct: bool) -> TestResult {
        let mut t = iocap_model::fixture::run(&Default::default()).tests[0].clone();
        t.spec.rw = rw;
        t.total.iops = iops;
        t.total.mb_s = mb_s;
        t.direct = direct;
        t
    }

    #[test]
    fn figures_beyond_spinning_disks_are_flagged_direct_or_not() {
        use iocap_model::RwMode::*;
        let w = implausible(
            &test(RandRead, 96_568.0, 791.0, true),
            DeviceClass::Rotational,
            1,
        )
        .unwrap();
        assert!(
            w.starts_with("96,568 random IOPS is more than a spinning disk delivers"),
            "{w}"
        );
        assert!(w.contains("a cache below the OS answered"), "{w}");
        assert!(w.contains("four times"), "{w}");
        let w = implausible(&test(Read, 900.0, 900.0, false), DeviceClass::Rotational, 2).unwrap();
        assert!(
            w.contains("sequential MB/s is more than 2 spinning disks deliver"),
            "{w}"
        );
        assert!(w.contains("page cache"), "{w}");
        // plausible figures, and flash, are left alone
        assert!(implausible(
            &test(RandRead, 350.0, 2.8, true),
            DeviceClass::Rotational,
            1
        )
        .is_none());
        assert!(implausible(&test(Read, 550.0, 550.0, true), DeviceClass::Rotational, 2).is_none());
        assert!(implausible(
            &test(RandRead, 96_568.0, 791.0, true),
            DeviceClass::Flash,
            1
        )
        .is_none());
    }
}

//! Fixture sysfs / procfs trees in temporary directories: every check, every severity it can give.

use iocap_audit::*;
use std::path::{Path, PathBuf};

struct Fx {
    dir: tempfile::TempDir,
}

impl Fx {
    fn new() -> Self {
        Fx {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn root(&self) -> Root {
        Root::new(self.dir.path())
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn write(&self, rel: &str, content: &str) -> &Self {
        let p = self.p(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{content}\n")).unwrap();
        self
    }
    fn remove(&self, rel: &str) {
        let _ = std::fs::remove_file(self.p(rel));
    }
    fn link(&self, rel: &str, target: &str) {
        let p = self.p(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
    }
    /// A whole disk with sane queue settings, linked from sys/class/block and sys/dev/block.
    fn disk(&self, name: &str, devnum: &str) -> &Self {
        let d = format!("sys/devices/block/{name}");
        for (f, v) in [
            ("queue/scheduler", "[mq-deadline] none"),
            ("queue/nr_requests", "256"),
            ("queue/read_ahead_kb", "128"),
            ("queue/max_sectors_kb", "1280"),
            ("queue/max_hw_sectors_kb", "2048"),
            ("queue/write_cache", "write back"),
            ("queue/rotational", "0"),
            ("queue/logical_block_size", "4096"),
            ("queue/physical_block_size", "4096"),
            ("queue/optimal_io_size", "0"),
            ("queue/minimum_io_size", "4096"),
            ("device/queue_depth", "64"),
            ("device/model", "SAMSUNG SSD"),
        ] {
            self.write(&format!("{d}/{f}"), v);
        }
        self.link(
            &format!("sys/class/block/{name}"),
            &format!("../../devices/block/{name}"),
        );
        self.link(
            &format!("sys/dev/block/{devnum}"),
            &format!("../../devices/block/{name}"),
        );
        self
    }
    fn part(&self, disk: &str, name: &str, devnum: &str, start: u64) -> &Self {
        let d = format!("sys/devices/block/{disk}/{name}");
        self.write(&format!("{d}/partition"), "1");
        self.write(&format!("{d}/start"), &start.to_string());
        self.write(&format!("{d}/uevent"), &format!("DEVNAME={name}"));
        self.link(
            &format!("sys/class/block/{name}"),
            &format!("../../devices/block/{disk}/{name}"),
        );
        self.link(
            &format!("sys/dev/block/{devnum}"),
            &format!("../../devices/block/{disk}/{name}"),
        );
        self
    }
    /// A stacked virtual device (md*, dm-*) over `slaves`.
    fn stacked(&self, name: &str, slaves: &[&str]) -> &Self {
        let d = format!("sys/devices/virtual/block/{name}");
        for s in slaves {
            self.write(&format!("{d}/slaves/{s}"), "");
        }
        self.write(&format!("{d}/queue/read_ahead_kb"), "4096");
        self.link(
            &format!("sys/class/block/{name}"),
            &format!("../../devices/virtual/block/{name}"),
        );
        self
    }
    fn md(&self, name: &str, level: &str, chunk: u64, degraded: u32, slaves: &[&str]) -> &Self {
        self.stacked(name, slaves);
        let d = format!("sys/devices/virtual/block/{name}/md");
        self.write(&format!("{d}/level"), level);
        self.write(&format!("{d}/chunk_size"), &chunk.to_string());
        self.write(&format!("{d}/raid_disks"), &slaves.len().to_string());
        self.write(&format!("{d}/degraded"), &degraded.to_string());
        self
    }
}

fn find<'a>(checks: &'a [Check], id: &str, subject: &str) -> &'a Check {
    checks
        .iter()
        .find(|c| c.id == id && c.subject == subject)
        .unwrap_or_else(|| panic!("no check {id} on {subject} in {checks:#?}"))
}

fn sev(checks: &[Check], id: &str, subject: &str) -> Severity {
    find(checks, id, subject).severity
}

fn opts() -> AuditOptions {
    AuditOptions::default()
}

fn dev_checks(fx: &Fx, dev: &str, o: &AuditOptions) -> Vec<Check> {
    audit_device(&fx.root(), dev, o).checks
}

#[test]
fn partition_alignment_fail_warn_pass() {
    let fx = Fx::new();
    fx.disk("sda", "8:0")
        .part("sda", "sda1", "8:1", 63)
        .part("sda", "sda2", "8:2", 2048)
        .part("sda", "sda3", "8:3", 8);
    let c = dev_checks(&fx, "sda1", &opts());
    let a = find(&c, "partition.alignment", "sda1");
    assert_eq!(a.severity, Severity::Fail);
    assert!(
        a.evidence.contains("start sector 63 (512 B sectors)"),
        "{}",
        a.evidence
    );
    assert!(a.evidence.contains("/sys/class/block/sda1/start"));
    assert_eq!(
        sev(
            &dev_checks(&fx, "sda2", &opts()),
            "partition.alignment",
            "sda2"
        ),
        Severity::Pass
    );
    assert_eq!(
        sev(
            &dev_checks(&fx, "sda3", &opts()),
            "partition.alignment",
            "sda3"
        ),
        Severity::Warn
    );
    // Whole device: aligned by definition.
    assert_eq!(
        sev(
            &dev_checks(&fx, "sda", &opts()),
            "partition.alignment",
            "sda"
        ),
        Severity::Pass
    );
    // Unreadable start: UNKNOWN.
    fx.remove("sys/devices/block/sda/sda2/start");
    assert_eq!(
        sev(
            &dev_checks(&fx, "sda2", &opts()),
            "partition.alignment",
            "sda2"
        ),
        Severity::Unknown
    );
}

#[test]
fn stripe_alignment_from_options_md_and_sysfs() {
    let fx = Fx::new();
    fx.disk("sdb", "8:16")
        .part("sdb", "sdb1", "8:17", 63)
        .disk("sdc", "8:32")
        .part("sdc", "sdc1", "8:33", 2048);
    // No stripe unit anywhere: UNKNOWN.
    assert_eq!(
        sev(
            &dev_checks(&fx, "sdc1", &opts()),
            "partition.stripe_alignment",
            "sdc1"
        ),
        Severity::Unknown
    );
    // From the options.
    let o = AuditOptions {
        stripe_unit_bytes: Some(65536),
        ..opts()
    };
    assert_eq!(
        sev(
            &dev_checks(&fx, "sdc1", &o),
            "partition.stripe_alignment",
            "sdc1"
        ),
        Severity::Pass
    );
    let o = AuditOptions {
        stripe_unit_bytes: Some(3 << 20),
        ..opts()
    };
    assert_eq!(
        sev(
            &dev_checks(&fx, "sdc1", &o),
            "partition.stripe_alignment",
            "sdc1"
        ),
        Severity::Fail
    );
    // From md chunk_size, with one member partition misaligned.
    fx.md("md0", "raid1", 65536, 0, &["sdb1", "sdc1"]);
    let c = dev_checks(&fx, "md0", &opts());
    assert_eq!(
        sev(&c, "partition.stripe_alignment", "sdb1"),
        Severity::Fail
    );
    assert_eq!(
        sev(&c, "partition.stripe_alignment", "sdc1"),
        Severity::Pass
    );
    assert!(find(&c, "partition.stripe_alignment", "sdc1")
        .evidence
        .contains("/sys/class/block/md0/md/chunk_size"));
    // From optimal_io_size / minimum_io_size of a hardware RAID LUN.
    fx.write("sys/devices/block/sdc/queue/optimal_io_size", "262144");
    let c = dev_checks(&fx, "sdc1", &opts());
    assert!(find(&c, "partition.stripe_alignment", "sdc1")
        .evidence
        .contains("optimal_io_size"));
    assert_eq!(
        sev(&c, "partition.stripe_alignment", "sdc1"),
        Severity::Pass
    );
    fx.write("sys/devices/block/sdc/queue/minimum_io_size", "65536");
    let c = dev_checks(&fx, "sdc1", &opts());
    assert!(find(&c, "partition.stripe_alignment", "sdc1")
        .evidence
        .contains("minimum_io_size"));
}

#[test]
fn resolve_dm_over_md_over_partitions() {
    let fx = Fx::new();
    fx.disk("sdb", "8:16")
        .part("sdb", "sdb1", "8:17", 2048)
        .disk("nvme0n1", "259:0")
        .part("nvme0n1", "nvme0n1p1", "259:1", 2048)
        .md("md0", "raid1", 524288, 0, &["nvme0n1p1", "sdb1"])
        .stacked("dm-0", &["md0"]);
    let r = resolve_device(&fx.root(), "dm-0");
    assert_eq!(r.block_device.as_deref(), Some("dm-0"));
    assert_eq!(r.partition.as_deref(), Some("nvme0n1p1"));
    assert_eq!(r.devices, vec!["nvme0n1", "sdb"]);
    let c = dev_checks(&fx, "dm-0", &opts());
    assert_eq!(sev(&c, "md.raid", "md0"), Severity::Info);
    assert_eq!(sev(&c, "device.read_ahead_kb", "dm-0"), Severity::Pass);
    // Two physical devices: array-backed, so a queue depth of 16 warns.
    fx.write("sys/devices/block/sdb/device/queue_depth", "16");
    assert_eq!(
        sev(
            &dev_checks(&fx, "dm-0", &opts()),
            "device.queue_depth",
            "sdb"
        ),
        Severity::Warn
    );
    // Unknown device: nothing resolved, UNKNOWN check, no panic.
    let rep = audit_device(&fx.root(), "sdz9", &opts());
    assert!(rep.targets[0].block_device.is_none());
    assert_eq!(
        sev(&rep.checks, "resolve.device", "sdz9"),
        Severity::Unknown
    );
}

#[test]
fn parent_disk_without_symlinks() {
    // Fixture trees may use plain directories: sda1 → sda by name.
    let fx = Fx::new();
    fx.write("sys/class/block/nvme1n1/queue/rotational", "0");
    fx.write("sys/class/block/nvme1n1p3/partition", "3");
    fx.write("sys/class/block/nvme1n1p3/start", "2048");
    let r = resolve_device(&fx.root(), "/dev/nvme1n1p3");
    assert_eq!(r.partition.as_deref(), Some("nvme1n1p3"));
    assert_eq!(r.devices, vec!["nvme1n1"]);
}

#[test]
fn mountinfo_resolution_and_mount_options() {
    let fx = Fx::new();
    fx.disk("sda", "8:0")
        .part("sda", "sda1", "8:1", 2048)
        .part("sda", "sda2", "8:2", 2048);
    fx.write(
        "proc/self/mountinfo",
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n\
         23 22 8:2 / /data rw,noatime shared:2 - ext4 /dev/sda2 rw,nobarrier,data=writeback,discard\n\
         24 22 8:2 /x /data/bind rw - ext4 /dev/sda2 rw\n\
         25 22 0:50 / /var/lib/containers rw - overlay overlay rw",
    );
    let root = fx.root();
    let r = resolve_dev(&root, "/data/pg/base", 8, 2);
    assert_eq!(r.mount_point.as_deref(), Some("/data"));
    assert_eq!(r.fs_type.as_deref(), Some("ext4"));
    assert_eq!(r.partition.as_deref(), Some("sda2"));
    assert_eq!(r.devices, vec!["sda"]);
    assert!(r.mount_options.contains(&"nobarrier".to_string()));
    let c = target_checks(&root, &r, None, &opts());
    assert_eq!(sev(&c, "mount.atime", "/data"), Severity::Pass);
    assert_eq!(sev(&c, "mount.barrier", "/data"), Severity::Warn);
    assert_eq!(sev(&c, "mount.data_mode", "/data"), Severity::Info);
    assert_eq!(sev(&c, "mount.discard", "/data"), Severity::Info);

    let r = resolve_dev(&root, "/etc", 8, 1);
    assert_eq!(r.partition.as_deref(), Some("sda1"));
    let c = target_checks(&root, &r, None, &opts());
    assert_eq!(sev(&c, "mount.atime", "/"), Severity::Pass);
    assert_eq!(sev(&c, "mount.barrier", "/"), Severity::Pass);
    assert_eq!(sev(&c, "mount.discard", "/"), Severity::Pass);

    // Bind mount of the same device: the longest containing mount point wins.
    let r = resolve_dev(&root, "/data/bind/f", 8, 2);
    assert_eq!(r.mount_point.as_deref(), Some("/data/bind"));
    let c = target_checks(&root, &r, None, &opts());
    assert_eq!(sev(&c, "mount.atime", "/data/bind"), Severity::Warn);

    // Overlay: no block device, UNKNOWN with the reason.
    let r = resolve_dev(&root, "/var/lib/containers/x", 0, 50);
    assert_eq!(r.fs_type.as_deref(), Some("overlay"));
    assert!(r.block_device.is_none());
    let c = target_checks(&root, &r, None, &opts());
    let u = find(&c, "resolve.device", "/var/lib/containers/x");
    assert_eq!(u.severity, Severity::Unknown);
    assert!(u.evidence.contains("overlay"));

    // The block device found through the mount source when sys/dev/block lacks the number.
    fx.write(
        "proc/self/mountinfo",
        "30 1 0:33 / /srv rw,noatime - btrfs /dev/sda2 rw",
    );
    let r = resolve_dev(&root, "/srv", 0, 33);
    assert_eq!(r.block_device.as_deref(), Some("sda2"));
}

#[test]
fn fs_block_size_stripe_divisibility_and_free_space() {
    let fx = Fx::new();
    fx.disk("sda", "8:0").part("sda", "sda1", "8:1", 2048);
    let root = fx.root();
    let r = Resolved {
        path: "/db".into(),
        ..resolve_device(&root, "sda1")
    };
    let fs = |bs: u64, avail: u64| {
        Some(Ok(FsStats {
            block_size: bs,
            avail_bytes: avail,
            total_bytes: avail * 2,
        }))
    };
    let o = AuditOptions {
        stripe_unit_bytes: Some(65536),
        db_size_bytes: Some(1000),
        ..opts()
    };

    let c = target_checks(&root, &r, fs(4096, 10_000), &o);
    assert_eq!(sev(&c, "fs.block_size", "/db"), Severity::Pass);
    assert_eq!(sev(&c, "fs.stripe_divisible", "/db"), Severity::Pass);
    assert_eq!(sev(&c, "fs.free_space", "/db"), Severity::Pass);

    let c = target_checks(&root, &r, fs(1024, 500), &o);
    assert_eq!(sev(&c, "fs.block_size", "/db"), Severity::Warn);
    assert_eq!(sev(&c, "fs.free_space", "/db"), Severity::Fail);
    let c = target_checks(&root, &r, fs(4096, 1100), &o);
    assert_eq!(sev(&c, "fs.free_space", "/db"), Severity::Warn);

    let o2 = AuditOptions {
        stripe_unit_bytes: Some(6144),
        ..opts()
    };
    let c = target_checks(&root, &r, fs(4096, 1), &o2);
    assert_eq!(sev(&c, "fs.stripe_divisible", "/db"), Severity::Fail);
    assert_eq!(sev(&c, "fs.free_space", "/db"), Severity::Info);
    let c = target_checks(&root, &r, fs(4096, 1), &opts());
    assert_eq!(sev(&c, "fs.stripe_divisible", "/db"), Severity::Unknown);

    let c = target_checks(&root, &r, Some(Err("statvfs failed".into())), &o);
    for id in ["fs.block_size", "fs.stripe_divisible", "fs.free_space"] {
        assert_eq!(sev(&c, id, "/db"), Severity::Unknown);
    }
}

#[test]
fn device_queue_settings() {
    let fx = Fx::new();
    fx.disk("sda", "8:0");
    let c = dev_checks(&fx, "sda", &opts());
    for id in [
        "device.scheduler",
        "device.nr_requests",
        "device.queue_depth",
        "device.read_ahead_kb",
        "device.max_sectors_kb",
        "device.block_size",
    ] {
        assert_eq!(sev(&c, id, "sda"), Severity::Pass, "{id}");
    }
    assert_eq!(sev(&c, "device.write_cache", "sda"), Severity::Info);
    assert_eq!(sev(&c, "device.rotational", "sda"), Severity::Info);
    assert!(find(&c, "device.scheduler", "sda")
        .evidence
        .contains("scheduler mq-deadline"));

    let d = "sys/devices/block/sda";
    fx.write(
        &format!("{d}/queue/scheduler"),
        "mq-deadline kyber [bfq] none",
    );
    fx.write(&format!("{d}/queue/nr_requests"), "16");
    fx.write(&format!("{d}/device/queue_depth"), "8");
    fx.write(&format!("{d}/queue/read_ahead_kb"), "0");
    fx.write(&format!("{d}/queue/max_sectors_kb"), "128");
    fx.write(&format!("{d}/queue/write_cache"), "write through");
    fx.write(&format!("{d}/queue/logical_block_size"), "512");
    let c = dev_checks(&fx, "sda", &opts());
    assert_eq!(sev(&c, "device.scheduler", "sda"), Severity::Warn);
    assert_eq!(sev(&c, "device.nr_requests", "sda"), Severity::Warn);
    // One plain disk: a shallow queue is only INFO ...
    assert_eq!(sev(&c, "device.queue_depth", "sda"), Severity::Info);
    assert_eq!(sev(&c, "device.read_ahead_kb", "sda"), Severity::Warn);
    assert_eq!(sev(&c, "device.max_sectors_kb", "sda"), Severity::Warn);
    assert!(find(&c, "device.write_cache", "sda")
        .evidence
        .contains("write through"));
    assert_eq!(sev(&c, "device.block_size", "sda"), Severity::Warn);
    // ... but WARN behind a RAID controller's LUN.
    fx.write(&format!("{d}/device/model"), "PERC H730P Mini");
    assert_eq!(
        sev(
            &dev_checks(&fx, "sda", &opts()),
            "device.queue_depth",
            "sda"
        ),
        Severity::Warn
    );
    // No SCSI queue_depth (NVMe): nr_requests stands in.
    fx.remove(&format!("{d}/device/queue_depth"));
    let c = dev_checks(&fx, "sda", &opts());
    assert!(find(&c, "device.queue_depth", "sda")
        .evidence
        .contains("nr_requests"));
    fx.write(&format!("{d}/queue/read_ahead_kb"), "16384");
    assert_eq!(
        sev(
            &dev_checks(&fx, "sda", &opts()),
            "device.read_ahead_kb",
            "sda"
        ),
        Severity::Warn
    );

    // Missing files: UNKNOWN, never a panic.
    for f in [
        "scheduler",
        "nr_requests",
        "read_ahead_kb",
        "max_sectors_kb",
        "write_cache",
        "rotational",
        "physical_block_size",
    ] {
        fx.remove(&format!("{d}/queue/{f}"));
    }
    let c = dev_checks(&fx, "sda", &opts());
    for id in [
        "device.scheduler",
        "device.nr_requests",
        "device.queue_depth",
        "device.read_ahead_kb",
        "device.max_sectors_kb",
        "device.write_cache",
        "device.rotational",
        "device.block_size",
    ] {
        assert_eq!(sev(&c, id, "sda"), Severity::Unknown, "{id}");
    }
}

#[test]
fn md_raid_levels() {
    let fx = Fx::new();
    fx.disk("sdb", "8:16").disk("sdc", "8:32");
    fx.md("md0", "raid0", 524288, 0, &["sdb", "sdc"]);
    fx.md("md1", "raid10", 524288, 0, &["sdb", "sdc"]);
    fx.md("md2", "raid5", 524288, 1, &["sdb", "sdc"]);
    assert_eq!(
        sev(&dev_checks(&fx, "md0", &opts()), "md.raid", "md0"),
        Severity::Warn
    );
    let c = dev_checks(&fx, "md1", &opts());
    assert_eq!(sev(&c, "md.raid", "md1"), Severity::Info);
    assert!(find(&c, "md.raid", "md1")
        .evidence
        .contains("level raid10, chunk 524288 B"));
    assert_eq!(
        sev(&dev_checks(&fx, "md2", &opts()), "md.raid", "md2"),
        Severity::Fail
    );
    fx.remove("sys/devices/virtual/block/md1/md/level");
    assert_eq!(
        sev(&dev_checks(&fx, "md1", &opts()), "md.raid", "md1"),
        Severity::Unknown
    );
}

fn cpu(fx: &Fx, n: u32, gov: &str, cur: u64, max: u64, epb: u64) {
    let d = format!("sys/devices/system/cpu/cpu{n}");
    fx.write(&format!("{d}/cpufreq/scaling_governor"), gov);
    fx.write(&format!("{d}/cpufreq/scaling_cur_freq"), &cur.to_string());
    fx.write(&format!("{d}/cpufreq/cpuinfo_max_freq"), &max.to_string());
    fx.write(&format!("{d}/power/energy_perf_bias"), &epb.to_string());
}

#[test]
fn cpu_power_management() {
    let fx = Fx::new();
    let h = |fx: &Fx| host_checks(&fx.root(), &opts());
    // Nothing exposed (VM / container): UNKNOWN with the reason.
    fx.write("sys/devices/system/cpu/cpu0/online", "1");
    let c = h(&fx);
    for id in ["cpu.governor", "cpu.frequency", "cpu.energy_perf_bias"] {
        assert_eq!(sev(&c, id, "cpu"), Severity::Unknown, "{id}");
    }
    assert!(find(&c, "cpu.governor", "cpu")
        .evidence
        .contains("no cpufreq in sysfs"));

    cpu(&fx, 0, "performance", 3_000_000, 3_100_000, 0);
    cpu(&fx, 1, "performance", 2_900_000, 3_100_000, 0);
    let c = h(&fx);
    assert_eq!(sev(&c, "cpu.governor", "cpu"), Severity::Pass);
    assert_eq!(sev(&c, "cpu.frequency", "cpu"), Severity::Pass);
    assert_eq!(sev(&c, "cpu.energy_perf_bias", "cpu"), Severity::Pass);

    cpu(&fx, 1, "powersave", 800_000, 3_100_000, 15);
    cpu(&fx, 0, "powersave", 1_000_000, 3_100_000, 6);
    let c = h(&fx);
    assert_eq!(sev(&c, "cpu.governor", "cpu"), Severity::Warn);
    assert_eq!(sev(&c, "cpu.frequency", "cpu"), Severity::Warn);
    assert!(find(&c, "cpu.frequency", "cpu")
        .evidence
        .contains("lowest cpu1 at 800000 kHz"));
    assert_eq!(sev(&c, "cpu.energy_perf_bias", "cpu"), Severity::Warn);

    cpu(&fx, 0, "schedutil", 3_000_000, 3_100_000, 6);
    cpu(&fx, 1, "schedutil", 3_000_000, 3_100_000, 6);
    let c = h(&fx);
    assert_eq!(sev(&c, "cpu.governor", "cpu"), Severity::Info);
    assert_eq!(sev(&c, "cpu.energy_perf_bias", "cpu"), Severity::Info);
}

#[test]
fn thp_depends_on_profile() {
    let fx = Fx::new();
    let thp = |mode: &str, profile: Option<&str>| {
        fx.write("sys/kernel/mm/transparent_hugepage/enabled", mode);
        let o = AuditOptions {
            profile: profile.and_then(DbFamily::parse),
            ..opts()
        };
        sev(&host_checks(&fx.root(), &o), "mem.thp", "memory")
    };
    assert_eq!(
        thp("[always] madvise never", Some("sqlserver")),
        Severity::Pass
    );
    assert_eq!(
        thp("always [madvise] never", Some("sqlserver")),
        Severity::Pass
    );
    assert_eq!(
        thp("always madvise [never]", Some("sqlserver")),
        Severity::Warn
    );
    assert_eq!(
        thp("always madvise [never]", Some("postgres")),
        Severity::Pass
    );
    assert_eq!(
        thp("[always] madvise never", Some("postgres")),
        Severity::Warn
    );
    assert_eq!(
        thp("always [madvise] never", Some("oracle")),
        Severity::Warn
    );
    assert_eq!(
        thp("always madvise [never]", Some("oracle")),
        Severity::Pass
    );
    assert_eq!(thp("[always] madvise never", Some("mysql")), Severity::Warn);
    assert_eq!(thp("[always] madvise never", None), Severity::Info);
    assert_eq!(thp("garbage", None), Severity::Unknown);
    fx.remove("sys/kernel/mm/transparent_hugepage/enabled");
    assert_eq!(
        sev(&host_checks(&fx.root(), &opts()), "mem.thp", "memory"),
        Severity::Unknown
    );
}

#[test]
fn vm_tunables_and_numa() {
    let fx = Fx::new();
    let h = |fx: &Fx| host_checks(&fx.root(), &opts());
    let c = h(&fx);
    for (id, s) in [
        ("vm.swappiness", "memory"),
        ("vm.dirty", "memory"),
        ("numa.nodes", "numa"),
    ] {
        assert_eq!(sev(&c, id, s), Severity::Unknown, "{id}");
    }
    fx.write("proc/sys/vm/swappiness", "60");
    fx.write("proc/sys/vm/dirty_ratio", "20");
    fx.write("proc/sys/vm/dirty_background_ratio", "10");
    fx.write("sys/devices/system/node/node0/cpulist", "0-7");
    fx.write("proc/sys/kernel/numa_balancing", "1");
    let c = h(&fx);
    assert_eq!(sev(&c, "vm.swappiness", "memory"), Severity::Warn);
    assert_eq!(sev(&c, "vm.dirty", "memory"), Severity::Info);
    assert!(find(&c, "vm.dirty", "memory")
        .evidence
        .contains("vm.dirty_ratio 20 %"));
    assert_eq!(sev(&c, "numa.nodes", "numa"), Severity::Info);
    assert_eq!(sev(&c, "numa.balancing", "numa"), Severity::Pass);

    fx.write("proc/sys/vm/swappiness", "1");
    fx.write("proc/sys/vm/dirty_background_ratio", "25");
    fx.write("sys/devices/system/node/node1/cpulist", "8-15");
    let c = h(&fx);
    assert_eq!(sev(&c, "vm.swappiness", "memory"), Severity::Pass);
    assert_eq!(sev(&c, "vm.dirty", "memory"), Severity::Warn);
    assert!(find(&c, "numa.nodes", "numa")
        .evidence
        .starts_with("2 NUMA node(s)"));
    assert_eq!(sev(&c, "numa.balancing", "numa"), Severity::Warn);
    fx.remove("proc/sys/kernel/numa_balancing");
    assert_eq!(sev(&h(&fx), "numa.balancing", "numa"), Severity::Unknown);
}

#[test]
fn report_serializes_with_uppercase_severities_and_has_a_schema() {
    let fx = Fx::new();
    fx.disk("sda", "8:0").part("sda", "sda1", "8:1", 63);
    let rep = audit_device(&fx.root(), "sda1", &opts());
    let v = serde_json::to_value(&rep).unwrap();
    assert_eq!(v["targets"][0]["partition"], "sda1");
    let checks = v["checks"].as_array().unwrap();
    assert!(checks
        .iter()
        .any(|c| c["id"] == "partition.alignment" && c["severity"] == "FAIL"));
    assert!(checks
        .iter()
        .all(|c| ["PASS", "WARN", "FAIL", "INFO", "UNKNOWN"]
            .contains(&c["severity"].as_str().unwrap())));
    let schema = serde_json::to_string(&schemars::schema_for!(AuditReport)).unwrap();
    assert!(schema.contains("UNKNOWN"));
}

#[test]
fn audit_on_this_machine_does_not_panic() {
    let here = std::env::current_dir().unwrap();
    let missing = Path::new("/nonexistent-iocap-audit/dir/file").to_path_buf();
    let o = AuditOptions {
        profile: Some(DbFamily::Postgres),
        db_size_bytes: Some(1),
        ..opts()
    };
    let rep = audit(&Root::system(), &[here.clone(), missing], &o);
    assert_eq!(rep.targets.len(), 2);
    let t = &rep.targets[0];
    assert!(
        !t.devices.is_empty()
            || rep
                .checks
                .iter()
                .any(|c| c.severity == Severity::Unknown && c.id == "resolve.device"),
        "{rep:#?}"
    );
    // A planned path that does not exist yet resolves through its existing ancestor (/), so it is
    // not reported as unresolvable.
    assert!(
        !rep.checks.iter().any(|c| c.id == "resolve.path"),
        "{rep:#?}"
    );
    assert!(rep.checks.iter().any(|c| c.id == "mem.thp"));
    for c in &rep.checks {
        assert!(
            !c.evidence.is_empty() && !c.recommendation.is_empty(),
            "{c:?}"
        );
    }
}

//! The Windows audit over a fake [`Source`] built from the decoders' byte fixtures: the checks a
//! DBA sees for seed 002's misaligned volume, a well-set server, flushing turned off, striped
//! and Storage Spaces volumes, and every call failing as under Wine (UNKNOWN, never PASS).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::decode::tests::*;
use super::decode::*;
use super::*;
use crate::{DbFamily, Severity};

const VOL: &str = "\\\\?\\Volume{1b1b}";

struct Fake {
    volume: Result<Volume, String>,
    cluster: Result<(u32, u32), String>,
    ioctls: HashMap<(String, Query), Vec<u8>>,
    scheme: Result<(String, String), String>,
    min_state: Result<u32, String>,
    processors: Result<Vec<u8>, String>,
    rights: Result<(String, Vec<String>), String>,
}

impl Source for Fake {
    fn volume(&self, _: &Path) -> Result<Volume, String> {
        self.volume.clone()
    }
    fn cluster(&self, _: &str) -> Result<(u32, u32), String> {
        self.cluster.clone()
    }
    fn free_space(&self, _: &str) -> Result<(u64, u64), String> {
        Ok((100 << 30, 200 << 30))
    }
    fn ioctl(&self, device: &str, q: Query) -> Result<Vec<u8>, String> {
        self.ioctls
            .get(&(device.to_string(), q))
            .cloned()
            .ok_or_else(|| "error 1 (ERROR_INVALID_FUNCTION)".to_string())
    }
    fn power_scheme(&self) -> Result<(String, String), String> {
        self.scheme.clone()
    }
    fn min_processor_state(&self, _: &str) -> Result<u32, String> {
        self.min_state.clone()
    }
    fn processors(&self) -> Result<Vec<u8>, String> {
        self.processors.clone()
    }
    fn service_rights(&self, _: &str) -> Result<(String, Vec<String>), String> {
        self.rights.clone()
    }
}

/// A server set up as advised: GPT at 1 MiB, 64 KiB clusters, a write-back cache that Windows
/// flushes, TRIM, High performance at 100 %, cores at full clock.
fn good() -> Fake {
    let mut f = Fake {
        volume: Ok(Volume {
            root: "E:\\".into(),
            device: VOL.into(),
            fs: Ok("NTFS".into()),
        }),
        cluster: Ok((128, 512)),
        ioctls: HashMap::new(),
        scheme: Ok((
            "High performance".into(),
            "8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c".into(),
        )),
        min_state: Ok(100),
        processors: Ok(processors_fixture(&[(2600, 2600, 2600); 4])),
        rights: Ok((
            "NT Service\\MSSQLSERVER".into(),
            vec![
                "SeServiceLogonRight".into(),
                "SeManageVolumePrivilege".into(),
            ],
        )),
    };
    f.set(
        VOL,
        Query::PartitionInfo,
        partition_fixture(1, 1 << 20, 100 << 30, 2),
    );
    f.set(
        VOL,
        Query::DiskExtents,
        extents_fixture(&[(1, 1 << 20, 100 << 30)]),
    );
    f.disk(1, BUS_TYPE_RAID, write_cache_fixture(2, 2, false));
    f
}

impl Fake {
    fn set(&mut self, dev: &str, q: Query, b: Vec<u8>) {
        self.ioctls.insert((dev.to_string(), q), b);
    }
    fn disk(&mut self, n: u32, bus: u32, wc: Vec<u8>) {
        let d = disk_path(n);
        self.set(
            &d,
            Query::Property(STORAGE_DEVICE_PROPERTY),
            descriptor_fixture("DELL", "PERC H730P", bus),
        );
        self.set(&d, Query::Property(STORAGE_WRITE_CACHE_PROPERTY), wc);
        self.set(&d, Query::CacheInformation, cache_fixture(true, true));
        self.set(
            &d,
            Query::Property(STORAGE_TRIM_PROPERTY),
            boolean_fixture(true),
        );
        self.set(
            &d,
            Query::Property(STORAGE_SEEK_PENALTY_PROPERTY),
            boolean_fixture(false),
        );
        self.set(
            &d,
            Query::Property(STORAGE_ACCESS_ALIGNMENT_PROPERTY),
            alignment_fixture(4096, 4096),
        );
    }
}

fn run(f: &Fake, opts: &AuditOptions) -> AuditReport {
    audit(f, &[PathBuf::from("E:\\data")], opts)
}

fn sev(r: &AuditReport, id: &str) -> Severity {
    r.checks
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no {id} in {:#?}", r.checks))
        .severity
}

fn check<'a>(r: &'a AuditReport, id: &str) -> &'a Check {
    r.checks.iter().find(|c| c.id == id).unwrap()
}

fn sql(stripe: Option<u64>) -> AuditOptions {
    AuditOptions {
        profile: Some(DbFamily::Sqlserver),
        stripe_unit_bytes: stripe,
        db_size_bytes: None,
    }
}

#[test]
fn a_server_set_up_as_advised_passes() {
    let r = run(&good(), &sql(Some(64 << 10)));
    for id in [
        "partition.alignment",
        "partition.stripe_alignment",
        "fs.block_size",
        "fs.stripe_divisible",
        "device.cache_flushing",
        "device.trim",
        "device.block_size",
        "cpu.power_plan",
        "cpu.min_processor_state",
        "cpu.frequency",
    ] {
        assert_eq!(sev(&r, id), Severity::Pass, "{id}: {:?}", check(&r, id));
    }
    assert_eq!(sev(&r, "device.write_cache"), Severity::Info);
    assert_eq!(sev(&r, "sqlserver.instant_file_init"), Severity::Info);
    let t = &r.targets[0];
    assert_eq!(t.mount_point.as_deref(), Some("E:\\"));
    assert_eq!(t.fs_type.as_deref(), Some("NTFS"));
    assert_eq!(t.devices, ["PhysicalDrive1"]);
    assert_eq!(t.partition.as_deref(), Some("partition 2 (GPT)"));
    let layout = check(&r, "volume.layout");
    assert!(layout.evidence.contains("a simple volume"), "{layout:?}");
    assert!(
        layout.evidence.contains("RAID controller's LUN"),
        "{layout:?}"
    );
    assert!(check(&r, "fs.block_size")
        .evidence
        .contains("65536 B = 128 sectors per cluster x 512 B"));
}

#[test]
fn seed_002_s_windows_server_2003_offset_fails_with_its_measured_cost() {
    let mut f = good();
    f.set(
        VOL,
        Query::PartitionInfo,
        partition_fixture(0, 32_256, 100 << 30, 1),
    );
    f.cluster = Ok((8, 512));
    let r = run(&f, &sql(Some(64 << 10)));
    let a = check(&r, "partition.alignment");
    assert_eq!(a.severity, Severity::Fail);
    assert!(a.evidence.contains("32256 B (31.5 KiB)"), "{a:?}");
    assert!(a.recommendation.contains("align=1024") && a.recommendation.contains("seed 002"));
    let s = check(&r, "partition.stripe_alignment");
    assert_eq!(s.severity, Severity::Fail);
    assert!(
        s.evidence.contains("offset mod stripe unit = 32256 B"),
        "{s:?}"
    );
    let fs = check(&r, "fs.block_size");
    assert_eq!(fs.severity, Severity::Warn, "4 KiB clusters for SQL Server");
    assert!(fs.recommendation.contains("64 KiB") && fs.recommendation.contains("Best Practices"));
    // without a profile the 64 KiB advice is INFO; for PostgreSQL 4 KiB passes
    assert_eq!(
        sev(&run(&f, &AuditOptions::default()), "fs.block_size"),
        Severity::Info
    );
    let pg = AuditOptions {
        profile: Some(DbFamily::Postgres),
        ..AuditOptions::default()
    };
    assert_eq!(sev(&run(&f, &pg), "fs.block_size"), Severity::Pass);
}

#[test]
fn flushing_turned_off_fails_on_a_volatile_cache_only() {
    let mut f = good();
    f.disk(1, BUS_TYPE_RAID, write_cache_fixture(2, 2, true));
    let c = check(&run(&f, &sql(None)), "device.cache_flushing").clone();
    assert_eq!(c.severity, Severity::Fail, "{c:?}");
    assert!(c.evidence.contains("buffer flushing turned off"));
    // a write-through device loses nothing when its flushes are skipped
    f.disk(1, BUS_TYPE_RAID, write_cache_fixture(3, 1, true));
    assert_eq!(
        sev(&run(&f, &sql(None)), "device.cache_flushing"),
        Severity::Pass
    );
    // cache state not told: not known, never PASS
    f.disk(1, BUS_TYPE_RAID, write_cache_fixture(0, 0, true));
    assert_eq!(
        sev(&run(&f, &sql(None)), "device.cache_flushing"),
        Severity::Unknown
    );
}

#[test]
fn striped_and_storage_spaces_volumes_are_named() {
    let mut f = good();
    f.ioctls.remove(&(VOL.to_string(), Query::PartitionInfo));
    f.set(
        VOL,
        Query::DiskExtents,
        extents_fixture(&[(1, 1 << 20, 50 << 30), (2, 32_256, 50 << 30)]),
    );
    f.disk(2, 0x0a, write_cache_fixture(2, 2, false));
    let r = run(&f, &sql(None));
    assert!(check(&r, "volume.layout")
        .evidence
        .contains("striped, mirrored or RAID-5"));
    let al: Vec<_> = r
        .checks
        .iter()
        .filter(|c| c.id == "partition.alignment")
        .collect();
    assert_eq!(al.len(), 2, "one per extent");
    assert_eq!(
        (al[0].severity, al[1].severity),
        (Severity::Pass, Severity::Fail)
    );
    assert_eq!(al[1].subject, "E:\\ on PhysicalDrive2");
    assert_eq!(r.targets[0].devices, ["PhysicalDrive1", "PhysicalDrive2"]);

    let mut one = good();
    one.ioctls.remove(&(VOL.to_string(), Query::PartitionInfo));
    let r = run(&one, &sql(None));
    assert!(check(&r, "volume.layout")
        .evidence
        .contains("no partition information"));
    assert_eq!(
        check(&r, "partition.alignment").subject,
        "E:\\ on PhysicalDrive1"
    );

    let mut s = good();
    s.disk(1, BUS_TYPE_SPACES, write_cache_fixture(2, 2, false));
    assert!(check(&run(&s, &sql(None)), "volume.layout")
        .evidence
        .contains("Storage Spaces"));
}

#[test]
fn balanced_power_and_a_slow_clock_warn() {
    let mut f = good();
    f.scheme = Ok((
        "Balanced".into(),
        "381b4222-f694-41f0-9685-ff5bb260df2e".into(),
    ));
    f.min_state = Ok(5);
    f.processors = Ok(processors_fixture(&[
        (2600, 1200, 2600),
        (2600, 2600, 2600),
    ]));
    let r = run(&f, &sql(None));
    assert_eq!(sev(&r, "cpu.power_plan"), Severity::Warn);
    assert!(check(&r, "cpu.power_plan")
        .recommendation
        .contains("seed 004"));
    assert_eq!(sev(&r, "cpu.min_processor_state"), Severity::Warn);
    let fr = check(&r, "cpu.frequency");
    assert_eq!(fr.severity, Severity::Warn);
    assert!(
        fr.evidence.contains("1900 MHz = 73 % of mean MaxMhz 2600"),
        "{fr:?}"
    );
}

/// Wine answers few of these calls: every one failing gives UNKNOWN with the call's name, and
/// no check about what was not read passes.
#[test]
fn calls_that_fail_give_unknown_never_pass() {
    let f = Fake {
        volume: Ok(Volume {
            root: "Z:\\".into(),
            device: "\\\\.\\Z:".into(),
            fs: Err("error 1".into()),
        }),
        cluster: Err("error 1".into()),
        ioctls: HashMap::new(),
        scheme: Err("PowerGetActiveScheme failed: error 120".into()),
        min_state: Err("not reached".into()),
        processors: Err("CallNtPowerInformation failed: 0xc0000002".into()),
        rights: Err("no service MSSQLSERVER here (OpenServiceW: error 1060)".into()),
    };
    let r = run(&f, &sql(Some(64 << 10)));
    for c in &r.checks {
        assert!(
            matches!(c.severity, Severity::Unknown | Severity::Info),
            "{c:?}"
        );
    }
    let a = check(&r, "partition.alignment");
    assert!(
        a.evidence
            .contains("IOCTL_DISK_GET_PARTITION_INFO_EX on \\\\.\\Z: cannot be read here"),
        "{a:?}"
    );
    assert_eq!(sev(&r, "volume.layout"), Severity::Unknown);
    assert_eq!(sev(&r, "fs.block_size"), Severity::Unknown);
    assert_eq!(sev(&r, "cpu.power_plan"), Severity::Unknown);
    assert_eq!(sev(&r, "cpu.frequency"), Severity::Unknown);

    // the disks' own calls failing too, with the volume's answered
    let mut g = good();
    g.ioctls.retain(|(d, _), _| d == VOL);
    let r = run(&g, &sql(None));
    for id in [
        "device.write_cache",
        "device.cache_flushing",
        "device.trim",
        "device.rotational",
        "device.block_size",
    ] {
        assert_eq!(sev(&r, id), Severity::Unknown, "{id}");
    }
    assert!(check(&r, "volume.layout")
        .evidence
        .contains("PhysicalDrive1 (bus not read)"));
}

#[test]
fn a_path_windows_cannot_place_is_resolve_path_unknown() {
    let mut f = good();
    f.volume = Err("GetVolumePathNameW failed: error 3".into());
    let r = run(&f, &sql(None));
    assert_eq!(r.checks[0].id, "resolve.path");
    assert_eq!(r.checks[0].severity, Severity::Unknown);
    assert_eq!(r.targets[0].path, "E:\\data");
}

#[test]
fn sql_server_s_rights_are_info_whether_read_or_not() {
    let r = run(&good(), &sql(None));
    let ifi = check(&r, "sqlserver.instant_file_init");
    assert_eq!(ifi.severity, Severity::Info);
    assert!(
        ifi.evidence.contains("granted to NT Service\\MSSQLSERVER"),
        "{ifi:?}"
    );
    let lpim = check(&r, "sqlserver.lock_pages");
    assert_eq!(lpim.severity, Severity::Info);
    assert!(lpim.evidence.contains("not granted") && lpim.evidence.contains("Administrators"));
    let mut f = good();
    f.rights = Err("LsaOpenPolicy failed: error 5".into());
    let r = run(&f, &sql(None));
    let ifi = check(&r, "sqlserver.instant_file_init");
    assert_eq!(ifi.severity, Severity::Info);
    assert!(
        ifi.evidence
            .starts_with("not read: SeManageVolumePrivilege"),
        "{ifi:?}"
    );
    let pg = AuditOptions {
        profile: Some(DbFamily::Postgres),
        ..AuditOptions::default()
    };
    assert!(!run(&good(), &pg)
        .checks
        .iter()
        .any(|c| c.id.starts_with("sqlserver.")));
}

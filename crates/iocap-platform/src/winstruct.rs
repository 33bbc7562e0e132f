//! The Windows structures iocap reads from `DeviceIoControl`, decoded from their bytes by pure
//! functions, so every layout is unit-tested on any system (here, from byte fixtures laid out as
//! the Windows SDK's headers define them; on Windows the sizes are also checked against
//! `windows-sys` at compile time, in `win`). Little-endian, natural alignment, as on x64.
//!
//! - `GET_LENGTH_INFORMATION` (`IOCTL_DISK_GET_LENGTH_INFO`): a disk's or volume's size.
//! - `DISK_GEOMETRY_EX` (`IOCTL_DISK_GET_DRIVE_GEOMETRY_EX`): bytes per sector.
//! - `STORAGE_DEVICE_NUMBER` (`IOCTL_STORAGE_GET_DEVICE_NUMBER`): which physical disk.
//! - `VOLUME_DISK_EXTENTS` (`IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS`): which disks a volume is on.
//! - `DRIVE_LAYOUT_INFORMATION_EX` (`IOCTL_DISK_GET_DRIVE_LAYOUT_EX`): a disk's partitions.
//! - `DISK_PERFORMANCE` (`IOCTL_DISK_PERFORMANCE`): a disk's cumulative counts and times, the
//!   counters behind perfmon's PhysicalDisk object.

/// Bytes of one `PARTITION_INFORMATION_EX`.
pub const PARTITION_INFORMATION_EX_SIZE: usize = 144;
/// Where the partition array starts in `DRIVE_LAYOUT_INFORMATION_EX`.
pub const DRIVE_LAYOUT_ENTRIES_AT: usize = 48;
/// Bytes of one `DISK_EXTENT`.
pub const DISK_EXTENT_SIZE: usize = 24;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// `GET_LENGTH_INFORMATION.Length`.
pub fn length_info(b: &[u8]) -> Option<u64> {
    u64_at(b, 0)
}

/// `DISK_GEOMETRY_EX`: (`Geometry.BytesPerSector`, `DiskSize`).
pub fn geometry_ex(b: &[u8]) -> Option<(u32, u64)> {
    Some((u32_at(b, 20)?, u64_at(b, 24)?))
}

/// `STORAGE_DEVICE_NUMBER`: (`DeviceType`, `DeviceNumber`, `PartitionNumber`).
pub fn device_number(b: &[u8]) -> Option<(u32, u32, u32)> {
    Some((u32_at(b, 0)?, u32_at(b, 4)?, u32_at(b, 8)?))
}

/// One `DISK_EXTENT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskExtent {
    pub disk: u32,
    pub offset: u64,
    pub length: u64,
}

/// `VOLUME_DISK_EXTENTS`: every extent, or `None` when the buffer is shorter than it says.
pub fn disk_extents(b: &[u8]) -> Option<Vec<DiskExtent>> {
    let n = u32_at(b, 0)? as usize;
    (0..n)
        .map(|i| {
            let at = 8 + i * DISK_EXTENT_SIZE;
            Some(DiskExtent {
                disk: u32_at(b, at)?,
                offset: u64_at(b, at + 8)?,
                length: u64_at(b, at + 16)?,
            })
        })
        .collect()
}

/// How a disk is partitioned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionStyle {
    Mbr,
    Gpt,
    Raw,
    Other(u32),
}

/// One partition of a `DRIVE_LAYOUT_INFORMATION_EX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub number: u32,
    pub offset: u64,
    pub length: u64,
    /// The MBR type byte (`0x07` NTFS/exFAT, `0x0c` FAT32 ...), or the GPT type GUID as text.
    pub kind: String,
    /// GPT: the partition's name.
    pub name: String,
}

/// The GPT type of Microsoft's basic data partitions (NTFS, ReFS, FAT volumes).
pub const GPT_BASIC_DATA: &str = "ebd0a0a2-b9e5-4433-87c0-68b6b72699c7";

/// A GUID as Windows stores it (the first three fields little-endian), in its usual text.
pub fn guid_text(b: &[u8]) -> Option<String> {
    let g = b.get(..16)?;
    Some(format!(
        "{:08x}-{:04x}-{:04x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
        u32::from_le_bytes(g[0..4].try_into().ok()?),
        u16::from_le_bytes(g[4..6].try_into().ok()?),
        u16::from_le_bytes(g[6..8].try_into().ok()?),
        g[8],
        g[9],
        g[10],
        g[11],
        g[12],
        g[13],
        g[14],
        g[15]
    ))
}

/// `DRIVE_LAYOUT_INFORMATION_EX`: the style and the partitions in use (MBR's unused slots,
/// type 0 and length 0, are left out).
pub fn drive_layout(b: &[u8]) -> Option<(PartitionStyle, Vec<Partition>)> {
    let style = match u32_at(b, 0)? {
        0 => PartitionStyle::Mbr,
        1 => PartitionStyle::Gpt,
        2 => PartitionStyle::Raw,
        n => PartitionStyle::Other(n),
    };
    let count = u32_at(b, 4)? as usize;
    let mut parts = Vec::new();
    for i in 0..count {
        let e = b.get(
            DRIVE_LAYOUT_ENTRIES_AT + i * PARTITION_INFORMATION_EX_SIZE
                ..DRIVE_LAYOUT_ENTRIES_AT + (i + 1) * PARTITION_INFORMATION_EX_SIZE,
        )?;
        let (offset, length, number) = (u64_at(e, 8)?, u64_at(e, 16)?, u32_at(e, 24)?);
        let (kind, name) = match u32_at(e, 0)? {
            0 => {
                let t = e[32];
                if t == 0 || length == 0 {
                    continue;
                }
                (format!("0x{t:02x}"), String::new())
            }
            1 => {
                let units: Vec<u16> = e[72..144]
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .take_while(|u| *u != 0)
                    .collect();
                (guid_text(&e[32..48])?, String::from_utf16_lossy(&units))
            }
            _ => continue,
        };
        parts.push(Partition {
            number,
            offset,
            length,
            kind,
            name,
        });
    }
    Some((style, parts))
}

/// Bytes of `DISK_PERFORMANCE`: 84 bytes of fields, padded to the 8-byte alignment of its
/// `LARGE_INTEGER`s.
pub const DISK_PERFORMANCE_SIZE: usize = 88;

/// `DISK_PERFORMANCE` (winioctl.h), what `IOCTL_DISK_PERFORMANCE` returns: cumulative counters
/// since the disk's counters started, the ones perfmon's PhysicalDisk counters are computed from.
/// Times are in 100 ns units. The layout, offsets in bytes:
///
/// | at | type | field |
/// |---|---|---|
/// | 0 | LARGE_INTEGER | BytesRead |
/// | 8 | LARGE_INTEGER | BytesWritten |
/// | 16 | LARGE_INTEGER | ReadTime (the reads' response times, summed) |
/// | 24 | LARGE_INTEGER | WriteTime (the writes' response times, summed) |
/// | 32 | LARGE_INTEGER | IdleTime (time with nothing in flight) |
/// | 40 | DWORD | ReadCount |
/// | 44 | DWORD | WriteCount |
/// | 48 | DWORD | QueueDepth (requests in flight now: a gauge) |
/// | 52 | DWORD | SplitCount (requests split into several) |
/// | 56 | LARGE_INTEGER | QueryTime (the system time of this reading) |
/// | 64 | DWORD | StorageDeviceNumber |
/// | 68 | WCHAR\[8\] | StorageManagerName (the driver that keeps the counters) |
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskPerformance {
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub read_time_100ns: u64,
    pub write_time_100ns: u64,
    pub idle_time_100ns: u64,
    pub read_count: u32,
    pub write_count: u32,
    pub queue_depth: u32,
    pub split_count: u32,
    pub query_time_100ns: u64,
    pub device_number: u32,
    pub manager: String,
}

/// `DISK_PERFORMANCE`, or `None` when the buffer is shorter than its fields (84 bytes). A
/// negative `LARGE_INTEGER` (never written by Windows) reads as 0.
pub fn disk_performance(b: &[u8]) -> Option<DiskPerformance> {
    let large = |at| u64_at(b, at).map(|v| (v as i64).max(0) as u64);
    let name: Vec<u16> = b
        .get(68..84)?
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .take_while(|u| *u != 0)
        .collect();
    Some(DiskPerformance {
        bytes_read: large(0)?,
        bytes_written: large(8)?,
        read_time_100ns: large(16)?,
        write_time_100ns: large(24)?,
        idle_time_100ns: large(32)?,
        read_count: u32_at(b, 40)?,
        write_count: u32_at(b, 44)?,
        queue_depth: u32_at(b, 48)?,
        split_count: u32_at(b, 52)?,
        query_time_100ns: large(56)?,
        device_number: u32_at(b, 64)?,
        manager: String::from_utf16_lossy(&name),
    })
}

/// The physical disks in a volume's extents, each once, in order of their numbers.
pub fn disks_of_extents(extents: &[DiskExtent]) -> Vec<u32> {
    let mut disks: Vec<u32> = extents.iter().map(|e| e.disk).collect();
    disks.sort_unstable();
    disks.dedup();
    disks
}

/// What a Windows target path names: a volume (`\\.\E:`, `\\?\Volume{...}`), a physical disk
/// (`\\.\PhysicalDrive2`), or anything else (a file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DevicePath {
    /// A volume, with the root directory its file system would be mounted at (`E:\`).
    Volume {
        root: String,
    },
    /// A physical disk, by number.
    Disk {
        number: u32,
    },
    NotADevice,
}

/// Whether `p` names a Windows volume or disk (`\\.\E:`, `\\.\PhysicalDrive2`) on Windows,
/// which has no metadata to stat: the checks judge it by its name. Never on other systems.
/// The one device-name test (the engine, fsync and the session's host facts ask it).
pub fn names_device(p: &str) -> bool {
    cfg!(windows) && device_path(p) != DevicePath::NotADevice
}

/// Classifies a path as Windows does for `CreateFile` (case-insensitive, `\\.\` or `\\?\`).
pub fn device_path(p: &str) -> DevicePath {
    let lower = p.to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix(r"\\.\")
        .or_else(|| lower.strip_prefix(r"\\?\"))
    else {
        return DevicePath::NotADevice;
    };
    if let Some(n) = rest.strip_prefix("physicaldrive") {
        return match n.parse() {
            Ok(number) => DevicePath::Disk { number },
            Err(_) => DevicePath::NotADevice,
        };
    }
    let b = rest.as_bytes();
    if b.len() == 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return DevicePath::Volume {
            root: format!("{}:\\", rest[..1].to_ascii_uppercase()),
        };
    }
    if rest.starts_with("volume{") && rest.ends_with('}') {
        // the original spelling: GUIDs are matched case-insensitively anyway
        return DevicePath::Volume {
            root: format!("{p}\\"),
        };
    }
    DevicePath::NotADevice
}

/// The device to open for a volume's ioctls, from its root as GetVolumePathNameW gives it:
/// `E:\` or `\\?\E:\` is `\\.\E:`, `\\?\Volume{...}\` is itself without the final
/// backslash; `None` for a folder a volume is mounted on (only Windows can say which).
pub fn volume_device(root: &str) -> Option<String> {
    let rest = root
        .strip_prefix(r"\\?\")
        .or_else(|| root.strip_prefix(r"\\.\"))
        .unwrap_or(root)
        .trim_end_matches('\\');
    let b = rest.as_bytes();
    if b.len() == 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Some(format!(r"\\.\{}:", rest[..1].to_ascii_uppercase()));
    }
    let lower = rest.to_ascii_lowercase();
    (lower.starts_with("volume{") && lower.ends_with('}')).then(|| format!(r"\\?\{rest}"))
}

/// What is on a volume, as GetVolumeInformationW answers for its root: the name of its file
/// system, or the Win32 error it gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnVolume {
    /// A file system is mounted (`NTFS`, `ReFS`, `FAT32`, ...).
    FileSystem(String),
    /// None that Windows knows (RAW, ERROR_UNRECOGNIZED_VOLUME) or no medium (ERROR_NOT_READY).
    Nothing,
    /// Windows would not say (a locked BitLocker volume, access denied, ...): it may hold data.
    Unknown(u32),
}

/// ERROR_NOT_READY: a drive with no medium in it.
const ERROR_NOT_READY: u32 = 21;
/// ERROR_UNRECOGNIZED_VOLUME: no file system Windows recognises.
const ERROR_UNRECOGNIZED_VOLUME: u32 = 1005;

/// Classifies GetVolumeInformationW's answer: only an answer that says "nothing" lets a write
/// through; any other failure counts as unknown, which the safety rules treat as in use.
pub fn on_volume(answer: Result<String, u32>) -> OnVolume {
    match answer {
        Ok(fs) if fs.is_empty() || fs.eq_ignore_ascii_case("RAW") => OnVolume::Nothing,
        Ok(fs) => OnVolume::FileSystem(fs),
        Err(ERROR_NOT_READY | ERROR_UNRECOGNIZED_VOLUME) => OnVolume::Nothing,
        Err(e) => OnVolume::Unknown(e),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_a_volume_known_to_be_empty_lets_a_write_through() {
        assert_eq!(
            on_volume(Ok("NTFS".into())),
            OnVolume::FileSystem("NTFS".into())
        );
        assert_eq!(on_volume(Ok("RAW".into())), OnVolume::Nothing);
        assert_eq!(on_volume(Ok(String::new())), OnVolume::Nothing);
        assert_eq!(
            on_volume(Err(1005)),
            OnVolume::Nothing,
            "unrecognized volume"
        );
        assert_eq!(on_volume(Err(21)), OnVolume::Nothing, "no medium");
        // access denied, a locked BitLocker volume (FVE_E_LOCKED_VOLUME's Win32 form)
        assert_eq!(on_volume(Err(5)), OnVolume::Unknown(5));
        assert_eq!(on_volume(Err(0x8031_0000)), OnVolume::Unknown(0x8031_0000));
    }

    use super::*;

    fn put32(b: &mut [u8], at: usize, v: u32) {
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    fn put64(b: &mut [u8], at: usize, v: u64) {
        b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }

    #[test]
    fn lengths_geometry_and_device_numbers() {
        assert_eq!(
            length_info(&0x0000_0019_0000_0000u64.to_le_bytes()),
            Some(100 << 30)
        );
        assert_eq!(length_info(&[1, 2, 3]), None);
        // DISK_GEOMETRY_EX of a 512e disk of 64 GiB: cylinders 8354, fixed media (12), 255
        // tracks, 63 sectors, 512 B sectors, then DiskSize
        let mut g = [0u8; 40];
        put64(&mut g, 0, 8354);
        put32(&mut g, 8, 12);
        put32(&mut g, 12, 255);
        put32(&mut g, 16, 63);
        put32(&mut g, 20, 512);
        put64(&mut g, 24, 64 << 30);
        assert_eq!(geometry_ex(&g), Some((512, 64 << 30)));
        // FILE_DEVICE_DISK (7), disk 2, partition 0 (the whole disk)
        let mut d = [0u8; 12];
        put32(&mut d, 0, 7);
        put32(&mut d, 4, 2);
        assert_eq!(device_number(&d), Some((7, 2, 0)));
    }

    #[test]
    fn volume_extents() {
        // a volume spanning disks 1 and 3 (a spanned dynamic volume)
        let mut b = vec![0u8; 8 + 2 * DISK_EXTENT_SIZE];
        put32(&mut b, 0, 2);
        put32(&mut b, 8, 1);
        put64(&mut b, 16, 1 << 20);
        put64(&mut b, 24, 10 << 30);
        put32(&mut b, 32, 3);
        put64(&mut b, 40, 1 << 20);
        put64(&mut b, 48, 5 << 30);
        let e = disk_extents(&b).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(
            e[1],
            DiskExtent {
                disk: 3,
                offset: 1 << 20,
                length: 5 << 30
            }
        );
        // says two, holds one
        assert_eq!(disk_extents(&b[..8 + DISK_EXTENT_SIZE]), None);
    }

    /// A GPT layout as Windows Server writes it: the MSR partition and an NTFS data volume.
    fn gpt_layout() -> Vec<u8> {
        let mut b = vec![0u8; DRIVE_LAYOUT_ENTRIES_AT + 2 * PARTITION_INFORMATION_EX_SIZE];
        put32(&mut b, 0, 1);
        put32(&mut b, 4, 2);
        // Microsoft reserved: e3c9e316-0b5c-4db8-817d-f92df00215ae
        let msr = [
            0x16, 0xe3, 0xc9, 0xe3, 0x5c, 0x0b, 0xb8, 0x4d, 0x81, 0x7d, 0xf9, 0x2d, 0xf0, 0x02,
            0x15, 0xae,
        ];
        let basic = [
            0xa2, 0xa0, 0xd0, 0xeb, 0xe5, 0xb9, 0x33, 0x44, 0x87, 0xc0, 0x68, 0xb6, 0xb7, 0x26,
            0x99, 0xc7,
        ];
        for (i, (guid, off, len, name)) in [
            (msr, 17408u64, 16u64 << 20, "Microsoft reserved partition"),
            (basic, 16 << 20, 100 << 30, "Basic data partition"),
        ]
        .into_iter()
        .enumerate()
        {
            let e = DRIVE_LAYOUT_ENTRIES_AT + i * PARTITION_INFORMATION_EX_SIZE;
            put32(&mut b, e, 1);
            put64(&mut b, e + 8, off);
            put64(&mut b, e + 16, len);
            put32(&mut b, e + 24, i as u32 + 1);
            b[e + 32..e + 48].copy_from_slice(&guid);
            for (k, u) in name.encode_utf16().enumerate() {
                b[e + 72 + 2 * k..e + 74 + 2 * k].copy_from_slice(&u.to_le_bytes());
            }
        }
        b
    }

    #[test]
    fn gpt_layouts() {
        let (style, parts) = drive_layout(&gpt_layout()).unwrap();
        assert_eq!(style, PartitionStyle::Gpt);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].kind, "e3c9e316-0b5c-4db8-817d-f92df00215ae");
        assert_eq!(parts[0].name, "Microsoft reserved partition");
        assert_eq!(parts[1].kind, GPT_BASIC_DATA);
        assert_eq!(parts[1].number, 2);
        assert_eq!((parts[1].offset, parts[1].length), (16 << 20, 100 << 30));
        // cut short: not decoded
        assert_eq!(drive_layout(&gpt_layout()[..100]), None);
    }

    #[test]
    fn mbr_layouts_skip_empty_slots() {
        // MBR always reports four slots; one NTFS partition at 1 MiB
        let mut b = vec![0u8; DRIVE_LAYOUT_ENTRIES_AT + 4 * PARTITION_INFORMATION_EX_SIZE];
        put32(&mut b, 4, 4);
        put32(&mut b, 8, 0xdead_beef);
        let e = DRIVE_LAYOUT_ENTRIES_AT;
        put64(&mut b, e + 8, 1 << 20);
        put64(&mut b, e + 16, 20 << 30);
        put32(&mut b, e + 24, 1);
        b[e + 32] = 0x07;
        let (style, parts) = drive_layout(&b).unwrap();
        assert_eq!(style, PartitionStyle::Mbr);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].kind, "0x07");
        // a blank disk
        let mut raw = vec![0u8; DRIVE_LAYOUT_ENTRIES_AT];
        put32(&mut raw, 0, 2);
        assert_eq!(drive_layout(&raw), Some((PartitionStyle::Raw, vec![])));
    }

    /// A `DISK_PERFORMANCE` as Windows Server returns it for a busy data disk: 1 GiB read in
    /// 131072 reads taking 655.36 s in all (5 ms each), 512 MiB written in 65536 writes (2 ms
    /// each), 3 in flight, 10 split, disk 2, kept by partmgr ("PhysDisk").
    fn busy_disk() -> Vec<u8> {
        let mut b = vec![0u8; DISK_PERFORMANCE_SIZE];
        put64(&mut b, 0, 1 << 30);
        put64(&mut b, 8, 512 << 20);
        put64(&mut b, 16, 131_072 * 50_000);
        put64(&mut b, 24, 65_536 * 20_000);
        put64(&mut b, 32, 36_000_000_000);
        put32(&mut b, 40, 131_072);
        put32(&mut b, 44, 65_536);
        put32(&mut b, 48, 3);
        put32(&mut b, 52, 10);
        // 2026-11-27 08:00 UTC as a FILETIME
        put64(&mut b, 56, 134_402_400_000_000_000);
        put32(&mut b, 64, 2);
        for (k, u) in "PhysDisk".encode_utf16().enumerate() {
            b[68 + 2 * k..70 + 2 * k].copy_from_slice(&u.to_le_bytes());
        }
        b
    }

    #[test]
    fn disk_performance_counters() {
        let p = disk_performance(&busy_disk()).unwrap();
        assert_eq!((p.bytes_read, p.bytes_written), (1 << 30, 512 << 20));
        assert_eq!((p.read_count, p.write_count), (131_072, 65_536));
        assert_eq!(p.read_time_100ns / u64::from(p.read_count), 50_000, "5 ms");
        assert_eq!(
            p.write_time_100ns / u64::from(p.write_count),
            20_000,
            "2 ms"
        );
        assert_eq!(p.idle_time_100ns, 36_000_000_000);
        assert_eq!((p.queue_depth, p.split_count), (3, 10));
        assert_eq!(p.query_time_100ns, 134_402_400_000_000_000);
        assert_eq!((p.device_number, p.manager.as_str()), (2, "PhysDisk"));
        // the padding is not needed; a field cut short is
        assert_eq!(disk_performance(&busy_disk()[..84]), Some(p));
        assert_eq!(disk_performance(&busy_disk()[..83]), None);
        // a negative LARGE_INTEGER is not a huge count
        let mut b = busy_disk();
        put64(&mut b, 0, -1i64 as u64);
        assert_eq!(disk_performance(&b).unwrap().bytes_read, 0);
    }

    #[test]
    fn the_disks_of_a_volume_are_listed_once() {
        let e = |disk| DiskExtent {
            disk,
            offset: 1 << 20,
            length: 1 << 30,
        };
        assert_eq!(disks_of_extents(&[e(3), e(1), e(3)]), [1, 3]);
        assert!(disks_of_extents(&[]).is_empty());
    }

    #[test]
    fn volume_devices_from_roots() {
        assert_eq!(volume_device(r"E:\").as_deref(), Some(r"\\.\E:"));
        assert_eq!(volume_device(r"\\?\z:\").as_deref(), Some(r"\\.\Z:"));
        let guid = r"\\?\Volume{1b3c6a7e-0000-0000-0000-100000000000}";
        assert_eq!(volume_device(&format!("{guid}\\")).as_deref(), Some(guid));
        assert_eq!(volume_device(r"C:\mnt\data\"), None, "a mount folder");
    }

    #[test]
    fn device_paths() {
        assert_eq!(
            device_path(r"\\.\e:"),
            DevicePath::Volume {
                root: r"E:\".into()
            }
        );
        assert_eq!(
            device_path(r"\\.\PhysicalDrive2"),
            DevicePath::Disk { number: 2 }
        );
        assert_eq!(
            device_path(r"\\?\Volume{1b3c6a7e-0000-0000-0000-100000000000}"),
            DevicePath::Volume {
                root: r"\\?\Volume{1b3c6a7e-0000-0000-0000-100000000000}\".into()
            }
        );
        for p in [
            r"E:\sqltest.dat",
            r"\\.\PhysicalDriveX",
            r"\\.\E:\t.dat",
            "/dev/sdb",
        ] {
            assert_eq!(device_path(p), DevicePath::NotADevice, "{p}");
        }
    }
}

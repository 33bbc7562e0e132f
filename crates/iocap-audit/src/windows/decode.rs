//! The Windows structures the audit reads, decoded from their bytes by pure functions, so each
//! layout is tested on any system from byte fixtures laid out as the Windows SDK's headers
//! (winioctl.h, powerbase.h) define them (on Windows the sizes are also checked at compile time
//! against windows-sys', which the platform gives: `iocap_platform::volume::size`).
//! Little-endian, natural alignment, as on x64.
//!
//! - `PARTITION_INFORMATION_EX` (`IOCTL_DISK_GET_PARTITION_INFO_EX`, 144 B): `PartitionStyle`
//!   u32 @0, `StartingOffset` i64 @8, `PartitionLength` i64 @16, `PartitionNumber` u32 @24,
//!   then the union @32: MBR `PartitionType` u8 @32; GPT `PartitionType` GUID @32.
//! - `VOLUME_DISK_EXTENTS` (`IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS`): `NumberOfDiskExtents` u32
//!   @0, the `DISK_EXTENT`s from @8, 24 B each: `DiskNumber` u32 @0, `StartingOffset` i64 @8,
//!   `ExtentLength` i64 @16.
//! - `DISK_CACHE_INFORMATION` (`IOCTL_DISK_GET_CACHE_INFORMATION`, 24 B): `ParametersSavable`
//!   BOOLEAN @0, `ReadCacheEnabled` @1, `WriteCacheEnabled` @2.
//! - `STORAGE_PROPERTY_QUERY` (the input of `IOCTL_STORAGE_QUERY_PROPERTY`, 12 B): `PropertyId`
//!   u32 @0, `QueryType` u32 @4 (0, `PropertyStandardQuery`), `AdditionalParameters` @8.
//! - `STORAGE_DEVICE_DESCRIPTOR` (`StorageDeviceProperty`, 0): `VendorIdOffset` u32 @12,
//!   `ProductIdOffset` u32 @16, `BusType` u32 @28; the strings NUL-terminated at their offsets.
//! - `STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR` (`StorageAccessAlignmentProperty`, 6, 28 B):
//!   `BytesPerLogicalSector` u32 @16, `BytesPerPhysicalSector` u32 @20.
//! - `DEVICE_SEEK_PENALTY_DESCRIPTOR` (`StorageDeviceSeekPenaltyProperty`, 7, 12 B):
//!   `IncursSeekPenalty` BOOLEAN @8.
//! - `DEVICE_TRIM_DESCRIPTOR` (`StorageDeviceTrimProperty`, 8, 12 B): `TrimEnabled` BOOLEAN @8.
//! - `STORAGE_WRITE_CACHE_PROPERTY` (`StorageDeviceWriteCacheProperty`, 4, 28 B):
//!   `WriteCacheType` u32 @8, `WriteCacheEnabled` u32 @12, `WriteCacheChangeable` u32 @16,
//!   `WriteThroughSupported` u32 @20, `FlushCacheSupported` BOOLEAN @24,
//!   `UserDefinedPowerProtection` BOOLEAN @25, `NVCacheEnabled` BOOLEAN @26.
//! - `PROCESSOR_POWER_INFORMATION` (`CallNtPowerInformation(ProcessorInformation)`, 24 B per
//!   processor): `Number`, `MaxMhz`, `CurrentMhz`, `MhzLimit`, `MaxIdleState`,
//!   `CurrentIdleState`, u32 each.

/// Bytes of one `PARTITION_INFORMATION_EX`.
pub const PARTITION_INFORMATION_EX_SIZE: usize = 144;
/// Bytes of one `DISK_EXTENT`.
pub const DISK_EXTENT_SIZE: usize = 24;
/// Bytes of `DISK_CACHE_INFORMATION`.
pub const DISK_CACHE_INFORMATION_SIZE: usize = 24;
/// Bytes of `STORAGE_WRITE_CACHE_PROPERTY`.
pub const STORAGE_WRITE_CACHE_PROPERTY_SIZE: usize = 28;
/// Bytes of `STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR`.
pub const STORAGE_ACCESS_ALIGNMENT_SIZE: usize = 28;
/// Bytes of `DEVICE_TRIM_DESCRIPTOR` and of `DEVICE_SEEK_PENALTY_DESCRIPTOR`.
pub const DEVICE_BOOLEAN_DESCRIPTOR_SIZE: usize = 12;
/// Bytes of `STORAGE_DEVICE_DESCRIPTOR` without its raw properties' tail.
pub const STORAGE_DEVICE_DESCRIPTOR_SIZE: usize = 40;
/// Bytes of one `PROCESSOR_POWER_INFORMATION`.
pub const PROCESSOR_POWER_INFORMATION_SIZE: usize = 24;

/// `STORAGE_PROPERTY_ID`s the audit asks for.
pub const STORAGE_DEVICE_PROPERTY: u32 = 0;
pub const STORAGE_WRITE_CACHE_PROPERTY: u32 = 4;
pub const STORAGE_ACCESS_ALIGNMENT_PROPERTY: u32 = 6;
pub const STORAGE_SEEK_PENALTY_PROPERTY: u32 = 7;
pub const STORAGE_TRIM_PROPERTY: u32 = 8;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn flag_at(b: &[u8], at: usize) -> Option<bool> {
    b.get(at).map(|v| *v != 0)
}

/// A GUID as Windows stores it (the first three fields little-endian), in its usual text.
pub fn guid_text(b: &[u8]) -> Option<String> {
    let g = b.get(..16)?;
    let mut s = format!(
        "{:08x}-{:04x}-{:04x}-",
        u32::from_le_bytes(g[0..4].try_into().ok()?),
        u16::from_le_bytes(g[4..6].try_into().ok()?),
        u16::from_le_bytes(g[6..8].try_into().ok()?)
    );
    for (i, v) in g[8..].iter().enumerate() {
        if i == 2 {
            s.push('-');
        }
        s.push_str(&format!("{v:02x}"));
    }
    Some(s)
}

/// GPT partition types the audit names.
pub const GPT_BASIC_DATA: &str = "ebd0a0a2-b9e5-4433-87c0-68b6b72699c7";
pub const GPT_LDM_DATA: &str = "af9b60a0-1431-4f62-bc68-3311714a69ad";
pub const GPT_LDM_METADATA: &str = "5808c8aa-7e8f-42e0-85d2-e1e90434cfb3";
pub const GPT_STORAGE_SPACES: &str = "e75caf8f-f680-4cee-afa3-b001e56efc2d";
/// The MBR type of a dynamic disk's (LDM's) partition.
pub const MBR_LDM: &str = "0x42";

/// One partition as `PARTITION_INFORMATION_EX` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionInfo {
    /// `MBR`, `GPT` or `RAW`.
    pub style: &'static str,
    pub offset: u64,
    pub length: u64,
    pub number: u32,
    /// The MBR type byte as `0x07`, or the GPT type GUID as text; empty for RAW.
    pub kind: String,
}

/// `PARTITION_INFORMATION_EX`.
pub fn partition_info(b: &[u8]) -> Option<PartitionInfo> {
    if b.len() < PARTITION_INFORMATION_EX_SIZE {
        return None;
    }
    let (style, kind) = match u32_at(b, 0)? {
        0 => ("MBR", format!("0x{:02x}", b[32])),
        1 => ("GPT", guid_text(&b[32..48])?),
        2 => ("RAW", String::new()),
        _ => return None,
    };
    Some(PartitionInfo {
        style,
        offset: u64_at(b, 8)?,
        length: u64_at(b, 16)?,
        number: u32_at(b, 24)?,
        kind,
    })
}

/// One `DISK_EXTENT`: part of a volume on one disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub disk: u32,
    pub offset: u64,
    pub length: u64,
}

/// `VOLUME_DISK_EXTENTS`: every extent, or `None` when the buffer is shorter than it says.
pub fn disk_extents(b: &[u8]) -> Option<Vec<Extent>> {
    let n = u32_at(b, 0)? as usize;
    if n == 0 || n > 4096 {
        return None;
    }
    (0..n)
        .map(|i| {
            let at = 8 + i * DISK_EXTENT_SIZE;
            Some(Extent {
                disk: u32_at(b, at)?,
                offset: u64_at(b, at + 8)?,
                length: u64_at(b, at + 16)?,
            })
        })
        .collect()
}

/// `DISK_CACHE_INFORMATION`: (`ReadCacheEnabled`, `WriteCacheEnabled`).
pub fn cache_information(b: &[u8]) -> Option<(bool, bool)> {
    if b.len() < DISK_CACHE_INFORMATION_SIZE {
        return None;
    }
    Some((flag_at(b, 1)?, flag_at(b, 2)?))
}

/// The 12 bytes of a `STORAGE_PROPERTY_QUERY` for `PropertyStandardQuery` of `id`.
pub fn property_query(id: u32) -> [u8; 12] {
    let mut q = [0u8; 12];
    q[..4].copy_from_slice(&id.to_le_bytes());
    q
}

/// A three-valued answer: the SDK's enums say Unknown (0), then the two cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tri {
    Unknown,
    No,
    Yes,
}

impl Tri {
    fn of(v: u32) -> Tri {
        match v {
            1 => Tri::No,
            2 => Tri::Yes,
            _ => Tri::Unknown,
        }
    }
}

/// `STORAGE_WRITE_CACHE_PROPERTY`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteCache {
    /// `WriteCacheType`: 0 unknown, 1 none, 2 write-back, 3 write-through.
    pub cache_type: u32,
    /// `WriteCacheEnabled` (`WriteCacheDisabled` 1, `WriteCacheEnabled` 2).
    pub enabled: Tri,
    pub changeable: Tri,
    pub flush_supported: bool,
    /// The user said the cache is power protected ("Turn off Windows write-cache buffer
    /// flushing on the device"): Windows then sends no flushes to it.
    pub user_power_protection: bool,
    pub nv_cache_enabled: bool,
}

impl WriteCache {
    /// `WriteCacheType` in words.
    pub fn type_name(&self) -> &'static str {
        match self.cache_type {
            1 => "none",
            2 => "write-back",
            3 => "write-through",
            _ => "unknown",
        }
    }
}

/// `STORAGE_WRITE_CACHE_PROPERTY`.
pub fn write_cache_property(b: &[u8]) -> Option<WriteCache> {
    if b.len() < STORAGE_WRITE_CACHE_PROPERTY_SIZE {
        return None;
    }
    Some(WriteCache {
        cache_type: u32_at(b, 8)?,
        enabled: Tri::of(u32_at(b, 12)?),
        changeable: Tri::of(u32_at(b, 16)?),
        flush_supported: flag_at(b, 24)?,
        user_power_protection: flag_at(b, 25)?,
        nv_cache_enabled: flag_at(b, 26)?,
    })
}

/// `DEVICE_TRIM_DESCRIPTOR.TrimEnabled`, or `DEVICE_SEEK_PENALTY_DESCRIPTOR.IncursSeekPenalty`:
/// the BOOLEAN after `Version` and `Size`.
pub fn boolean_descriptor(b: &[u8]) -> Option<bool> {
    if b.len() < DEVICE_BOOLEAN_DESCRIPTOR_SIZE {
        return None;
    }
    flag_at(b, 8)
}

/// `STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR`: (logical, physical) bytes per sector.
pub fn access_alignment(b: &[u8]) -> Option<(u32, u32)> {
    if b.len() < STORAGE_ACCESS_ALIGNMENT_SIZE {
        return None;
    }
    let (l, p) = (u32_at(b, 16)?, u32_at(b, 20)?);
    (l > 0 && p > 0).then_some((l, p))
}

/// What `STORAGE_DEVICE_DESCRIPTOR` says of a disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceDescriptor {
    pub vendor: String,
    pub product: String,
    /// `STORAGE_BUS_TYPE`.
    pub bus_type: u32,
}

/// `STORAGE_BUS_TYPE` values the audit acts on.
pub const BUS_TYPE_RAID: u32 = 0x08;
pub const BUS_TYPE_SPACES: u32 = 0x10;

impl DeviceDescriptor {
    /// `BusType` in words.
    pub fn bus_name(&self) -> &'static str {
        const NAMES: [&str; 20] = [
            "unknown",
            "SCSI",
            "ATAPI",
            "ATA",
            "1394",
            "SSA",
            "Fibre Channel",
            "USB",
            "RAID",
            "iSCSI",
            "SAS",
            "SATA",
            "SD",
            "MMC",
            "virtual",
            "file-backed virtual",
            "Storage Spaces",
            "NVMe",
            "SCM",
            "UFS",
        ];
        NAMES
            .get(self.bus_type as usize)
            .copied()
            .unwrap_or("other")
    }
}

/// The NUL-terminated ASCII string at `at` (none at offset 0), trimmed.
fn c_string(b: &[u8], at: usize) -> String {
    if at == 0 || at >= b.len() {
        return String::new();
    }
    let s = &b[at..];
    let end = s.iter().position(|c| *c == 0).unwrap_or(s.len());
    String::from_utf8_lossy(&s[..end]).trim().to_string()
}

/// `STORAGE_DEVICE_DESCRIPTOR`.
pub fn device_descriptor(b: &[u8]) -> Option<DeviceDescriptor> {
    if b.len() < STORAGE_DEVICE_DESCRIPTOR_SIZE {
        return None;
    }
    Some(DeviceDescriptor {
        vendor: c_string(b, u32_at(b, 12)? as usize),
        product: c_string(b, u32_at(b, 16)? as usize),
        bus_type: u32_at(b, 28)?,
    })
}

/// One `PROCESSOR_POWER_INFORMATION`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessorPower {
    pub number: u32,
    pub max_mhz: u32,
    pub current_mhz: u32,
    pub limit_mhz: u32,
}

/// The array `CallNtPowerInformation(ProcessorInformation)` fills, one entry per processor.
pub fn processor_power(b: &[u8]) -> Option<Vec<ProcessorPower>> {
    let v: Vec<ProcessorPower> = b
        .chunks_exact(PROCESSOR_POWER_INFORMATION_SIZE)
        .map(|e| {
            Some(ProcessorPower {
                number: u32_at(e, 0)?,
                max_mhz: u32_at(e, 4)?,
                current_mhz: u32_at(e, 8)?,
                limit_mhz: u32_at(e, 12)?,
            })
        })
        .collect::<Option<_>>()?;
    (!v.is_empty()).then_some(v)
}

// The layouts are the SDK's: checked against windows-sys (through the platform, which makes
// the calls) when building for Windows.
#[cfg(windows)]
const _: () = {
    use iocap_platform::power::PROCESSOR_POWER_INFORMATION_SIZE as PROCESSOR_POWER;
    use iocap_platform::volume::size;
    assert!(size::PARTITION_INFORMATION_EX == PARTITION_INFORMATION_EX_SIZE);
    assert!(size::DISK_EXTENT == DISK_EXTENT_SIZE);
    assert!(size::DISK_CACHE_INFORMATION == DISK_CACHE_INFORMATION_SIZE);
    assert!(size::STORAGE_WRITE_CACHE_PROPERTY == STORAGE_WRITE_CACHE_PROPERTY_SIZE);
    assert!(size::STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR == STORAGE_ACCESS_ALIGNMENT_SIZE);
    assert!(size::DEVICE_TRIM_DESCRIPTOR == DEVICE_BOOLEAN_DESCRIPTOR_SIZE);
    assert!(size::DEVICE_SEEK_PENALTY_DESCRIPTOR == DEVICE_BOOLEAN_DESCRIPTOR_SIZE);
    assert!(size::STORAGE_DEVICE_DESCRIPTOR == STORAGE_DEVICE_DESCRIPTOR_SIZE);
    assert!(size::STORAGE_PROPERTY_QUERY == 12);
    assert!(PROCESSOR_POWER == PROCESSOR_POWER_INFORMATION_SIZE);
};

#[cfg(test)]
#[path = "decode_tests.rs"]
pub(crate) mod tests;

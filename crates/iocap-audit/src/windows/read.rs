//! The Windows audit's facts from the system: the volume under a path, the volume and disk
//! ioctls, GetDiskFreeSpace(Ex)W and the power calls. Each failure is returned with the call's
//! error, for the checks to show as UNKNOWN.

use std::ffi::OsStr;
use std::fs::File;
use std::os::windows::io::AsRawHandle;
use std::path::Path;

use iocap_platform::win;
use windows_sys::Win32::Storage::FileSystem::{
    GetDiskFreeSpaceExW, GetDiskFreeSpaceW, GetVolumeNameForVolumeMountPointW,
    IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS,
};
use windows_sys::Win32::System::Ioctl::{
    IOCTL_DISK_GET_CACHE_INFORMATION, IOCTL_DISK_GET_PARTITION_INFO_EX,
    IOCTL_STORAGE_QUERY_PROPERTY,
};
use windows_sys::Win32::System::IO::DeviceIoControl;

use super::{decode, Query, Source, Volume};

// The decoders' layouts are the SDK's: checked against windows-sys when building for Windows.
const _: () = {
    use std::mem::size_of;
    use windows_sys::Win32::System::Ioctl::{
        DEVICE_SEEK_PENALTY_DESCRIPTOR, DEVICE_TRIM_DESCRIPTOR, DISK_CACHE_INFORMATION,
        DISK_EXTENT, PARTITION_INFORMATION_EX, STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR,
        STORAGE_DEVICE_DESCRIPTOR, STORAGE_PROPERTY_QUERY, STORAGE_WRITE_CACHE_PROPERTY,
    };
    use windows_sys::Win32::System::Power::PROCESSOR_POWER_INFORMATION;
    assert!(size_of::<PARTITION_INFORMATION_EX>() == decode::PARTITION_INFORMATION_EX_SIZE);
    assert!(size_of::<DISK_EXTENT>() == decode::DISK_EXTENT_SIZE);
    assert!(size_of::<DISK_CACHE_INFORMATION>() == decode::DISK_CACHE_INFORMATION_SIZE);
    assert!(size_of::<STORAGE_WRITE_CACHE_PROPERTY>() == decode::STORAGE_WRITE_CACHE_PROPERTY_SIZE);
    assert!(
        size_of::<STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR>() == decode::STORAGE_ACCESS_ALIGNMENT_SIZE
    );
    assert!(size_of::<DEVICE_TRIM_DESCRIPTOR>() == decode::DEVICE_BOOLEAN_DESCRIPTOR_SIZE);
    assert!(size_of::<DEVICE_SEEK_PENALTY_DESCRIPTOR>() == decode::DEVICE_BOOLEAN_DESCRIPTOR_SIZE);
    assert!(size_of::<STORAGE_DEVICE_DESCRIPTOR>() == decode::STORAGE_DEVICE_DESCRIPTOR_SIZE);
    assert!(size_of::<STORAGE_PROPERTY_QUERY>() == 12);
    assert!(size_of::<PROCESSOR_POWER_INFORMATION>() == decode::PROCESSOR_POWER_INFORMATION_SIZE);
};

/// The system's answers.
pub struct System;

fn wide(s: &str) -> Vec<u16> {
    win::wide(OsStr::new(s))
}

fn os_error() -> String {
    std::io::Error::last_os_error().to_string()
}

impl Source for System {
    fn volume(&self, path: &Path) -> Result<Volume, String> {
        let root = win::volume_root(path).ok_or_else(|| {
            format!(
                "GetVolumePathNameW({}) failed: {}",
                path.display(),
                os_error()
            )
        })?;
        let w = wide(&root);
        let mut name = [0u16; 64];
        // SAFETY: `w` is NUL-terminated; `name` is writable for its stated length.
        let ok = unsafe {
            GetVolumeNameForVolumeMountPointW(w.as_ptr(), name.as_mut_ptr(), name.len() as u32)
        };
        let device = if ok != 0 {
            let n = name.iter().position(|c| *c == 0).unwrap_or(name.len());
            String::from_utf16_lossy(&name[..n])
                .trim_end_matches('\\')
                .to_string()
        } else {
            // a drive letter's device without the volume manager's name (Wine has none)
            format!("\\\\.\\{}", root.trim_end_matches('\\'))
        };
        let fs = win::fs_at_root(&root)
            .map_err(|e| format!("GetVolumeInformationW({root}) failed: error {e}"));
        Ok(Volume { root, device, fs })
    }

    fn cluster(&self, root: &str) -> Result<(u32, u32), String> {
        let w = wide(root);
        let (mut spc, mut bps, mut fc, mut tc) = (0u32, 0u32, 0u32, 0u32);
        // SAFETY: `w` is NUL-terminated; four writable u32s.
        let ok = unsafe { GetDiskFreeSpaceW(w.as_ptr(), &mut spc, &mut bps, &mut fc, &mut tc) };
        if ok == 0 {
            return Err(os_error());
        }
        Ok((spc, bps))
    }

    fn free_space(&self, root: &str) -> Result<(u64, u64), String> {
        let w = wide(root);
        let (mut avail, mut total, mut free) = (0u64, 0u64, 0u64);
        // SAFETY: `w` is NUL-terminated; three writable u64s.
        let ok = unsafe { GetDiskFreeSpaceExW(w.as_ptr(), &mut avail, &mut total, &mut free) };
        if ok == 0 {
            return Err(os_error());
        }
        Ok((avail, total))
    }

    fn ioctl(&self, device: &str, q: Query) -> Result<Vec<u8>, String> {
        let f = open(device, q == Query::CacheInformation)?;
        let (code, input): (u32, Vec<u8>) = match q {
            Query::PartitionInfo => (IOCTL_DISK_GET_PARTITION_INFO_EX, Vec::new()),
            Query::DiskExtents => (IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, Vec::new()),
            Query::CacheInformation => (IOCTL_DISK_GET_CACHE_INFORMATION, Vec::new()),
            Query::Property(id) => (
                IOCTL_STORAGE_QUERY_PROPERTY,
                decode::property_query(id).to_vec(),
            ),
        };
        ioctl(&f, code, &input, 4096).map_err(|e| e.to_string())
    }

    fn power_scheme(&self) -> Result<(String, String), String> {
        win::power_scheme()
            .ok_or_else(|| "PowerGetActiveScheme gave no active power scheme".to_string())
    }

    fn min_processor_state(&self, scheme_guid: &str) -> Result<u32, String> {
        use windows_sys::core::GUID;
        use windows_sys::Win32::System::Power::PowerReadACValueIndex;
        let scheme = u128::from_str_radix(&scheme_guid.replace('-', ""), 16)
            .map(GUID::from_u128)
            .map_err(|_| format!("power scheme GUID {scheme_guid:?} not understood"))?;
        // GUID_PROCESSOR_SETTINGS_SUBGROUP and GUID_PROCESSOR_THROTTLE_MINIMUM (winnt.h)
        let sub = GUID::from_u128(0x54533251_82be_4824_96c1_47b60b740d00);
        let min = GUID::from_u128(0x893dee8e_2bef_41e0_89c6_b55d0929964c);
        let mut v = 0u32;
        // SAFETY: the default root key; three valid GUIDs; `v` is writable.
        let rc =
            unsafe { PowerReadACValueIndex(std::ptr::null_mut(), &scheme, &sub, &min, &mut v) };
        if rc != 0 {
            return Err(format!(
                "PowerReadACValueIndex(processor minimum state) failed: error {rc}"
            ));
        }
        Ok(v)
    }

    fn processors(&self) -> Result<Vec<u8>, String> {
        use windows_sys::Win32::System::Power::{CallNtPowerInformation, ProcessorInformation};
        use windows_sys::Win32::System::Threading::GetActiveProcessorCount;
        // SAFETY: no arguments but the group (ALL_PROCESSOR_GROUPS).
        let n = unsafe { GetActiveProcessorCount(0xffff) }.max(1) as usize;
        let mut buf = vec![0u8; n * decode::PROCESSOR_POWER_INFORMATION_SIZE];
        // SAFETY: no input; `buf` is writable for its stated length.
        let status = unsafe {
            CallNtPowerInformation(
                ProcessorInformation,
                std::ptr::null(),
                0,
                buf.as_mut_ptr().cast(),
                buf.len() as u32,
            )
        };
        if status != 0 {
            return Err(format!(
                "CallNtPowerInformation(ProcessorInformation) failed: NTSTATUS 0x{:08x}",
                status as u32
            ));
        }
        Ok(buf)
    }

    fn service_rights(&self, service: &str) -> Result<(String, Vec<String>), String> {
        super::lsa::service_rights(service)
    }
}

/// Opens a volume or disk: for reading where the call needs it (the cache information), else
/// for queries only; an administrator's prompt is needed for the first.
fn open(device: &str, read: bool) -> Result<File, String> {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::{FILE_SHARE_READ, FILE_SHARE_WRITE};
    if read {
        let r = std::fs::OpenOptions::new()
            .read(true)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
            .open(device);
        return r.map_err(|e| {
            format!("cannot open {device} for reading ({e}; run from an elevated prompt)")
        });
    }
    win::open_query(device).map_err(|e| format!("cannot open {device} ({e})"))
}

/// A synchronous `DeviceIoControl` with `input`; its output, up to `max` bytes.
fn ioctl(f: &File, code: u32, input: &[u8], max: usize) -> std::io::Result<Vec<u8>> {
    let mut out = vec![0u8; max];
    let mut got = 0u32;
    let inp = if input.is_empty() {
        std::ptr::null()
    } else {
        input.as_ptr().cast()
    };
    // SAFETY: a valid handle opened without FILE_FLAG_OVERLAPPED (so synchronous, no
    // OVERLAPPED); `input` readable and `out` writable for their stated lengths.
    let ok = unsafe {
        DeviceIoControl(
            f.as_raw_handle() as _,
            code,
            inp,
            input.len() as u32,
            out.as_mut_ptr().cast(),
            max as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    out.truncate(got as usize);
    Ok(out)
}

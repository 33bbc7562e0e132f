//! Small safe wrappers over the Win32 calls iocap makes outside the hot path (the engine's
//! targets and backends, verify, fsync, the audit): opening and reopening handles, identities
//! and file system facts of open files, the disk and volume ioctls (decoded by
//! [`crate::winstruct`]), memory, process times, the OS version and the power scheme.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::path::Path;

use windows_sys::Win32::Foundation::{
    GetLastError, ERROR_IO_PENDING, FILETIME, HANDLE, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Storage::FileSystem::{
    FlushFileBuffers, GetFileInformationByHandle, GetVolumeInformationByHandleW,
    GetVolumeInformationW, ReOpenFile, BY_HANDLE_FILE_INFORMATION, FILE_SHARE_READ,
    FILE_SHARE_WRITE,
};
use windows_sys::Win32::System::IO::DeviceIoControl;

use crate::winstruct;

// The decoders' layouts are the SDK's: checked against windows-sys when building for Windows.
const _: () = {
    use std::mem::size_of;
    use windows_sys::Win32::System::Ioctl::{
        DISK_EXTENT, DISK_GEOMETRY_EX, DRIVE_LAYOUT_INFORMATION_EX, PARTITION_INFORMATION_EX,
        STORAGE_DEVICE_NUMBER,
    };
    assert!(size_of::<PARTITION_INFORMATION_EX>() == winstruct::PARTITION_INFORMATION_EX_SIZE);
    assert!(
        size_of::<DRIVE_LAYOUT_INFORMATION_EX>()
            == winstruct::DRIVE_LAYOUT_ENTRIES_AT + winstruct::PARTITION_INFORMATION_EX_SIZE
    );
    assert!(size_of::<DISK_EXTENT>() == winstruct::DISK_EXTENT_SIZE);
    assert!(size_of::<STORAGE_DEVICE_NUMBER>() == 12);
    assert!(std::mem::offset_of!(DISK_GEOMETRY_EX, DiskSize) == 24);
};

/// `s` as a NUL-terminated UTF-16 string.
pub fn wide(s: &OsStr) -> Vec<u16> {
    s.encode_wide().chain(std::iter::once(0)).collect()
}

pub fn raw(f: &File) -> HANDLE {
    f.as_raw_handle() as HANDLE
}

/// FlushFileBuffers on `f`, as a backend reports it: 0, or the negated Win32 error.
pub fn flush(f: &File) -> i32 {
    // SAFETY: FlushFileBuffers on a handle `f` owns.
    if unsafe { FlushFileBuffers(raw(f)) } != 0 {
        0
    } else {
        -(last_error() as i32)
    }
}

/// The same file as `f`, opened anew with other flags (`FILE_FLAG_OVERLAPPED`,
/// `FILE_FLAG_NO_BUFFERING`, `FILE_FLAG_WRITE_THROUGH`): ReOpenFile, so it is the very file that
/// was checked, never a path looked up again. Each worker gets its own handle, as DiskSpd's do.
pub fn reopen(f: &File, write: bool, flags: u32) -> io::Result<File> {
    use windows_sys::Win32::Foundation::{GENERIC_READ, GENERIC_WRITE};
    let access = GENERIC_READ | if write { GENERIC_WRITE } else { 0 };
    // SAFETY: `f` is an open handle for the duration of the call; the result is a new handle
    // that we own (or INVALID_HANDLE_VALUE).
    let h = unsafe { ReOpenFile(raw(f), access, FILE_SHARE_READ | FILE_SHARE_WRITE, flags) };
    if h == INVALID_HANDLE_VALUE || h.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `h` is a valid handle we own and nothing else closes.
    Ok(File::from(unsafe {
        OwnedHandle::from_raw_handle(h as RawHandle)
    }))
}

/// The identity of an open file: its volume's serial number and its file index (Windows' device
/// and inode), and its attributes.
pub fn file_id(f: &File) -> io::Result<(u32, u64, u32)> {
    // SAFETY: a zeroed BY_HANDLE_FILE_INFORMATION is a valid output buffer.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: a valid handle and a writable structure.
    if unsafe { GetFileInformationByHandle(raw(f), &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((
        info.dwVolumeSerialNumber,
        u64::from(info.nFileIndexHigh) << 32 | u64::from(info.nFileIndexLow),
        info.dwFileAttributes,
    ))
}

fn from_wide(buf: &[u16]) -> String {
    let n = buf.iter().position(|c| *c == 0).unwrap_or(buf.len());
    String::from_utf16_lossy(&buf[..n])
}

/// The file system holding the open file `f`: its name (`NTFS`, `ReFS`) and flags
/// (`FILE_NAMED_STREAMS` ...).
pub fn fs_of(f: &File) -> Option<(String, u32)> {
    volume_info(Volume::Of(raw(f)))
}

/// The file system mounted at the root `root` (`E:\`): its name (`RAW` where Windows says so),
/// or the Win32 error GetVolumeInformationW gave.
pub fn fs_at_root(root: &str) -> Result<String, u32> {
    let w = wide(OsStr::new(root));
    volume_info(Volume::At(&w))
        .map(|(name, _)| name)
        .ok_or_else(last_error)
}

/// Which volume to ask about: the one holding an open handle, or the one at a root path
/// (NUL-terminated UTF-16).
enum Volume<'a> {
    Of(HANDLE),
    At(&'a [u16]),
}

/// What GetVolumeInformation(ByHandle)W says of `v`: the file system's name and its flags.
fn volume_info(v: Volume) -> Option<(String, u32)> {
    let mut name = [0u16; 64];
    let (mut serial, mut maxlen, mut flags) = (0u32, 0u32, 0u32);
    let (np, nl) = (name.as_mut_ptr(), name.len() as u32);
    let null = std::ptr::null_mut();
    let out = (
        &mut serial as *mut u32,
        &mut maxlen as *mut u32,
        &mut flags as *mut u32,
    );
    // SAFETY: the handle is open or the root NUL-terminated (the callers' contract); every
    // output pointer is writable and the name's length is given.
    #[rustfmt::skip]
    let ok = unsafe {
        match v {
            Volume::Of(h) => GetVolumeInformationByHandleW(h, null, 0, out.0, out.1, out.2, np, nl),
            Volume::At(r) => GetVolumeInformationW(r.as_ptr(), null, 0, out.0, out.1, out.2, np, nl),
        }
    };
    (ok != 0).then(|| (from_wide(&name), flags))
}

/// A `DeviceIoControl` with no input; its output, up to `max` bytes.
pub fn ioctl(f: &File, code: u32, max: usize) -> io::Result<Vec<u8>> {
    let mut out = vec![0u8; max];
    let mut got = 0u32;
    // SAFETY: a valid handle; no input; `out` is writable for `max` bytes; synchronous (no
    // OVERLAPPED: the handle was opened without FILE_FLAG_OVERLAPPED).
    let ok = unsafe {
        DeviceIoControl(
            raw(f),
            code,
            std::ptr::null(),
            0,
            out.as_mut_ptr().cast(),
            max as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    out.truncate(got as usize);
    Ok(out)
}

/// The size of a volume or disk (`IOCTL_DISK_GET_LENGTH_INFO`).
pub fn device_size(f: &File) -> io::Result<u64> {
    use windows_sys::Win32::System::Ioctl::IOCTL_DISK_GET_LENGTH_INFO;
    let b = ioctl(f, IOCTL_DISK_GET_LENGTH_INFO, 8)?;
    winstruct::length_info(&b).ok_or_else(|| io::Error::other("short GET_LENGTH_INFORMATION"))
}

/// The bytes per sector of a volume or disk (`IOCTL_DISK_GET_DRIVE_GEOMETRY_EX`).
pub fn device_sector(f: &File) -> Option<u64> {
    use windows_sys::Win32::System::Ioctl::IOCTL_DISK_GET_DRIVE_GEOMETRY_EX;
    let b = ioctl(f, IOCTL_DISK_GET_DRIVE_GEOMETRY_EX, 256).ok()?;
    winstruct::geometry_ex(&b)
        .map(|(bps, _)| u64::from(bps))
        .filter(|b| b.is_power_of_two())
}

/// Bytes of physical memory: (total, available), from GlobalMemoryStatusEx.
pub fn memory() -> Option<(u64, u64)> {
    use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};
    // SAFETY: a zeroed MEMORYSTATUSEX with its length set is what the call wants.
    let mut m: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
    m.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
    // SAFETY: a valid, writable structure of the stated length.
    (unsafe { GlobalMemoryStatusEx(&mut m) } != 0).then_some((m.ullTotalPhys, m.ullAvailPhys))
}

fn filetime_s(f: FILETIME) -> f64 {
    (u64::from(f.dwHighDateTime) << 32 | u64::from(f.dwLowDateTime)) as f64 / 1e7
}

/// User and kernel CPU seconds of this process (every thread), from GetProcessTimes.
pub fn process_times() -> Option<(f64, f64)> {
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessTimes};
    let z = || FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut c, mut e, mut k, mut u) = (z(), z(), z(), z());
    // SAFETY: the pseudo-handle of this process and four writable FILETIMEs.
    let ok = unsafe { GetProcessTimes(GetCurrentProcess(), &mut c, &mut e, &mut k, &mut u) };
    (ok != 0).then(|| (filetime_s(u), filetime_s(k)))
}

/// `Windows 10.0.20348` (the kernel's version and build), from RtlGetVersion.
pub fn os_version() -> String {
    use windows_sys::Wdk::System::SystemServices::RtlGetVersion;
    use windows_sys::Win32::System::SystemInformation::OSVERSIONINFOW;
    // SAFETY: a zeroed OSVERSIONINFOW with its size set is what the call wants.
    let mut v: OSVERSIONINFOW = unsafe { std::mem::zeroed() };
    v.dwOSVersionInfoSize = std::mem::size_of::<OSVERSIONINFOW>() as u32;
    // SAFETY: a valid, writable structure of the stated size.
    if unsafe { RtlGetVersion(&mut v) } != 0 {
        return "Windows".into();
    }
    format!(
        "Windows {}.{}.{}",
        v.dwMajorVersion, v.dwMinorVersion, v.dwBuildNumber
    )
}

/// The active power scheme: its friendly name (`High performance`; `<unknown>` where it has
/// none, as DiskSpd writes it) and its GUID as lowercase text without braces, from
/// PowerGetActiveScheme and PowerReadFriendlyName.
pub fn power_scheme() -> Option<(String, String)> {
    use windows_sys::core::GUID;
    use windows_sys::Win32::Foundation::{LocalFree, ERROR_SUCCESS};
    use windows_sys::Win32::System::Power::PowerGetActiveScheme;
    let mut p: *mut GUID = std::ptr::null_mut();
    // SAFETY: a null root key is the default one; `p` receives a GUID allocated with LocalAlloc,
    // freed below.
    if unsafe { PowerGetActiveScheme(std::ptr::null_mut(), &mut p) } != ERROR_SUCCESS || p.is_null()
    {
        return None;
    }
    // SAFETY: `p` points to the GUID the call allocated, until it is freed just after.
    let g = unsafe { *p };
    // SAFETY: `p` came from PowerGetActiveScheme, which says to free it with LocalFree; once.
    unsafe { LocalFree(p.cast()) };
    let bytes: Vec<u8> = (g.data1.to_le_bytes().into_iter())
        .chain(g.data2.to_le_bytes())
        .chain(g.data3.to_le_bytes())
        .chain(g.data4)
        .collect();
    let guid = winstruct::guid_text(&bytes)?;
    let name = scheme_name(&g).filter(|n| !n.is_empty());
    Some((name.unwrap_or_else(|| "<unknown>".into()), guid))
}

/// A power scheme's friendly name, from PowerReadFriendlyName (asked first for its length in
/// bytes, then for the UTF-16 text).
fn scheme_name(g: &windows_sys::core::GUID) -> Option<String> {
    use windows_sys::Win32::Foundation::ERROR_SUCCESS;
    use windows_sys::Win32::System::Power::PowerReadFriendlyName;
    let null = std::ptr::null();
    let mut bytes = 0u32;
    // SAFETY: the default root key, a valid scheme GUID, no subgroup or setting; a null buffer
    // asks only for the length, written to `bytes`.
    let ok = unsafe {
        PowerReadFriendlyName(
            std::ptr::null_mut(),
            g,
            null,
            null,
            std::ptr::null_mut(),
            &mut bytes,
        )
    };
    if ok != ERROR_SUCCESS || bytes == 0 {
        return None;
    }
    let mut buf = vec![0u16; (bytes as usize).div_ceil(2)];
    let mut len = (buf.len() * 2) as u32;
    // SAFETY: as above, with `buf` writable for `len` bytes.
    let ok = unsafe {
        PowerReadFriendlyName(
            std::ptr::null_mut(),
            g,
            null,
            null,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    (ok == ERROR_SUCCESS).then(|| from_wide(&buf))
}

/// The last Win32 error, for calls that return FALSE.
pub fn last_error() -> u32 {
    // SAFETY: reads this thread's last-error value.
    unsafe { GetLastError() }
}

pub const IO_PENDING: u32 = ERROR_IO_PENDING;

/// Bytes free to this user in the volume holding `dir` (GetDiskFreeSpaceExW).
pub fn free_bytes(dir: &Path) -> Option<u64> {
    use windows_sys::Win32::Storage::FileSystem::GetDiskFreeSpaceExW;
    let w = wide(dir.as_os_str());
    let (mut avail, mut total, mut free) = (0u64, 0u64, 0u64);
    // SAFETY: `w` is NUL-terminated; three writable u64s.
    let ok = unsafe { GetDiskFreeSpaceExW(w.as_ptr(), &mut avail, &mut total, &mut free) };
    (ok != 0).then_some(avail)
}

/// The root of the volume holding `p` (`C:\`), from GetVolumePathNameW.
pub fn volume_root(p: &Path) -> Option<String> {
    use windows_sys::Win32::Storage::FileSystem::GetVolumePathNameW;
    let w = wide(p.as_os_str());
    let mut out = [0u16; 1024];
    // SAFETY: `w` is NUL-terminated; `out` is writable for its stated length.
    let ok = unsafe { GetVolumePathNameW(w.as_ptr(), out.as_mut_ptr(), out.len() as u32) };
    (ok != 0).then(|| from_wide(&out))
}

/// The sector size of the volume whose root is `root` (GetDiskFreeSpaceW's bytes per sector):
/// what FILE_FLAG_NO_BUFFERING aligns to on a file of that volume.
pub fn sector_of_root(root: &str) -> Option<u64> {
    use windows_sys::Win32::Storage::FileSystem::GetDiskFreeSpaceW;
    let w = wide(OsStr::new(root));
    let (mut spc, mut bps, mut fc, mut tc) = (0u32, 0u32, 0u32, 0u32);
    // SAFETY: `w` is NUL-terminated; four writable u32s.
    let ok = unsafe { GetDiskFreeSpaceW(w.as_ptr(), &mut spc, &mut bps, &mut fc, &mut tc) };
    (ok != 0 && bps.is_power_of_two()).then_some(u64::from(bps))
}

/// Every volume's GUID path (`\\?\Volume{...}\`), from FindFirstVolumeW/FindNextVolumeW.
pub fn volumes() -> Vec<String> {
    use windows_sys::Win32::Storage::FileSystem::{
        FindFirstVolumeW, FindNextVolumeW, FindVolumeClose,
    };
    let mut out = Vec::new();
    let mut buf = [0u16; 260];
    // SAFETY: `buf` is writable for its stated length.
    let h = unsafe { FindFirstVolumeW(buf.as_mut_ptr(), buf.len() as u32) };
    if h == INVALID_HANDLE_VALUE {
        return out;
    }
    loop {
        out.push(from_wide(&buf));
        // SAFETY: `h` is the search handle; `buf` is writable for its stated length.
        if unsafe { FindNextVolumeW(h, buf.as_mut_ptr(), buf.len() as u32) } == 0 {
            break;
        }
    }
    // SAFETY: closes the search handle opened above, once.
    unsafe { FindVolumeClose(h) };
    out
}

/// Opens a device (a volume or disk) for queries only: no read or write access, so it never
/// blocks on or disturbs what uses it.
pub fn open_query(path: &str) -> io::Result<File> {
    use std::os::windows::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .access_mode(0)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
        .open(path)
}

/// The path Windows has for the open file `f` (`\\?\C:\dir\file`), from
/// GetFinalPathNameByHandleW.
pub fn final_path(f: &File) -> Option<std::path::PathBuf> {
    use std::os::windows::ffi::OsStringExt;
    use windows_sys::Win32::Storage::FileSystem::GetFinalPathNameByHandleW;
    let mut buf = vec![0u16; 1024];
    // SAFETY: a valid handle; `buf` is writable for its stated length; flags 0 is
    // FILE_NAME_NORMALIZED | VOLUME_NAME_DOS.
    let n = unsafe { GetFinalPathNameByHandleW(raw(f), buf.as_mut_ptr(), buf.len() as u32, 0) };
    (n > 0 && (n as usize) < buf.len())
        .then(|| std::ffi::OsString::from_wide(&buf[..n as usize]).into())
}

//! What the kernel says about a target's device: sizes, O_DIRECT alignment, free space, and
//! whether a block device is in use. Read from ioctls, statx and sysfs; every function degrades
//! to a safe answer when a value cannot be read.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

const BLKSSZGET: libc::c_ulong = 0x1268;
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

/// Size of a block device in bytes.
pub fn block_device_size(f: &File) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 to the pointer.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Logical block size of a block device.
pub fn block_device_logical_block(f: &File) -> Option<u64> {
    let mut lbs: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int to the pointer.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), BLKSSZGET, &mut lbs) };
    (rc == 0 && lbs > 0).then_some(lbs as u64)
}

/// The offset alignment O_DIRECT needs on a regular file: statx's `dio_offset_align` where the
/// kernel reports it (Linux 6.1+), else the logical block size of the file system's device,
/// else 512.
pub fn file_dio_alignment(f: &File) -> u64 {
    // SAFETY: a zeroed statx is a valid output buffer.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: empty path with AT_EMPTY_PATH stats the descriptor itself.
    let rc = unsafe {
        libc::statx(
            f.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if rc == 0 && stx.stx_mask & libc::STATX_DIOALIGN != 0 && stx.stx_dio_offset_align > 0 {
        return u64::from(stx.stx_dio_offset_align);
    }
    f.metadata()
        .ok()
        .and_then(|m| sysfs_logical_block(m.dev()))
        .unwrap_or(512)
}

fn major_minor(dev: u64) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
}

fn sysfs_logical_block(dev: u64) -> Option<u64> {
    let (ma, mi) = major_minor(dev);
    for rel in ["queue/logical_block_size", "../queue/logical_block_size"] {
        if let Ok(s) = std::fs::read_to_string(format!("/sys/dev/block/{ma}:{mi}/{rel}")) {
            if let Ok(v) = s.trim().parse() {
                return Some(v);
            }
        }
    }
    None
}

/// Bytes available to an unprivileged writer in the file system holding `dir`.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statvfs is a valid output buffer; `c` is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above: `c` outlives the call and `st` is a valid out-pointer.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    (rc == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// Why the block device `rdev` (opened as `path`) must not be written, if it is in use: mounted
/// (itself or a partition of it), held by device-mapper or md, or used as swap.
pub fn block_device_in_use(rdev: u64, path: &Path) -> Option<String> {
    let (ma, mi) = major_minor(rdev);
    let mut devs = vec![format!("{ma}:{mi}")];
    let sys = format!("/sys/dev/block/{ma}:{mi}");
    if let Ok(entries) = std::fs::read_dir(&sys) {
        for e in entries.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Ok(d) = std::fs::read_to_string(p.join("dev")) {
                    devs.push(d.trim().to_string());
                }
            }
        }
    }
    if let Ok(mi) = std::fs::read_to_string("/proc/self/mountinfo") {
        for line in mi.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 4 && devs.iter().any(|d| d == f[2]) {
                return Some(format!("it is mounted at {}", f[4]));
            }
        }
    }
    for d in &devs {
        let holders = format!("/sys/dev/block/{d}/holders");
        if let Ok(mut h) = std::fs::read_dir(&holders) {
            if let Some(Ok(e)) = h.next() {
                return Some(format!(
                    "it is held by {} (device-mapper, LVM or md)",
                    e.file_name().to_string_lossy()
                ));
            }
        }
    }
    if let (Ok(swaps), Ok(canon)) = (
        std::fs::read_to_string("/proc/swaps"),
        std::fs::canonicalize(path),
    ) {
        for line in swaps.lines().skip(1) {
            if let Some(dev) = line.split_whitespace().next() {
                if std::fs::canonicalize(dev).ok().as_deref() == Some(canon.as_path()) {
                    return Some("it is in use as swap".into());
                }
            }
        }
    }
    None
}

/// Whether [`device_and_fs`] names the block device under a file: on Linux it does, so a file
/// without one is on tmpfs, FUSE or a network file system.
pub const NAMES_BLOCK_DEVICE: bool = true;

/// Where a target lives, for the host fingerprint stored with each result: the block device
/// (sysfs name, e.g. `vda1`) and, for a file, the file system type from mountinfo. `None` where
/// the kernel does not say (tmpfs, FUSE and network file systems have no block device).
pub fn device_and_fs(f: &File) -> (Option<String>, Option<String>) {
    let Ok(meta) = f.metadata() else {
        return (None, None);
    };
    let is_blk = std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type());
    let dev = if is_blk { meta.rdev() } else { meta.dev() };
    let (ma, mi) = major_minor(dev);
    let name = std::fs::read_link(format!("/sys/dev/block/{ma}:{mi}"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    if is_blk {
        return (name, None);
    }
    // mountinfo's third field is the st_dev of the mount, so the match is exact even for bind
    // mounts and nested mount points
    let want = format!("{ma}:{mi}");
    let fs = std::fs::read_to_string("/proc/self/mountinfo")
        .ok()
        .and_then(|text| {
            text.lines().find_map(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                let sep = f.iter().position(|x| *x == "-")?;
                (f.get(2) == Some(&want.as_str()))
                    .then(|| f.get(sep + 1).map(|s| s.to_string()))
                    .flatten()
            })
        });
    (name, fs)
}

/// Whether the block device `device` (`vda`, `sdb1`, `dm-3`) says it spins, from sysfs; a
/// partition asks its disk. `None` where sysfs does not say.
pub fn rotational(device: &str) -> Option<bool> {
    if device.is_empty() || device.contains('/') || device.starts_with('.') {
        return None;
    }
    ["queue/rotational", "../queue/rotational"]
        .iter()
        .find_map(|rel| std::fs::read_to_string(format!("/sys/class/block/{device}/{rel}")).ok())
        .map(|s| s.trim() == "1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_alignment_is_a_power_of_two() {
        let f = tempfile::tempfile().unwrap();
        let a = file_dio_alignment(&f);
        assert!(a.is_power_of_two() && (512..=65536).contains(&a), "{a}");
    }

    #[test]
    fn a_file_on_the_work_tree_names_its_file_system() {
        let f = tempfile::tempfile_in(".").unwrap();
        let (_, fs) = device_and_fs(&f);
        let fs = fs.expect("mountinfo names the file system of the current directory");
        assert!(!fs.is_empty() && !fs.contains(' '), "{fs}");
    }

    #[test]
    fn free_space_is_reported() {
        assert!(free_bytes(Path::new(".")).unwrap() > 0);
        assert!(free_bytes(Path::new("/no/such/dir")).is_none());
    }
}
